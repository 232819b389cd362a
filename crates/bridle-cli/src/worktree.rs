//! `bridle sessions archive|restore|apply|merge` and `bridle run --worktree`: a session's own
//! worktree (DESIGN §16), each step done by core's [`bridle_core::desk`] and audited there.

use std::io::Write;
use std::sync::Arc;

use bridle_core::clock::{Clock, SystemClock};
use bridle_core::desk::{self, DeskError};
use bridle_core::store::Store;
use bridle_core::wiring::Wiring;

use crate::cli::{SessionsAction, EXIT_ERROR};
use crate::terminal::safe;

/// One step on session `id`'s worktree, as `action` says; exit 1 when it refused.
pub fn step(setup: &Wiring, store: &Arc<Store>, action: &SessionsAction, id: &str) -> anyhow::Result<u8> {
    let audit = setup.audit()?;
    let now = SystemClock.now_ms();
    let mut out = std::io::stdout().lock();
    let (verb, done) = match action {
        SessionsAction::Archive { .. } => ("archive", desk::archive(store, &audit, &setup.data_dir, id, now).map(|()| {
            format!("archived session {id}: its worktree is saved under refs/bridle/archive/{id} and its folder removed")
        })),
        SessionsAction::Restore { .. } => ("restore", desk::restore(store, &audit, &setup.data_dir, id, now).map(|()| {
            format!("restored session {id} in {}", desk::worktree_path(&setup.data_dir, id).display())
        })),
        SessionsAction::Apply { dry_run, .. } => ("apply", desk::apply(store, &audit, id, *dry_run, now).map(|applied| {
            if *dry_run {
                let _ = out.write_all(applied.patch.as_bytes());
            }
            let files = applied.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ");
            match (dry_run, applied.files.is_empty()) {
                (_, true) => format!("session {id} changed nothing since its base"),
                (true, false) => format!("would apply to the main checkout: {files}"),
                (false, false) => format!("applied to the main checkout, uncommitted: {files}"),
            }
        })),
        SessionsAction::Merge { .. } => {
            ("merge", desk::merge(store, &audit, id, now).map(|commit| format!("merged as {commit}")))
        }
        _ => unreachable!("only the worktree steps come here"),
    };
    crate::drive::flush(&audit);
    match done {
        Ok(said) => {
            eprintln!("{}", safe(&said));
            Ok(0)
        }
        Err(e) => {
            eprintln!("bridle sessions {verb}: {}", safe(&e.to_string()));
            Ok(EXIT_ERROR)
        }
    }
}

/// Makes the worktree of a new session from the main checkout `setup.workspace`, which then
/// becomes the session's workspace; the session's id.
pub fn new_session(setup: &mut Wiring, name: &str, base: Option<&str>) -> anyhow::Result<String> {
    let audit = setup.audit()?;
    let name = Some(name).filter(|n| !n.is_empty());
    let now = SystemClock.now_ms();
    let made = desk::new_session(&*setup.store()?, &audit, &setup.data_dir, &setup.workspace, name, base, now);
    crate::drive::flush(&audit);
    let (id, worktree) = made.map_err(|e: DeskError| anyhow::anyhow!("cannot make the worktree: {e}"))?;
    eprintln!("worktree {} on {}", safe(&worktree.path.display().to_string()), safe(&worktree.branch));
    setup.workspace = worktree.path;
    Ok(id)
}
