//! The session's side of its background processes ([`crate::processes::Observer`]): each start
//! and end becomes one `process` audit row and a [`Event::ProcessChanged`] for the window; a
//! resumed session's model is told which processes ended when it was last closed.
//!
//! Rule: what a process did is on the record when it ends — how it ended, the hosts it reached
//! (their own `network` rows say more), the files it changed.

use bridle_protocol::{Event, HistoryItem, ProcessInfo, ProcessState};
use serde_json::json;

use super::events::EventSender;
use super::session::Session;
use crate::audit::{AuditKind, AuditRecord, AuditSink};
use crate::clock::Clock;
use crate::network::HostUse;
use crate::store::ProcessRow;

impl Session {
    /// Tells the model of a resumed session which of its background processes ended when it was
    /// last closed (once).
    pub(crate) async fn tell_ended_processes(&self) {
        match self.deps.store.untold_processes(&self.id) {
            Ok(rows) => {
                if let Some(note) = super::processes::ended_note(&rows) {
                    self.record_note(note).await;
                }
            }
            Err(e) => tracing::warn!("session {}: its ended processes cannot be read: {e}", self.id),
        }
    }
}

/// Records and announces one session's process changes.
pub(crate) struct ProcessWatch {
    pub session_id: String,
    pub audit: AuditSink,
    pub events: EventSender,
    pub clock: std::sync::Arc<dyn Clock>,
}

impl crate::processes::Observer for ProcessWatch {
    fn changed(&self, process: &ProcessInfo, hosts: &[HostUse]) {
        let status = match process.state {
            ProcessState::Running => "started",
            state => state.as_str(),
        };
        if self.audit.is_enabled() {
            let reached: Vec<String> =
                hosts.iter().filter(|h| h.allowed).map(|h| format!("{}:{}", h.host, h.port)).collect();
            let row = AuditRecord::new(AuditKind::Process, self.clock.now_ms())
                .session(self.session_id.clone())
                .tool("bash")
                .status(status)
                .payload(json!({
                    "processId": process.id,
                    "command": process.command,
                    "exitCode": process.exit_code,
                    "changed": process.changed,
                    "hostsReached": reached,
                }));
            self.audit.record(row);
            if let Some(message) = self.audit.take_failure() {
                let info = bridle_protocol::ErrorInfo {
                    code: bridle_protocol::ErrorCode::AuditWriteFailed,
                    message,
                    retryable: false,
                };
                self.events.try_send(Event::Error { session_id: self.session_id.clone(), info });
            }
        }
        let event = Event::ProcessChanged { session_id: self.session_id.clone(), process: process.clone() };
        if !self.events.try_send(event) {
            tracing::debug!("process {} of session {}: the window did not hear of it", process.id, self.session_id);
        }
    }
}

/// What the model of a resumed session is told of the processes that ended when it was last
/// closed (none: nothing to tell).
pub(crate) fn ended_note(rows: &[ProcessRow]) -> Option<HistoryItem> {
    if rows.is_empty() {
        return None;
    }
    let listed: Vec<String> = rows.iter().map(|r| format!("{} (`{}`, {})", r.id, r.command, r.state)).collect();
    Some(HistoryItem::User {
        text: format!(
            "[Bridle] This session's background processes ended when it was last closed: {}. Start them again if they are still needed.",
            listed.join(", ")
        ),
    })
}
