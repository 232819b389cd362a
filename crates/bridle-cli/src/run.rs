//! `bridle run`: one agent turn, printed as it happens.

use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

use anyhow::{bail, Context};
use bridle_core::clock::SystemClock;
use bridle_core::config::{ProviderConfig, ProviderKind};
use bridle_core::engine::{Engine, EngineConfig, EngineDeps, SessionSpec};
use bridle_core::provider;
use bridle_core::tools::builtin_registry;
use bridle_protocol::{AbortReason, Event, Op};

use crate::cli::{Global, OnAsk, RunArgs, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE};
use crate::setup::Setup;

pub async fn run(global: &Global, args: &RunArgs) -> anyhow::Result<u8> {
    let mut setup = Setup::load(global)?;
    let prompt = match &args.prompt {
        Some(p) => p.clone(),
        None if !std::io::stdin().is_terminal() => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).context("cannot read the prompt from stdin")?;
            text
        }
        None => {
            eprintln!("bridle run: give a prompt as an argument or on stdin");
            return Ok(EXIT_USAGE);
        }
    };
    if prompt.trim().is_empty() {
        eprintln!("bridle run: the prompt is empty");
        return Ok(EXIT_USAGE);
    }
    if let Some(mode) = args.mode {
        setup.config.mode = mode;
    }
    if let Some(n) = args.max_steps {
        setup.config.limits.max_steps = n;
    }
    // Until the guard asks, --on-ask has nothing to answer; it is parsed so scripts can set it.
    let _on_ask = args.on_ask.unwrap_or(if std::io::stdin().is_terminal() { OnAsk::Prompt } else { OnAsk::Deny });
    let provider_config = provider_config(&setup, args)?;
    let api_key = std::env::var(provider_config.kind.api_key_variable()).ok().filter(|k| !k.is_empty());
    setup.config.provider = Some(provider_config.clone());

    let provider: Arc<dyn provider::ModelProvider> = provider::from_config(&provider_config, api_key)?.into();
    let deps = EngineDeps {
        provider,
        tools: Arc::new(builtin_registry()?),
        store: setup.store()?,
        clock: Arc::new(SystemClock),
    };
    let mut config = EngineConfig::from_config(&setup.config, setup.workspace.clone(), setup.data_dir.clone());
    config.home = Setup::home();
    let spec = match &args.session {
        Some(id) => SessionSpec::Resume(id.clone()),
        None => SessionSpec::New,
    };
    let (engine, mut events) = Engine::spawn(config, deps, spec)?;
    if !args.json {
        eprintln!("session {}", engine.session_id());
    }
    engine.submit(Op::UserMessage { text: prompt }).await?;
    drive(&engine, &mut events, args.json).await
}

fn provider_config(setup: &Setup, args: &RunArgs) -> anyhow::Result<ProviderConfig> {
    let configured = setup.config.provider.clone();
    let kind = match (args.provider, &configured) {
        (Some(kind), _) => kind,
        (None, Some(p)) => p.kind,
        (None, None) => bail!(
            "no provider: pass --provider openai|anthropic --model M (and --base-url), or set [provider] in the config"
        ),
    };
    let same_kind = configured.filter(|p| p.kind == kind);
    let base_url = args.base_url.clone().or_else(|| same_kind.as_ref().map(|p| p.base_url.clone())).unwrap_or_else(
        || match kind {
            ProviderKind::Openai => "https://api.openai.com/v1".into(),
            ProviderKind::Anthropic => "https://api.anthropic.com".into(),
        },
    );
    let Some(model) = args.model.clone().or_else(|| same_kind.as_ref().map(|p| p.model.clone())) else {
        bail!("no model: pass --model or set provider.model in the config");
    };
    Ok(ProviderConfig {
        kind,
        base_url,
        model,
        context_window: same_kind.as_ref().and_then(|p| p.context_window),
        max_output_tokens: same_kind.map(|p| p.max_output_tokens).unwrap_or(8192),
    })
}

/// Prints events until the turn ends; Ctrl-C interrupts the turn (and still waits for its end,
/// so the history is left consistent).
async fn drive(engine: &Engine, events: &mut tokio::sync::mpsc::Receiver<Event>, json: bool) -> anyhow::Result<u8> {
    let mut interrupted = false;
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = tokio::signal::ctrl_c(), if !interrupted => {
                interrupted = true;
                engine.submit(Op::Interrupt).await?;
                continue;
            }
        };
        let Some(event) = event else { bail!("the engine stopped before the turn ended") };
        if json {
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, &event)?;
            writeln!(out)?;
            out.flush()?;
        } else {
            print_human(&event)?;
        }
        match event {
            Event::TurnCompleted { .. } => return Ok(0),
            Event::TurnAborted { reason: AbortReason::Interrupted, .. } => return Ok(EXIT_INTERRUPTED),
            Event::TurnAborted { .. } => return Ok(EXIT_ERROR),
            _ => {}
        }
    }
}

fn print_human(event: &Event) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match event {
        Event::AssistantDelta { text, .. } => {
            write!(out, "{text}")?;
            out.flush()?;
        }
        Event::AssistantMessage { .. } => writeln!(out)?,
        Event::ToolCallBegin { call, .. } => eprintln!("-> {} {}", call.name, call.arguments),
        Event::ToolCallEnd { status, duration_ms, result, .. } => {
            let first = result.output.lines().next().unwrap_or_default();
            eprintln!("<- {status:?} in {duration_ms} ms: {first}");
        }
        Event::Error { info, .. } => eprintln!("error [{}]: {}", info.code, info.message),
        Event::TurnAborted { reason, .. } => eprintln!("turn ended early: {reason:?}"),
        _ => {}
    }
    Ok(())
}
