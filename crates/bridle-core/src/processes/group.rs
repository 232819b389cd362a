//! Finding and stopping every process a command started.
//!
//! A command's processes are its process group, plus descendants that left it (`setsid`,
//! daemons). Those carry the marker variable in their environment, which they inherit, so a
//! scan of `/proc` finds them; because Bridle is a child subreaper, orphans are re-parented to
//! it and can be reaped instead of lingering as zombies. A process is named by its pid and its
//! start time together ([`start_time`]), never by its name: a pid is reused, the pair is not.

use std::sync::Once;
use std::time::Duration;

use rustix::process::{kill_process, kill_process_group, Pid, Signal, WaitOptions};

/// How long a command's own wrappers may take to end after it before they count as left running.
const SETTLE: Duration = Duration::from_millis(150);

/// The environment variable that marks a command's processes.
pub const MARKER: &str = "BRIDLE_TOOL_CALL";

/// Makes this process the subreaper of its descendants (once).
pub fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
            tracing::warn!("cannot become a child subreaper: {e}");
        }
    });
}

/// Kills the process group `leader` leads (a hook or an MCP server started with
/// `process_group(0)`): the leader and everything it started that stayed in the group.
pub fn kill_group(leader: Option<u32>) {
    if let Some(pgid) = leader.and_then(|p| i32::try_from(p).ok()).and_then(Pid::from_raw) {
        let _ = kill_process_group(pgid, Signal::KILL);
    }
}

/// A running command's processes; dropping it kills them all.
pub struct ProcessGroup {
    pgid: Option<Pid>,
    call_id: String,
    stopped: bool,
}

impl ProcessGroup {
    /// The group `leader` leads, and the processes that carry `call_id`'s marker.
    pub fn new(leader: Option<u32>, call_id: String) -> Self {
        let pgid = leader.and_then(|p| i32::try_from(p).ok()).and_then(Pid::from_raw);
        Self { pgid, call_id, stopped: false }
    }

    /// Asks the group to end (SIGTERM).
    pub fn terminate(&self) {
        if let Some(pgid) = self.pgid {
            let _ = kill_process_group(pgid, Signal::TERM);
        }
        for pid in marked_processes(&self.call_id) {
            let _ = kill_process(pid, Signal::TERM);
        }
    }

    /// Stops whatever is left: SIGTERM, `grace`, then SIGKILL, then reaps. Returns how many
    /// processes were still running.
    pub async fn stop(&mut self, grace: Duration) -> usize {
        let mut left = survivors(self.pgid, &self.call_id);
        // What wraps the command (the sandbox's own helper, a shell) ends a moment after it: on
        // a busy machine, wait briefly before calling anything "left running".
        let settle = std::time::Instant::now() + SETTLE;
        while !left.is_empty() && !grace.is_zero() && std::time::Instant::now() < settle {
            tokio::time::sleep(Duration::from_millis(10)).await;
            left = survivors(self.pgid, &self.call_id);
        }
        if !left.is_empty() && !grace.is_zero() {
            self.terminate();
            tokio::time::sleep(grace).await;
        }
        self.kill_all();
        reap(&left);
        self.stopped = true;
        left.len()
    }

    fn kill_all(&self) {
        if let Some(pgid) = self.pgid {
            let _ = kill_process_group(pgid, Signal::KILL);
        }
        // Kill the escaped ones until none is left (a dying parent can fork once more).
        let mut seen = Vec::new();
        for _ in 0..5 {
            let marked = marked_processes(&self.call_id);
            if marked.is_empty() {
                break;
            }
            for pid in &marked {
                let _ = kill_process(*pid, Signal::KILL);
            }
            seen.extend(marked);
            std::thread::sleep(Duration::from_millis(20));
            reap(&seen);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if !self.stopped {
            self.kill_all();
        }
    }
}

/// Processes of the group or carrying the marker.
fn survivors(pgid: Option<Pid>, call_id: &str) -> Vec<Pid> {
    let mut pids = marked_processes(call_id);
    if let Some(pgid) = pgid {
        for pid in all_pids() {
            if process_group_of(pid) == Some(pgid) && !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
    pids
}

fn all_pids() -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).filter_map(Pid::from_raw).collect()
}

/// The process group of `pid` from `/proc/<pid>/stat` (field 5), for live, non-zombie processes.
fn process_group_of(pid: Pid) -> Option<Pid> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    // The command name (field 2) may hold spaces and parentheses: parse after its last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    fields.nth(1)?.parse::<i32>().ok().and_then(Pid::from_raw)
}

/// The processes still carrying `call_id`'s marker (for tests).
#[cfg(test)]
pub fn marked(call_id: &str) -> Vec<Pid> {
    marked_processes(call_id)
}

/// When `pid` started, in clock ticks after boot (`/proc/PID/stat`, field 22); `None` when no
/// such process lives (a zombie included).
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 2..].split_whitespace();
    if matches!(fields.next()?, "Z" | "X") {
        return None;
    }
    // After the state (field 3), field 22 is the 19th.
    fields.nth(18)?.parse().ok()
}

/// Whether the process `pid` that started at `started` still runs.
pub fn is_running(pid: u32, started: u64) -> bool {
    start_time(pid) == Some(started)
}

/// Kills what is left of a command whose runner is gone: the group `leader` led (when the leader
/// is still the process that started at `started`) and every process carrying `call_id`'s marker.
pub fn kill_leftovers(leader: u32, started: u64, call_id: &str) {
    if is_running(leader, started) {
        kill_group(Some(leader));
    }
    for pid in marked_processes(call_id) {
        let _ = kill_process(pid, Signal::KILL);
    }
}

/// Live processes whose environment carries `MARKER=call_id`.
fn marked_processes(call_id: &str) -> Vec<Pid> {
    let needle = format!("{MARKER}={call_id}");
    all_pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{}/environ", pid.as_raw_nonzero()))
                .map(|env| env.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
                .unwrap_or(false)
                && process_group_of(*pid).is_some()
        })
        .collect()
}

/// Reaps the given processes if they are (re-parented) children of ours; never waits on others,
/// so the runtime's own children keep their exit statuses.
fn reap(pids: &[Pid]) {
    for pid in pids {
        let _ = rustix::process::waitpid(Some(*pid), WaitOptions::NOHANG);
    }
}
