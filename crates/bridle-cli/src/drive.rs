//! Starting an engine from the command line and following its turn: the part `bridle run` and
//! `bridle approvals approve|deny` share.
//!
//! Rule: approval requests are answered as `--on-ask` says — on the terminal, approve, deny, or
//! deferred (left pending in the store, exit 3) — and always with the request's call hash, so an
//! answer can only ever run the call it was given for.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use anyhow::bail;
use bridle_core::audit::AuditSink;
use bridle_core::clock::SystemClock;
use bridle_core::config::ProviderConfig;
use bridle_core::engine::{Engine, EngineConfig, EngineDeps, SessionSpec};
use bridle_core::mcp::McpHub;
use bridle_protocol::{AbortReason, ApprovalAnswer, ApprovalRequest, Event, Op};
use tokio::sync::mpsc::Receiver;

use crate::cli::{DriveArgs, OnAsk, ProviderArgs, EXIT_ASK, EXIT_ERROR, EXIT_INTERRUPTED};
use crate::terminal::safe;
use bridle_core::wiring::Wiring;

/// `--on-ask`, or its default: prompt on a terminal, deny otherwise.
pub fn on_ask(drive: &DriveArgs) -> OnAsk {
    drive.on_ask.unwrap_or(if std::io::stdin().is_terminal() { OnAsk::Prompt } else { OnAsk::Deny })
}

/// Starts an engine for `spec` with the provider from the flags or the config, and the
/// config's MCP servers (the hub must be kept until the engine is done).
pub async fn start(
    setup: &mut Wiring,
    provider_args: &ProviderArgs,
    drive: &DriveArgs,
    spec: SessionSpec,
) -> anyhow::Result<(Engine, Receiver<Event>, AuditSink, Arc<McpHub>)> {
    start_as("cli", setup, provider_args, drive, spec).await
}

/// [`start`] for the front end `front_end` (named in the session's audit).
pub async fn start_as(
    front_end: &'static str,
    setup: &mut Wiring,
    provider_args: &ProviderArgs,
    drive: &DriveArgs,
    spec: SessionSpec,
) -> anyhow::Result<(Engine, Receiver<Event>, AuditSink, Arc<McpHub>)> {
    if let Some(n) = drive.max_steps {
        setup.config.limits.max_steps = n;
    }
    let provider_config = provider_config(setup, provider_args)?;
    setup.config.provider = Some(provider_config.clone());
    let audit = setup.audit()?;
    let hub = setup.mcp();
    let deps = EngineDeps {
        provider: setup.provider(&provider_config)?,
        tools: Arc::new(bridle_core::tools::builtin_registry()?),
        mcp: Some(hub.clone()),
        store: setup.store()?,
        clock: Arc::new(SystemClock),
        audit: audit.clone(),
    };
    let config = EngineConfig { defer_approvals: on_ask(drive) == OnAsk::Defer, front_end, ..setup.engine_config() };
    let (engine, events) = Engine::spawn(config, deps, spec)?;
    Ok((engine, events, audit, hub))
}

/// Closes the session (its background processes end and are recorded), then waits for the audit
/// rows to be committed before the process exits.
pub async fn finish(engine: &Engine, audit: &AuditSink) {
    engine.shutdown().await;
    flush(audit);
}

/// Waits for the audit rows written so far to be committed.
pub fn flush(audit: &AuditSink) {
    if let Err(e) = audit.flush() {
        eprintln!("bridle: the audit log could not be written: {e}");
    }
}

/// The provider from the flags, filled in from the config's `[provider]` of the same kind.
pub fn provider_config(setup: &Wiring, args: &ProviderArgs) -> anyhow::Result<ProviderConfig> {
    let configured = setup.config.provider.clone();
    let kind = match (args.provider, &configured) {
        (Some(kind), _) => kind,
        (None, Some(p)) => p.kind,
        (None, None) => bail!(
            "no provider: pass --provider openai|anthropic --model M (and --base-url), or set [provider] in the config"
        ),
    };
    let same_kind = configured.filter(|p| p.kind == kind);
    let base_url = args
        .base_url
        .clone()
        .or_else(|| same_kind.as_ref().map(|p| p.base_url.clone()))
        .unwrap_or_else(|| kind.default_base_url().into());
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
/// so the history is left consistent). With `message_follows`, a turn the engine resumed from an
/// earlier process is followed through and the turn of the new message decides the exit code.
pub async fn follow(
    engine: &Engine,
    events: &mut Receiver<Event>,
    drive: &DriveArgs,
    message_follows: bool,
) -> anyhow::Result<u8> {
    let on_ask = on_ask(drive);
    let mut skip_end_of = engine.resumed_turn().filter(|_| message_follows).map(String::from);
    let mut interrupted = false;
    // One listener for the whole turn: a Ctrl-C that comes while an event is being handled waits
    // in it (a listener made anew per event would miss it).
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = &mut ctrl_c, if !interrupted => {
                interrupted = true;
                engine.submit(Op::Interrupt).await?;
                continue;
            }
        };
        let Some(event) = event else { bail!("the engine stopped before the turn ended") };
        // A child's events come in the parent's stream, naming the child (DESIGN §16.1): printed
        // with its id, its questions answered here; its turns end nothing of this run.
        if event.session_id() != engine.session_id() {
            follow_child(engine, &event, drive, on_ask).await?;
            continue;
        }
        if drive.json {
            print_json(&event)?;
        } else {
            print_human(&event)?;
        }
        if let Event::Warning { code, message, .. } = &event {
            eprintln!("warning [{code}]: {}", safe(message));
        }
        if let Event::StreamRestarted { attempt, max_attempts, reason, .. } = &event {
            // Said on stderr in both modes: what was streamed so far is void, the answer starts over.
            eprintln!("reconnecting ({attempt}/{max_attempts}): {}; the answer starts over", safe(reason));
        }
        let code = match &event {
            Event::ApprovalRequested { request, .. } => {
                if let Some(answer) = answer_for(on_ask, request).await {
                    engine.submit(answer).await?;
                }
                None
            }
            Event::TurnCompleted { .. } => Some(0),
            // A built-in slash command (`/compact`, `/mode plan`) ran instead of a turn.
            Event::CommandDone { ok, .. } => Some(if *ok { 0 } else { EXIT_ERROR }),
            Event::TurnAborted { reason: AbortReason::Interrupted, .. } => Some(EXIT_INTERRUPTED),
            Event::TurnAborted { .. } => Some(EXIT_ERROR),
            Event::TurnSuspended { approval_ids, .. } => {
                if !drive.json {
                    eprintln!(
                        "waiting for approval: {} (answer with `bridle approvals approve|deny ID`)",
                        approval_ids.join(", ")
                    );
                }
                Some(EXIT_ASK)
            }
            _ => None,
        };
        let Some(code) = code else { continue };
        let ended = match &event {
            Event::TurnCompleted { turn_id, .. }
            | Event::TurnAborted { turn_id, .. }
            | Event::TurnSuspended { turn_id, .. } => turn_id.clone(),
            _ => String::new(),
        };
        if skip_end_of.as_deref() == Some(ended.as_str()) {
            skip_end_of = None;
            continue;
        }
        return Ok(code);
    }
}

/// One event of a child session: JSON as it is (it names the child), or a line with the child's
/// id; a question of the child is answered as the run's own are.
async fn follow_child(engine: &Engine, event: &Event, drive: &DriveArgs, on_ask: OnAsk) -> anyhow::Result<()> {
    if drive.json {
        print_json(event)?;
    } else {
        let who: String = event.session_id().chars().take(8).collect();
        let line = match event {
            // Whole messages, not deltas: a child's text would cut into the parent's.
            Event::AssistantMessage { text, .. } if !text.trim().is_empty() => Some(safe(text.trim()).into_owned()),
            _ => call_line(event),
        };
        if let Some(line) = line {
            eprintln!("[agent {who}] {line}");
        }
    }
    if let Event::ApprovalRequested { request, .. } = event {
        if on_ask == OnAsk::Prompt {
            eprintln!("\nagent {} of this session asks:", event.session_id());
        }
        if let Some(answer) = answer_for(on_ask, request).await {
            engine.submit(answer).await?;
        }
    }
    Ok(())
}

/// `event` as one line of JSON on stdout.
fn print_json(event: &Event) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, event)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

async fn answer_for(on_ask: OnAsk, request: &ApprovalRequest) -> Option<Op> {
    let (decision, feedback) = match on_ask {
        OnAsk::Defer => return None,
        OnAsk::Approve => (ApprovalAnswer::ApproveOnce, None),
        OnAsk::Deny => (ApprovalAnswer::Deny, Some("denied by `--on-ask deny`".to_string())),
        OnAsk::Prompt => (prompt(request).await, None),
    };
    Some(Op::ResolveApproval {
        approval_id: request.id.clone(),
        decision,
        feedback,
        edited_arguments: None,
        call_hash: Some(request.call_hash.clone()),
    })
}

/// Asks on the terminal; anything but a clear yes is a deny. What the model wrote is shown
/// through [`safe`], so it cannot repaint the question.
async fn prompt(request: &ApprovalRequest) -> ApprovalAnswer {
    eprintln!("\n{}", safe(&request.subject.sentence()));
    for f in &request.findings {
        eprintln!("  {:?} [{}:{}] {}", f.severity, f.guardian, f.rule, safe(&f.message));
    }
    if let Some(preview) = &request.preview {
        eprintln!("{}", safe(preview));
    }
    eprint!("approve? [y]es once / [s]ession / [a]lways / [N]o: ");
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await;
    match line.ok().and_then(|l| l.ok()).map(|l| l.trim().to_ascii_lowercase()).as_deref() {
        Some("y" | "yes") => ApprovalAnswer::ApproveOnce,
        Some("s" | "session") => ApprovalAnswer::ApproveSession,
        Some("a" | "always") => ApprovalAnswer::ApproveAlways,
        _ => ApprovalAnswer::Deny,
    }
}

fn print_human(event: &Event) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match event {
        Event::AssistantDelta { text, .. } => {
            write!(out, "{}", safe(text))?;
            out.flush()?;
        }
        Event::AssistantMessage { .. } => writeln!(out)?,
        // The partial line ends here; the retried answer starts on a line of its own.
        Event::StreamRestarted { .. } => writeln!(out)?,
        Event::CommandDone { output, .. } => writeln!(out, "{}", safe(output))?,
        Event::AgentUpdated { agent, .. } => {
            let mut line = format!(
                "agent {} ({}): {}",
                agent.id,
                safe(&bridle_protocol::AgentInfo::label(agent)),
                agent.state.as_str()
            );
            if let Some(error) = &agent.error {
                line.push_str(&format!(" — {}", safe(error)));
            }
            eprintln!("{line}")
        }
        _ => {
            if let Some(line) = call_line(event) {
                eprintln!("{line}");
            }
        }
    }
    Ok(())
}

/// The line on stderr of a call's step, a question, an error or an early end.
fn call_line(event: &Event) -> Option<String> {
    Some(match event {
        Event::ToolCallBegin { call, .. } => format!("-> {} {}", safe(&call.name), safe(&call.arguments)),
        Event::ToolCallEnd { status, duration_ms, result, .. } => {
            let first = result.output.lines().next().unwrap_or_default();
            format!("<- {status:?} in {duration_ms} ms: {}", safe(first))
        }
        Event::ApprovalRequested { request, .. } => {
            format!("?  approval {} for {}", request.id, safe(&request.subject.headline()))
        }
        Event::ApprovalResolved { approval_id, decision, source, .. } => {
            format!("!  approval {approval_id}: {decision:?} ({source:?})")
        }
        Event::Error { info, .. } => format!("error [{}]: {}", info.code, safe(&info.message)),
        Event::TurnAborted { reason, .. } => format!("turn ended early: {reason:?}"),
        _ => return None,
    })
}
