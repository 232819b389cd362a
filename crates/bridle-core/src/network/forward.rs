//! Host ports on purpose (DESIGN §5.2, `[sandbox.network] host_ports`): what a command connects
//! to on its own `127.0.0.1:P` reaches the host's `127.0.0.1:P` (a database, a cache) through
//! Bridle, which runs outside the sandbox, in every network mode, `off` included. Each
//! connection is audited as `network`.
//!
//! Rule: only the ports the config lists are forwarded, only to the host's loopback, and only
//! while the command (or background process) that holds the listeners runs; at most
//! [`super::bounds::CALL_CONNECTIONS`] at once (one past that is closed at once, and those are
//! recorded together when the forwarding ends).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{bounds, Connection, Gate, Protocol, Source};

/// How long a connection to the host's port may take to be made.
const CONNECT_TIME: Duration = Duration::from_secs(10);

/// Listeners being forwarded for one command, until [`Forwarding::finish`].
pub struct Forwarding {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Forwarding {
    /// Stops forwarding (the command has ended): its connections are closed.
    pub async fn finish(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Forwards each `(port, listener)` to the host's `127.0.0.1:port` for call `call_id`,
/// recording every connection through `gate` (none: not recorded, outside any audit).
pub fn forward(
    listeners: Vec<(u16, std::net::TcpListener)>,
    call_id: &str,
    gate: Option<Arc<dyn Gate>>,
) -> std::io::Result<Option<Forwarding>> {
    if listeners.is_empty() {
        return Ok(None);
    }
    let mut accepting = Vec::new();
    for (port, listener) in listeners {
        listener.set_nonblocking(true)?;
        accepting.push((port, tokio::net::TcpListener::from_std(listener)?));
    }
    let stop = CancellationToken::new();
    let (call_id, task_stop) = (call_id.to_string(), stop.clone());
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        let mut listeners = tokio::task::JoinSet::new();
        let (sender, mut accepted) = tokio::sync::mpsc::channel(64);
        for (port, listener) in accepting {
            let sender = sender.clone();
            listeners.spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    if sender.send((port, stream)).await.is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let places = Arc::new(tokio::sync::Semaphore::new(bounds::CALL_CONNECTIONS));
        let mut turned_away = 0u32;
        loop {
            tokio::select! {
                () = task_stop.cancelled() => break,
                Some((port, stream)) = accepted.recv() => match places.clone().try_acquire_owned() {
                    Ok(place) => {
                        connections.spawn(carry(stream, port, call_id.clone(), gate.clone(), place));
                    }
                    Err(_) => turned_away = turned_away.saturating_add(1),
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                else => break,
            }
        }
        listeners.shutdown().await;
        // Cut, and waited for: each has written its record before the forwarding is finished.
        connections.shutdown().await;
        if let (Some(gate), true) = (gate, turned_away > 0) {
            let why = format!(
                "{turned_away} connections turned away: too many at once, the most one command may have open is {}",
                bounds::CALL_CONNECTIONS
            );
            let mut record = record(call_id, 0);
            (record.protocol, record.allowed, record.source, record.reason) =
                (Protocol::Unread, false, Source::Limit, Some(why));
            gate.record(&record);
        }
    });
    Ok(Some(Forwarding { stop, task }))
}

/// A forwarded connection's record, before it is made.
fn record(call_id: String, port: u16) -> Connection {
    Connection {
        call_id,
        host: "127.0.0.1".into(),
        port,
        protocol: Protocol::HostPort,
        allowed: true,
        reached: false,
        source: Source::HostPort,
        reason: None,
        address: None,
        sent: 0,
        received: 0,
        duration_ms: 0,
    }
}

/// One connection, to its end (holding its `_place` until then): the host's port reached (or
/// not), bytes each way, recorded however it ends (cut when the command ended included).
async fn carry(
    mut client: tokio::net::TcpStream,
    port: u16,
    call_id: String,
    gate: Option<Arc<dyn Gate>>,
    _place: tokio::sync::OwnedSemaphorePermit,
) {
    let mut on_record = Recorded { record: record(call_id, port), gate, started: Instant::now() };
    let record = &mut on_record.record;
    let target = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
    match tokio::time::timeout(CONNECT_TIME, tokio::net::TcpStream::connect(target)).await {
        Ok(Ok(mut host)) => {
            record.reached = true;
            record.address = Some(target);
            record.reason = Some("cut when the command ended".into());
            let _ = (client.set_nodelay(true), host.set_nodelay(true));
            match tokio::io::copy_bidirectional(&mut client, &mut host).await {
                Ok((sent, received)) => (record.sent, record.received, record.reason) = (sent, received, None),
                Err(e) => record.reason = Some(e.to_string()),
            }
        }
        Ok(Err(e)) => record.reason = Some(format!("the host's port {port} did not answer: {e}")),
        Err(_) => record.reason = Some(format!("the host's port {port} did not answer in time")),
    }
}

/// A forwarded connection's record, written when it is dropped: at its end, or when its task is
/// cut off.
struct Recorded {
    record: Connection,
    gate: Option<Arc<dyn Gate>>,
    started: Instant,
}

impl Drop for Recorded {
    fn drop(&mut self) {
        self.record.duration_ms = self.started.elapsed().as_millis() as u64;
        if let Some(gate) = &self.gate {
            gate.record(&self.record);
        }
    }
}
