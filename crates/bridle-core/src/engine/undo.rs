//! The session's files: watching the workspace for changes made behind its back, what a change
//! voids, and undoing a turn's changes.
//!
//! Rules: an undo runs between turns, puts back exactly what the turn's checkpoints hold (a file
//! changed since is refused, never overwritten) and is audited file by file; a changed exec-config
//! file voids the session's command approvals, whoever changed it.

use bridle_protocol::{ErrorCode, Event};

use super::session::Session;
use crate::audit::AuditKind;

impl Session {
    /// Starts watching the workspace: a file the session read or wrote that changes on disk
    /// behind its back is announced ([`Event::FilesChangedOnDisk`]). Without a watch (no
    /// inotify slots left, say) the stale-write check still holds; only the announcement is lost.
    pub(crate) fn start_watching(&self) {
        let (events, session_id) = (self.events.clone(), self.id.clone());
        let report = move |paths: Vec<String>| {
            events.try_send(Event::FilesChangedOnDisk { session_id: session_id.clone(), paths });
        };
        match crate::changes::watch(self.calls().workspace().clone(), self.files.clone(), report) {
            Ok(watch) => *self.watch.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(watch),
            Err(e) => tracing::warn!("session {}: the workspace is not watched: {e}", self.id),
        }
    }

    /// Files changed at `paths` (a tool's change, or an undo): the permit forgets what a
    /// changed exec-config file voids.
    pub(crate) async fn files_changed<'a>(&self, paths: impl Iterator<Item = &'a str>) {
        if let Some(problem) = self.calls().permit().files_changed(paths) {
            self.error(problem.code, problem.message, problem.retryable).await;
        }
    }

    /// Undoes a turn's file changes (the last turn's when `None`), whole or for `paths`;
    /// called between turns. Every file put back or removed is audited; the window hears
    /// [`Event::Undone`]. Answers whether the undo ran (a failure is an error event).
    pub(crate) async fn undo(&self, turn_id: Option<&str>, paths: &[String]) -> bool {
        let workspace = self.calls().workspace().clone();
        let blobs = crate::changes::BlobStore::new(&self.config.data_dir);
        let now = self.deps.clock.now_ms();
        let report = match crate::changes::undo(&self.deps.store, &blobs, &workspace, &self.id, turn_id, paths, now) {
            Ok(report) => report,
            Err(e) => {
                self.error(ErrorCode::UndoFailed, e, false).await;
                return false;
            }
        };
        for (path, status) in
            report.restored.iter().map(|p| (p, "restored")).chain(report.removed.iter().map(|p| (p, "removed")))
        {
            self.audit(AuditKind::Undone, Some(&report.turn_id), |r| {
                r.status(status).payload(serde_json::json!({"path": path}))
            });
        }
        self.files_changed(report.restored.iter().chain(&report.removed).map(String::as_str)).await;
        // The undo already stored the stamps; this session's memory of them follows.
        for (path, stamp) in &report.stamps {
            self.files.saw(std::path::Path::new(path), *stamp);
        }
        if let Some(note) = report.note_item() {
            self.record_note(note).await;
        }
        let refused = report
            .refused
            .iter()
            .map(|r| bridle_protocol::UndoRefusal { path: r.path.clone(), reason: r.reason.clone() })
            .collect();
        self.emit(Event::Undone {
            session_id: self.id.clone(),
            turn_id: report.turn_id,
            restored: report.restored,
            removed: report.removed,
            refused,
        })
        .await;
        true
    }
}
