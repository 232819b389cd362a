//! Every process a command starts, and those that outlive their call (DESIGN §4.2, §4.4).
//!
//! A command's processes are found and stopped as a group ([`group`]); a foreground `bash` call
//! ends them all before it answers. A background process belongs to its session
//! ([`SessionProcesses`]): it runs in the session's sandbox and network, keeps the end of its
//! output in a ring, and is recorded in the store while it runs.
//!
//! Rule: nothing outlives its session. A session closing stops its processes; a Bridle process
//! that dies (a crash, `kill -9`) leaves rows behind, and the next start of any front end ends
//! what they name ([`end_leftovers`]), identified by pid and start time, never by name.

mod background;
mod group;
pub(crate) mod network;
mod ring;

pub use background::{
    Observer, Output, SessionProcesses, Start, Unobserved, MAX_PER_SESSION, MAX_WAIT, RING_BYTES, START_WAIT,
};
#[cfg(test)]
pub(crate) use group::marked;
pub use group::{become_subreaper, is_running, kill_group, start_time, ProcessGroup, MARKER};

use bridle_protocol::{ProcessInfo, ProcessState};

use crate::store::{ProcessRow, Store, StoreError};

/// Why a background process could not be stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// The session has no background process of that id; `known` are the ids it has.
    #[error("no background process `{id}`{}", known_ones(.known))]
    Unknown {
        /// The id asked for.
        id: String,
        /// The session's processes' ids, oldest first.
        known: Vec<String>,
    },
    /// The stop could not be written to the process's row, so nothing was signalled.
    #[error("the stop cannot be recorded: {0}")]
    Record(StoreError),
}

fn known_ones(known: &[String]) -> String {
    match known.is_empty() {
        true => ": this session has started none".into(),
        false => format!("; this session's are {}", known.join(", ")),
    }
}

/// A process as its row records it (no output: that lives in the process that runs it).
pub fn info_of(row: &ProcessRow) -> ProcessInfo {
    let state = match row.state.as_str() {
        "exited" => ProcessState::Exited,
        "stopped" => ProcessState::Stopped,
        _ => ProcessState::Running,
    };
    ProcessInfo {
        id: row.id.clone(),
        session_id: row.session_id.clone(),
        command: row.command.clone(),
        state,
        started_at: row.started_at,
        ended_at: row.ended_at,
        exit_code: row.exit_code,
        tail: String::new(),
        changed: Vec::new(),
    }
}

/// Stops a recorded process from any Bridle process (`bridle processes stop`): its row is closed
/// first (`stopped`, so the process running it records the end as a stop), then its group and
/// what carries its marker get SIGTERM, and SIGKILL after the grace period. A row already
/// closed is left as it is.
pub async fn stop_recorded(store: &Store, row: &ProcessRow, now_ms: i64) -> Result<ProcessInfo, ProcessError> {
    if row.ended_at.is_some() {
        return Ok(info_of(row));
    }
    let mut ended = row.clone();
    ended.ended_at = Some(now_ms);
    ended.state = ProcessState::Stopped.as_str().into();
    store.end_process(&ended, true).map_err(ProcessError::Record)?;
    let (pid, started) = (u32::try_from(row.pid).unwrap_or(0), u64::try_from(row.pid_start).unwrap_or(0));
    if is_running(pid, started) {
        let mut group = ProcessGroup::new(Some(pid), row.call_id.clone());
        group.terminate();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while is_running(pid, started) && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        group.stop(std::time::Duration::ZERO).await;
    } else {
        group::kill_leftovers(pid, started, &row.call_id);
    }
    Ok(info_of(&ended))
}

/// How `process` stands, in words: `running for 12 s`, `exited with code 0 after 3 s`, `stopped
/// after 40 s`, `killed by a signal after 1 s`; `now_ms` is the time now.
pub fn state_words(process: &ProcessInfo, now_ms: i64) -> String {
    let secs = |until: i64| (until - process.started_at).max(0) / 1000;
    match (process.state, process.ended_at, process.exit_code) {
        (ProcessState::Running, _, _) => format!("running for {} s", secs(now_ms)),
        (ProcessState::Stopped, ended, _) => format!("stopped after {} s", secs(ended.unwrap_or(now_ms))),
        (ProcessState::Exited, ended, Some(code)) => {
            format!("exited with code {code} after {} s", secs(ended.unwrap_or(now_ms)))
        }
        (ProcessState::Exited, ended, None) => format!("killed by a signal after {} s", secs(ended.unwrap_or(now_ms))),
    }
}

/// Ends the background processes a Bridle process that is gone left running, and closes their
/// rows (`stopped`; their sessions' models are told when they resume). Rows of a Bridle process
/// that still runs are left alone. Returns how many were ended.
pub fn end_leftovers(store: &Store, now_ms: i64) -> usize {
    let rows = match store.open_processes() {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!("the background processes left by an earlier run cannot be read: {e}");
            return 0;
        }
    };
    let mut ended = 0;
    for mut row in rows {
        let owner = (u32::try_from(row.owner_pid).unwrap_or(0), u64::try_from(row.owner_start).unwrap_or(0));
        if is_running(owner.0, owner.1) {
            continue;
        }
        let (pid, started) = (u32::try_from(row.pid).unwrap_or(0), u64::try_from(row.pid_start).unwrap_or(0));
        group::kill_leftovers(pid, started, &row.call_id);
        row.ended_at = Some(now_ms);
        row.state = ProcessState::Stopped.as_str().into();
        if let Err(e) = store.end_process(&row, false) {
            tracing::warn!("process {} of session {}: its end was not recorded: {e}", row.id, row.session_id);
        }
        ended += 1;
    }
    ended
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn an_unknown_process_is_its_own_kind_named_with_the_ones_the_session_has() {
        let store = Arc::new(Store::open_in_memory().unwrap());
        let processes = SessionProcesses::new("s1", store, Arc::new(crate::clock::FixedClock(0)), Arc::new(Unobserved));
        let err = processes.stop("p9").await.unwrap_err();
        assert!(matches!(&err, ProcessError::Unknown { id, known } if id == "p9" && known.is_empty()), "{err:?}");
        assert_eq!(err.to_string(), "no background process `p9`: this session has started none");
        let some = ProcessError::Unknown { id: "p9".into(), known: vec!["p1".into(), "p2".into()] };
        assert_eq!(some.to_string(), "no background process `p9`; this session's are p1, p2");
    }
}
