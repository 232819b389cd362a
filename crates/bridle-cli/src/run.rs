//! `bridle run`: one agent turn, printed as it happens.

use std::io::{IsTerminal, Read};

use anyhow::Context;
use bridle_core::engine::SessionSpec;
use bridle_protocol::Op;

use crate::cli::{Global, RunArgs, EXIT_USAGE};
use crate::drive;
use crate::setup;

pub async fn run(global: &Global, args: &RunArgs) -> anyhow::Result<u8> {
    let mut setup = setup::load(global)?;
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
        if let Err(refused) = setup.config.check_mode(mode) {
            eprintln!("bridle run: {refused}");
            return Ok(EXIT_USAGE);
        }
        setup.config.mode = mode;
    }
    let spec = match (&args.session, &args.worktree) {
        (Some(id), _) => SessionSpec::Resume(id.clone()),
        // A new session whose worktree is made first: it starts as a resumed one, with nothing
        // in its history.
        (None, Some(name)) => {
            SessionSpec::Resume(crate::worktree::new_session(&mut setup, name, args.base.as_deref())?)
        }
        (None, None) => SessionSpec::New,
    };
    let (engine, mut events, audit, hub) = drive::start(&mut setup, &args.provider, &args.drive, spec).await?;
    if !args.drive.json {
        eprintln!("session {}", engine.session_id());
    }
    engine.submit(Op::UserMessage { text: prompt }).await?;
    let code = drive::follow(&engine, &mut events, &args.drive, true).await;
    drive::finish(&engine, &audit).await;
    setup.close_telemetry(&audit);
    hub.shutdown().await;
    code
}
