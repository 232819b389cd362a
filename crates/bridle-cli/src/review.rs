//! `bridle sessions review ID [--turn T] [--json]` and `--keep | --reject | --unreject H...`:
//! a turn's hunks listed, or decided, from outside a running session (DESIGN §10.1).
//!
//! Rule: like an undo, a decision is made under the session's lease (never under the feet of a
//! process that has it open), in the session's own workspace judged by the user's sandbox; each
//! decision is audited as the CLI's, and the model hears of the rejects when the session next
//! gets a message.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use bridle_core::changes::{BlobStore, ReviewError, Reviewer, SessionFiles};
use bridle_core::clock::{Clock, SystemClock};
use bridle_core::store::Store;
use bridle_protocol::{ReviewDecision, TurnReview};

use crate::cli::EXIT_ERROR;
use crate::terminal::safe;

pub async fn review(
    setup: &bridle_core::wiring::Wiring,
    store: &Arc<Store>,
    id: &str,
    turn: Option<&str>,
    decision: Option<(ReviewDecision, &Vec<String>)>,
    json: bool,
) -> anyhow::Result<u8> {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("bridle sessions review: {}", safe(&e.to_string()));
        Ok(EXIT_ERROR)
    };
    let info = match store.session(id) {
        Ok(info) => info,
        Err(e) => return fail(&e),
    };
    let lease = match bridle_core::store::SessionLease::try_acquire(&setup.data_dir, id) {
        Ok(Some(lease)) => lease,
        Ok(None) => return fail(&"the session is open in another process (the app?); review it there"),
        Err(e) => return fail(&format!("cannot take the session's lease: {e}")),
    };
    let engine = setup.engine_config();
    let workspace = match bridle_core::workspace::Workspace::open(
        Path::new(&info.workspace),
        engine.home.clone(),
        &engine.data_dir,
        &engine.extra_sensitive,
    ) {
        Ok(workspace) => Arc::new(workspace),
        Err(e) => return fail(&format!("cannot open the session's workspace {}: {e}", info.workspace)),
    };
    let blobs = BlobStore::new(&setup.data_dir);
    let r = Reviewer { store, blobs: &blobs, workspace: &workspace, session_id: id };
    let answer: Result<TurnReview, ReviewError> = match decision {
        None => bridle_core::changes::review_turn(r, turn),
        Some((decision, ids)) => {
            let clock = Arc::new(SystemClock);
            let now = clock.now_ms();
            let files = Arc::new(SessionFiles::new(id, store.clone(), &setup.data_dir, clock));
            match bridle_core::changes::decide(r, files, decision, ids, now).await {
                Ok(decided) => {
                    let audit = setup.audit()?;
                    for row in bridle_core::engine::review_records(id, &decided, decision, "cli", now) {
                        audit.record(row);
                    }
                    crate::drive::flush(&audit);
                    Ok(decided.review)
                }
                Err(e) => Err(e),
            }
        }
    };
    drop(lease);
    let review = match answer {
        Ok(review) => review,
        Err(e) => return fail(&e),
    };
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string(&review)?)?;
        return Ok(0);
    }
    writeln!(out, "turn {}: {} hunk(s), {} decided", review.turn_id, review.hunks.len(), review.decided)?;
    for h in &review.hunks {
        let state = serde_json::to_value(h.state)?;
        let origin = match &h.call.command {
            Some(command) => format!("{} `{}`", h.call.tool, command),
            None => h.call.tool.clone(),
        };
        writeln!(
            out,
            "{:>6}  {}:{}+{}  {}  {}",
            h.id,
            safe(&h.path),
            h.range.start,
            h.range.lines,
            state.as_str().unwrap_or_default(),
            safe(&origin)
        )?;
    }
    Ok(0)
}
