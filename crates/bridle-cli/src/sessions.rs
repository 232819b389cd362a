//! `bridle sessions`: the store, listed, shown and pruned, and a turn's file changes undone.

use std::io::Write;

use bridle_core::changes;
use bridle_core::clock::{Clock, SystemClock};
use bridle_core::compaction;

use crate::cli::{Global, SessionsAction, SessionsArgs, EXIT_ERROR};
use crate::setup;
use crate::terminal::safe;

pub async fn sessions(global: &Global, args: &SessionsArgs) -> anyhow::Result<u8> {
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
                    let state = match s.waiting_for {
                        Some(kind) => {
                            format!("{} ({} waiting, first: {})", s.state.as_str(), s.waiting, waiting_word(kind))
                        }
                        None => s.state.as_str().to_string(),
                    };
                    let mut place = match (&s.worktree, &s.branch) {
                        (Some(w), _) => format!("{} (worktree of {})", w.branch, w.origin),
                        (None, Some(branch)) => format!("{} ({branch})", s.workspace),
                        (None, None) => s.workspace.clone(),
                    };
                    // A child says whose it is, and where it stands as its parent knows it.
                    if let Some(agent) = &s.agent {
                        place = format!("{place} ({} of {}: {})", agent.label(), agent.parent_id, agent.state.as_str());
                    }
                    writeln!(
                        out,
                        "{}  {}  {}  {}  {}",
                        s.id,
                        when.unwrap_or_default(),
                        state,
                        safe(&place),
                        safe(&s.title)
                    )?;
                }
            }
        }
        SessionsAction::Show { id, json: true } => {
            match bridle_core::compaction::snapshot(&store, id, SystemClock.now_ms()) {
                Ok(snapshot) => writeln!(out, "{}", serde_json::to_string(&snapshot)?)?,
                Err(e) => {
                    eprintln!("bridle sessions show: {e}");
                    return Ok(EXIT_ERROR);
                }
            }
        }
        SessionsAction::Compact { id, provider } => return compact(&setup, &store, id, provider).await,
        SessionsAction::Review { id, turn, keep, reject, unreject, json } => {
            let decided = [
                (bridle_protocol::ReviewDecision::Keep, keep),
                (bridle_protocol::ReviewDecision::Reject, reject),
                (bridle_protocol::ReviewDecision::Unreject, unreject),
            ];
            let decision = decided.into_iter().find(|(_, ids)| !ids.is_empty());
            return crate::review::review(&setup, &store, id, turn.as_deref(), decision, *json).await;
        }
        SessionsAction::Show { id, json: false } => match store.history(id, SystemClock.now_ms()) {
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
        SessionsAction::Export { id, format, out: file } => return export(&setup, id, *format, file.as_deref()),
        SessionsAction::Archive { id }
        | SessionsAction::Restore { id }
        | SessionsAction::Apply { id, .. }
        | SessionsAction::Merge { id } => return crate::worktree::step(&setup, &store, &args.action, id),
        SessionsAction::Delete { id } => {
            if let Err(e) = changes::delete_session(&store, &setup.data_dir, id) {
                eprintln!("bridle sessions delete: {e}");
                return Ok(EXIT_ERROR);
            }
            eprintln!("deleted session {id}");
        }
        SessionsAction::Undo { id, turn, paths } => {
            // The session's workspace is judged by the same sandbox a session would have.
            let engine = setup.engine_config();
            let open = |root: &std::path::Path| {
                bridle_core::workspace::Workspace::open(
                    root,
                    engine.home.clone(),
                    &engine.data_dir,
                    &engine.extra_sensitive,
                )
            };
            let undone =
                changes::undo_stored(&store, &setup.data_dir, open, id, turn.as_deref(), paths, SystemClock.now_ms());
            let report = match undone {
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

/// What a waiting session waits for, as a list says it.
fn waiting_word(kind: bridle_protocol::WaitingFor) -> &'static str {
    match kind {
        bridle_protocol::WaitingFor::Approval => "a call",
        bridle_protocol::WaitingFor::Host => "a host",
        bridle_protocol::WaitingFor::Changes => "held changes",
    }
}

/// `bridle sessions export ID`: the session's audit rows with their hashes and the chain head.
fn export(
    setup: &bridle_core::wiring::Wiring,
    id: &str,
    format: crate::cli::ExportFormatArg,
    file: Option<&std::path::Path>,
) -> anyhow::Result<u8> {
    use bridle_core::audit::{AuditLog, ExportFormat};
    let log = AuditLog::open(&setup.data_dir)?;
    let export = match log.export_session(id, SystemClock.now_ms()) {
        Ok(export) => export,
        Err(e) => {
            eprintln!("bridle sessions export: {}", safe(&e.to_string()));
            return Ok(EXIT_ERROR);
        }
    };
    let format = match format {
        crate::cli::ExportFormatArg::Md => ExportFormat::Markdown,
        crate::cli::ExportFormatArg::Json => ExportFormat::Json,
    };
    let text = export.render(format);
    match file {
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
        Some(path) => {
            bridle_core::config::edit::write_atomically(path, text.as_bytes(), None)?;
            eprintln!(
                "exported {} item(s) of session {id} to {} (chain head: row {})",
                export.items.len(),
                path.display(),
                export.chain_head.id
            );
        }
    }
    Ok(0)
}

/// `bridle sessions compact ID`: the compaction a running session would make, made now.
async fn compact(
    setup: &bridle_core::wiring::Wiring,
    store: &bridle_core::store::Store,
    id: &str,
    provider_args: &crate::cli::ProviderArgs,
) -> anyhow::Result<u8> {
    let provider_config = crate::drive::provider_config(setup, provider_args)?;
    let Some(window) = provider_config.context_window else {
        eprintln!("bridle sessions compact: the model's context window is not known: set [provider] context_window");
        return Ok(EXIT_ERROR);
    };
    let provider = setup.provider(&provider_config)?;
    let engine = setup.engine_config();
    let tools = bridle_core::tools::builtin_registry()?.definitions();
    let stored = compaction::Stored {
        store,
        data_dir: &setup.data_dir,
        provider: provider.as_ref(),
        system: &engine.system_prompt,
        tools: &tools,
        window,
        config: &engine.compaction,
    };
    let now = SystemClock.now_ms();
    match compaction::compact_stored(&stored, id, now).await {
        Ok(Some(done)) => {
            let audit = setup.audit()?;
            let row = bridle_core::audit::AuditRecord::new(bridle_core::audit::AuditKind::Compaction, now)
                .session(id.to_string())
                .status("requested")
                .payload(serde_json::json!({
                    "tokensBefore": done.tokens_before,
                    "tokensAfter": done.tokens_after,
                    "masked": done.masked,
                    "summarized": done.summarized,
                }));
            audit.record(row);
            crate::drive::flush(&audit);
            let report = serde_json::json!({
                "tokensBefore": done.tokens_before,
                "tokensAfter": done.tokens_after,
                "masked": done.masked,
                "summarized": done.summarized,
            });
            println!("{report}");
            Ok(0)
        }
        Ok(None) => {
            println!(
                "{}",
                serde_json::json!({"tokensBefore": null, "tokensAfter": null, "masked": 0, "summarized": false})
            );
            eprintln!("bridle sessions compact: nothing to compact yet");
            Ok(0)
        }
        Err(e) => {
            eprintln!("bridle sessions compact: {}", safe(&e));
            Ok(EXIT_ERROR)
        }
    }
}
