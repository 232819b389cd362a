//! Watching the workspace for changes made behind the session's back (`notify`).
//!
//! Rule: only files the session has read or written are reported, and only when they no longer
//! look as the session last saw them — exactly the files whose next edit will be refused until
//! they are read again — once per new state, gathered over a short pause so a burst of writes is
//! one report. The session's own writes update what it saw first, so they are never reported.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use super::SessionFiles;
use crate::fs::Stamp;
use crate::workspace::Workspace;

/// How long changes are gathered before one report.
const PAUSE: Duration = Duration::from_millis(250);

/// A running watch; dropping it stops watching.
pub struct WorkspaceWatch {
    _watcher: notify::RecommendedWatcher,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for WorkspaceWatch {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Watches `workspace` for `files`' session; `report` gets the workspace-relative paths of files the
/// session saw that changed on disk since.
pub fn watch(
    workspace: Arc<Workspace>,
    files: Arc<SessionFiles>,
    report: impl Fn(Vec<String>) + Send + 'static,
) -> notify::Result<WorkspaceWatch> {
    let root: PathBuf = workspace.root().to_path_buf();
    let touched: Arc<Mutex<BTreeSet<PathBuf>>> = Arc::default();
    let sink = touched.clone();
    let watched_root = root.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        let mut touched = sink.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for path in event.paths {
            if let Ok(rel) = path.strip_prefix(&watched_root) {
                if !rel.starts_with(".git") {
                    touched.insert(rel.to_path_buf());
                }
            }
        }
    })?;
    watcher.watch(&root, RecursiveMode::Recursive)?;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::Builder::new().name("bridle-watch".into()).spawn(move || {
        // The state each file was last reported in, so one change is reported once.
        let mut reported: HashMap<PathBuf, Option<Stamp>> = HashMap::new();
        while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(PAUSE);
            let batch = std::mem::take(&mut *touched.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
            let mut changed = Vec::new();
            for rel in batch {
                let Some(seen) = files.seen(&rel) else { continue };
                let now = workspace.fs.stamp(&rel).ok().flatten();
                if now == Some(seen) || reported.get(&rel) == Some(&now) {
                    continue;
                }
                reported.insert(rel.clone(), now);
                changed.push(super::shown(&rel));
            }
            if !changed.is_empty() {
                report(changed);
            }
        }
    })?;
    Ok(WorkspaceWatch { _watcher: watcher, stop })
}
