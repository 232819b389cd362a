//! Host ports on purpose (DESIGN §5.2, `[sandbox.network] host_ports`): what a command connects
//! to on its own `127.0.0.1:P` reaches the host's `127.0.0.1:P` (a database, a cache) through
//! Bridle, which runs outside the sandbox, in every network mode, `off` included. Each
//! connection is audited as `network`.
//!
//! Rule: only the ports the config lists are forwarded, only to the host's loopback, and only
//! while the command (or background process) that holds the listeners runs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{Connection, Gate, Protocol, Source};

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
        loop {
            tokio::select! {
                () = task_stop.cancelled() => break,
                Some((port, stream)) = accepted.recv() => {
                    connections.spawn(carry(stream, port, call_id.clone(), gate.clone()));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                else => break,
            }
        }
        listeners.abort_all();
        connections.abort_all();
    });
    Ok(Some(Forwarding { stop, task }))
}

/// One connection, to its end: the host's port reached (or not), bytes each way, recorded.
async fn carry(mut client: tokio::net::TcpStream, port: u16, call_id: String, gate: Option<Arc<dyn Gate>>) {
    let started = Instant::now();
    let mut record = Connection {
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
    };
    let target = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
    match tokio::time::timeout(CONNECT_TIME, tokio::net::TcpStream::connect(target)).await {
        Ok(Ok(mut host)) => {
            record.reached = true;
            record.address = Some(target);
            let _ = (client.set_nodelay(true), host.set_nodelay(true));
            match tokio::io::copy_bidirectional(&mut client, &mut host).await {
                Ok((sent, received)) => (record.sent, record.received) = (sent, received),
                Err(e) => record.reason = Some(e.to_string()),
            }
        }
        Ok(Err(e)) => record.reason = Some(format!("the host's port {port} did not answer: {e}")),
        Err(_) => record.reason = Some(format!("the host's port {port} did not answer in time")),
    }
    record.duration_ms = started.elapsed().as_millis() as u64;
    if let Some(gate) = gate {
        gate.record(&record);
    }
}
