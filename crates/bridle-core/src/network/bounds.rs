//! What one call and one session may hold of the proxy (DESIGN §5.2): connections open at once,
//! the time and bytes a handshake may take, the time a tunnel may sit idle.
//!
//! Rules: a bound is a named constant here and nowhere else; past a bound the proxy refuses in
//! words that name it, at once, and spends nothing on the refused: a connection over the bound is
//! answered from the accept loop itself (no task, nothing read beyond what has arrived), so
//! however many a command opens, the proxy holds at most [`SESSION_CONNECTIONS`] of them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Connections one call may have open through the proxy at once.
pub const CALL_CONNECTIONS: usize = 64;
/// Connections one session's commands may have open through the proxy at once.
pub const SESSION_CONNECTIONS: usize = 256;
/// How long a client has to say where it goes (SOCKS5 greeting, password and request; an HTTP
/// request head).
pub const HANDSHAKE_TIME: Duration = Duration::from_secs(10);
/// The longest HTTP request head read (SOCKS5's fields are a byte long each).
pub const HANDSHAKE_BYTES: usize = 16 * 1024;
/// How long a tunnel may carry nothing either way before it is cut.
pub const IDLE_TIME: Duration = Duration::from_secs(5 * 60);

/// The deadlines a proxy keeps: [`HANDSHAKE_TIME`] and [`IDLE_TIME`] (shorter only in its own
/// tests, which cannot wait minutes).
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    pub handshake: Duration,
    pub idle: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Self { handshake: HANDSHAKE_TIME, idle: IDLE_TIME }
    }
}

/// A connection's places: one of its call's and one of its session's, given back when it ends.
pub(super) struct Places {
    _call: OwnedSemaphorePermit,
    _session: OwnedSemaphorePermit,
}

/// Takes a place for a new connection of a call with `call` places left, in a session with
/// `session` left; why not, when either is full.
pub(super) fn admit(call: &Arc<Semaphore>, session: &Arc<Semaphore>) -> Result<Places, String> {
    let Ok(call) = call.clone().try_acquire_owned() else {
        return Err(format!(
            "too many connections at once: this command has {CALL_CONNECTIONS} open, the most one command may"
        ));
    };
    let Ok(session) = session.clone().try_acquire_owned() else {
        return Err(format!(
            "too many connections at once: this session's commands have {SESSION_CONNECTIONS} open, the most one session may"
        ));
    };
    Ok(Places { _call: call, _session: session })
}

/// Refuses `client` from the accept loop, without a task: a SOCKS5 client that has spoken gets
/// "no acceptable method", any other an HTTP 503 saying `why`; then the connection is closed.
pub(super) fn turn_away(client: TcpStream, why: &str) {
    let mut said = [0u8; 1024];
    let read = client.try_read(&mut said).unwrap_or(0);
    let reply = if read > 0 && said[0] == 5 {
        vec![5, 0xff]
    } else {
        super::wire::refusal(super::wire::Protocol::Connect, super::wire::Refusal::Busy, why)
    };
    let _ = client.try_write(&reply);
    // What else has arrived is read before the close, so the reply is not lost to a reset.
    let _ = client.try_read(&mut said);
}

/// When a tunnel last carried a byte, either way.
pub(super) struct Activity {
    since: Instant,
    last_ms: AtomicU64,
}

impl Activity {
    pub(super) fn new() -> Self {
        Self { since: Instant::now(), last_ms: AtomicU64::new(0) }
    }

    /// A byte went through now.
    pub(super) fn touch(&self) {
        self.last_ms.store(self.since.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// Ends once nothing has gone through for `limit`.
    pub(super) async fn idle(&self, limit: Duration) {
        loop {
            let deadline = self.since + Duration::from_millis(self.last_ms.load(Ordering::Relaxed)) + limit;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}
