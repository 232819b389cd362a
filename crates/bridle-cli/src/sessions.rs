//! `bridle sessions`: the store, listed, shown and pruned, and a turn's file changes undone.

use std::io::Write;

use bridle_core::changes;
use bridle_core::clock::{Clock, SystemClock};

use crate::cli::{Global, SessionsAction, SessionsArgs, EXIT_ERROR};
use crate::setup;
use crate::terminal::safe;

pub fn sessions(global: &Global, args: &SessionsArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    let store = setup.store()?;
    let mut out = std::io::stdout().lock();
    match &args.action {
        SessionsAction::List { json } => {
            for s in store.sessions()? {
                if *json {
                    writeln!(out, "{}", serde_json::to_string(&s)?)?;
                } else {
                    let when = chrono::DateTime::from_timestamp_millis(s.updated_at)
                        .map(|t| t.format("%Y-%m-%d %H:%M").to_string());
                    writeln!(
                        out,
                        "{}  {}  {}  {}",
                        s.id,
                        when.unwrap_or_default(),
                        safe(&s.workspace),
                        safe(&s.title)
                    )?;
                }
            }
        }
        SessionsAction::Show { id } => match store.history(id, SystemClock.now_ms()) {
            Ok(items) => {
                for item in items {
                    writeln!(out, "{}", serde_json::to_string(&item)?)?;
                }
            }
            Err(e) => {
                eprintln!("bridle sessions show: {e}");
                return Ok(EXIT_ERROR);
            }
        },
        SessionsAction::Delete { id } => {
            if let Err(e) = changes::delete_session(&store, &setup.data_dir, id) {
                eprintln!("bridle sessions delete: {e}");
                return Ok(EXIT_ERROR);
            }
            eprintln!("deleted session {id}");
        }
        SessionsAction::Undo { id, turn, paths } => {
            let report =
                match changes::undo_stored(&store, &setup.data_dir, id, turn.as_deref(), paths, SystemClock.now_ms()) {
                    Ok(report) => report,
                    Err(e) => {
                        eprintln!("bridle sessions undo: {}", safe(&e));
                        return Ok(EXIT_ERROR);
                    }
                };
            writeln!(out, "{}", serde_json::to_string(&report)?)?;
            if !report.refused.is_empty() {
                return Ok(EXIT_ERROR);
            }
        }
    }
    Ok(0)
}
