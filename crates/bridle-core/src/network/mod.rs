//! The network, by host (DESIGN §5.2): the proxy that is a sandboxed command's only way out.
//!
//! A session whose `[sandbox.network]` is not off has one [`Proxy`]; each command gets its own
//! listener (inside its network namespace under bubblewrap, on the host's loopback under
//! Landlock), served for the call that started it ([`Proxy::serve`]), so every connection
//! belongs to a call. A connection says where it goes (SOCKS5, HTTP `CONNECT`, or a plain HTTP
//! request: [`wire`]); the name is judged ([`policy`]), a person is asked when the policy says
//! so (through the session's [`Gate`], while the connection waits), the name is resolved by the
//! proxy and every address judged too ([`address`]), and only then is anything sent.
//!
//! Rules: it fails closed — a refusal is the client's protocol's error, at once, never a hang;
//! no connection goes unrecorded (its record is written when it ends however it ends, an
//! aborted task included; those turned away over a bound are recorded together, once per
//! call); what a call and a session may hold is bounded ([`bounds`]); UDP never leaves (there
//! is none to carry: names are resolved here).

pub mod address;
pub mod bounds;
mod forward;
pub mod policy;
mod resolve;
pub mod wire;

pub use bridle_protocol::HostUse;
pub use forward::{forward, Forwarding};
pub use resolve::{Resolve, SystemResolver};

use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{OnceCell, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::config::{NetworkConfig, NetworkMode};
pub use policy::{entry, HostPattern, Judgement, Policy, Source};
use wire::{Protocol, Refusal};

/// How long a connection to a host may take.
const CONNECT_TIME: Duration = Duration::from_secs(30);
/// Copy buffer for each direction, while a connection is open (two per connection). 64 KiB
/// measured a quarter below a direct download under bubblewrap; 128 KiB is on par.
const BUFFER: usize = 128 * 1024;

/// One host a command asked for, waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRequest {
    /// The call whose command asked.
    pub call_id: String,
    /// The command line.
    pub command: String,
    /// The host, as the client named it.
    pub host: String,
    /// The port.
    pub port: u16,
}

/// A person's answer about a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// For this command.
    Once,
    /// For the rest of the session.
    Session,
    /// For good: the gate has written an `allow` entry to the config.
    Always,
    /// Refused (by a person, or nobody answered: `source` says which), with why.
    Refused(Source, String),
}

/// Where a session asks about hosts and records connections (the engine's approvals and audit).
#[async_trait]
pub trait Gate: Send + Sync {
    /// Asks a person about `request`; the connection waits for the answer.
    async fn ask(&self, request: &HostRequest) -> Answer;
    /// One connection ended, or was refused.
    fn record(&self, connection: &Connection);
}

/// What a call needs to let its command out: the session's proxy (when `[sandbox.network]` is
/// not off) and the gate it asks and records through (forwarded host ports use it too).
#[derive(Clone)]
pub struct CallNetwork {
    /// The proxy (none: the network is off; host ports may still be forwarded).
    pub proxy: Option<Arc<Proxy>>,
    /// Where it asks and records.
    pub gate: Arc<dyn Gate>,
}

impl std::fmt::Debug for CallNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallNetwork").field("proxy", &self.proxy).finish_non_exhaustive()
    }
}

/// One connection, as the audit keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// The call whose command made it.
    pub call_id: String,
    /// The host the client named.
    pub host: String,
    /// The port.
    pub port: u16,
    /// How the client asked.
    pub protocol: Protocol,
    /// Whether it was let through.
    pub allowed: bool,
    /// Whether the host answered (allowed, and connected).
    pub reached: bool,
    /// Who decided.
    pub source: Source,
    /// Why it was refused (or could not be made).
    pub reason: Option<String>,
    /// The address reached.
    pub address: Option<SocketAddr>,
    /// Bytes from the command to the host.
    pub sent: u64,
    /// Bytes from the host to the command.
    pub received: u64,
    /// How long it lasted.
    pub duration_ms: u64,
}

/// A session's proxy: its policy, the hosts its people allowed, its resolver, the connections
/// its commands may still open.
pub struct Proxy {
    policy: RwLock<Policy>,
    grants: Mutex<BTreeSet<String>>,
    resolver: Arc<dyn Resolve>,
    own: Vec<IpAddr>,
    places: Arc<Semaphore>,
    deadlines: bounds::Deadlines,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("policy", &self.policy).field("grants", &self.grants).finish()
    }
}

impl Proxy {
    /// The proxy of `config`, resolving with `resolver`; a pattern that cannot be read is an error.
    pub fn new(config: &NetworkConfig, resolver: Arc<dyn Resolve>) -> Result<Self, String> {
        Ok(Self {
            policy: RwLock::new(Policy::new(config)?),
            grants: Mutex::default(),
            resolver,
            own: resolve::own_addresses(),
            places: Arc::new(Semaphore::new(bounds::SESSION_CONNECTIONS)),
            deadlines: bounds::Deadlines::default(),
        })
    }

    /// The mode in force.
    pub fn mode(&self) -> NetworkMode {
        self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner).mode()
    }

    /// Allows `host_port` (`host:port`) for the rest of the session.
    pub fn grant(&self, host_port: &str) {
        self.grants.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(host_port.to_string());
    }

    /// The hosts allowed for this session by a person's answer (`host:port`).
    pub fn session_hosts(&self) -> Vec<String> {
        self.grants.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().cloned().collect()
    }

    /// Serves `listener` (a command's own) for call `call_id` running `command`, asking and
    /// recording through `gate`, until the returned [`Serving`] is finished.
    pub fn serve(
        self: &Arc<Self>,
        listener: std::net::TcpListener,
        credential: wire::Credential,
        call_id: &str,
        command: &str,
        gate: Arc<dyn Gate>,
    ) -> std::io::Result<Serving> {
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let call = Arc::new(CallState {
            proxy: self.clone(),
            gate,
            credential,
            call_id: call_id.to_string(),
            command: command.to_string(),
            asked: Mutex::default(),
            places: Arc::new(Semaphore::new(bounds::CALL_CONNECTIONS)),
            turned_away: Mutex::default(),
            log: Mutex::default(),
        });
        let stop = CancellationToken::new();
        let (task_call, task_stop) = (call.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    () = task_stop.cancelled() => break,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => match bounds::admit(&task_call.places, &task_call.proxy.places) {
                            Ok(places) => {
                                connections.spawn(task_call.clone().handle(stream, places));
                            }
                            Err(why) => task_call.turn_away(stream, why),
                        },
                        // Out of descriptors or memory for a moment, or a client gone before
                        // it was accepted: the listener goes on.
                        Err(e) if e.raw_os_error().is_some_and(|c| {
                            [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM, libc::ECONNABORTED].contains(&c)
                        }) => {
                            tracing::debug!("the proxy could not accept a connection: {e}");
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        Err(e) => {
                            tracing::warn!("the proxy stopped accepting: {e}");
                            break;
                        }
                    },
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
            drop(listener);
            // The command has ended: what it left open closes with it. A connection still going
            // after a moment is cut (and recorded as it stood).
            let _ = tokio::time::timeout(Duration::from_millis(500), async {
                while connections.join_next().await.is_some() {}
            })
            .await;
            connections.shutdown().await;
        });
        Ok(Serving { stop, task, call })
    }

    /// The judgement and, when it allows, the addresses to connect to; `call` is asked when the
    /// policy leaves it to a person. An address, however spelt, is judged as that address before
    /// anyone is asked; a name is resolved only once it is let through (a name a person refuses
    /// is never looked up), and then every address it resolves to is judged.
    async fn decide(
        &self,
        call: &CallState,
        host: &str,
        port: u16,
    ) -> Result<(Source, Vec<SocketAddr>), (Source, String)> {
        let literal = address::literal(host);
        // `127.1` and `0x7f.1` are asked about, granted and matched as `127.0.0.1`.
        let host = literal.map(|a| address::canonical(a).to_string()).unwrap_or_else(|| host.to_string());
        let host = host.as_str();
        let key = entry(host, port);
        let granted = self.grants.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&key);
        let judged = self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner).judge(host, port, granted);
        if let (Some(addr), false) = (literal, matches!(judged, Judgement::Refuse(..))) {
            self.judge_addresses(host, &[SocketAddr::new(addr, port)])?;
        }
        let source = match judged {
            Judgement::Allow(source) => source,
            Judgement::Refuse(source, why) => return Err((source, why)),
            Judgement::Ask => match call.ask(host, port).await {
                Answer::Once => Source::User,
                Answer::Session => {
                    self.grant(&key);
                    Source::User
                }
                Answer::Always => {
                    if let Ok(pattern) = HostPattern::parse(&key) {
                        self.policy.write().unwrap_or_else(std::sync::PoisonError::into_inner).allow(pattern);
                    }
                    Source::User
                }
                Answer::Refused(source, why) => return Err((source, why)),
            },
        };
        let addrs = match self.resolver.resolve(host, port).await {
            Ok(addrs) if !addrs.is_empty() => addrs,
            Ok(_) => return Err((Source::Address, format!("{host} has no address"))),
            Err(e) => return Err((Source::Address, format!("cannot resolve {host}: {e}"))),
        };
        self.judge_addresses(host, &addrs)?;
        Ok((source, addrs))
    }

    /// Refuses unless every one of `addrs` (what `host` is or resolves to) may be reached: a name
    /// that answers with one public and one denied or private address is refused.
    fn judge_addresses(&self, host: &str, addrs: &[SocketAddr]) -> Result<(), (Source, String)> {
        let policy = self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        match addrs.iter().find_map(|a| policy.refuse_address(host, a.ip(), a.port(), &self.own)) {
            Some(refused) => Err(refused),
            None => Ok(()),
        }
    }
}

/// One call's share of the proxy.
struct CallState {
    proxy: Arc<Proxy>,
    gate: Arc<dyn Gate>,
    /// What a client of this call's listener must present: another command of the session, or
    /// another process of the host, has not got it.
    credential: wire::Credential,
    call_id: String,
    command: String,
    /// Answers given for this command, one question per host however many connections wait
    /// (the call's stream bounds how many hosts it asks about).
    asked: Mutex<HashMap<String, Arc<OnceCell<Answer>>>>,
    /// The connections it may still open at once.
    places: Arc<Semaphore>,
    /// How many connections were turned away over a bound, and the last bound's words.
    turned_away: Mutex<(u32, String)>,
    log: Mutex<Vec<Connection>>,
}

impl CallState {
    async fn ask(&self, host: &str, port: u16) -> Answer {
        let cell = {
            let mut asked = self.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            asked.entry(entry(host, port)).or_default().clone()
        };
        let request =
            HostRequest { call_id: self.call_id.clone(), command: self.command.clone(), host: host.into(), port };
        cell.get_or_init(|| self.gate.ask(&request)).await.clone()
    }

    /// Refuses a connection over a bound, from the accept loop.
    fn turn_away(&self, client: TcpStream, why: String) {
        bounds::turn_away(client, &why);
        let mut turned = self.turned_away.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *turned = (turned.0.saturating_add(1), why);
    }

    /// One client connection, start to end, holding its `_places` until then.
    async fn handle(self: Arc<Self>, mut client: TcpStream, _places: bounds::Places) {
        let _ = client.set_nodelay(true);
        let reading = wire::read_request(&mut client, &self.credential);
        let request = match tokio::time::timeout(self.proxy.deadlines.handshake, reading).await {
            Ok(Ok(request)) => request,
            Ok(Err(wire::Unreadable(_, why))) => return tracing::debug!("a proxy request could not be read: {why}"),
            Err(_) => return tracing::debug!("a proxy client said nothing in time"),
        };
        let mut record = Record::new(self.clone(), &request);
        let (source, addrs) = match self.proxy.decide(&self, &request.host, request.port).await {
            Ok(decided) => decided,
            Err((source, why)) => {
                let _ = wire::refuse(&mut client, request.protocol, Refusal::Denied, &refused(&request, &why)).await;
                return record.refuse(source, why);
            }
        };
        (record.entry.source, record.entry.allowed) = (source, true);
        let upstream = match connect(&addrs).await {
            Ok(upstream) => upstream,
            Err(why) => {
                let _ = wire::refuse(&mut client, request.protocol, Refusal::Unreachable, &why).await;
                record.entry.reason = Some(why);
                return;
            }
        };
        record.entry.reached = true;
        record.entry.address = upstream.peer_addr().ok();
        let _ = upstream.set_nodelay(true);
        if wire::granted(&mut client, request.protocol).await.is_err() {
            return;
        }
        let (mut from_client, mut to_client) = client.into_split();
        let (mut from_host, mut to_host) = upstream.into_split();
        let activity = bounds::Activity::new();
        let up = async {
            if !request.forward.is_empty() {
                to_host.write_all(&request.forward).await?;
                record.sent.fetch_add(request.forward.len() as u64, Ordering::Relaxed);
            }
            pump(&mut from_client, &mut to_host, &record.sent, &activity).await
        };
        let down = pump(&mut from_host, &mut to_client, &record.received, &activity);
        let idle = tokio::select! {
            _ = async { tokio::join!(up, down) } => false,
            () = activity.idle(self.proxy.deadlines.idle) => true,
        };
        if idle {
            let after = self.proxy.deadlines.idle.as_secs_f64();
            record.entry.reason = Some(format!("cut after {after} s with nothing sent either way"));
        }
    }
}

/// The message a refused client gets.
fn refused(request: &wire::Request, why: &str) -> String {
    format!("the connection to {}:{} was refused: {why}", request.host, request.port)
}

/// Copies until the end of `from`, counting into `count` and telling `activity`, then ends
/// `to`'s writing side.
async fn pump(
    from: &mut (impl tokio::io::AsyncRead + Unpin),
    to: &mut (impl tokio::io::AsyncWrite + Unpin),
    count: &AtomicU64,
    activity: &bounds::Activity,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = from.read(&mut buf).await?;
        activity.touch();
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
        count.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// The first of `addrs` that answers.
async fn connect(addrs: &[SocketAddr]) -> Result<TcpStream, String> {
    let mut last = String::from("no address");
    for addr in addrs {
        match tokio::time::timeout(CONNECT_TIME, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = format!("{addr}: {e}"),
            Err(_) => last = format!("{addr}: no answer in {} s", CONNECT_TIME.as_secs()),
        }
    }
    Err(format!("cannot connect: {last}"))
}

/// A connection's record, written when it is dropped: at its end, at a refusal, or when its task
/// is cut off.
struct Record {
    call: Arc<CallState>,
    entry: Connection,
    sent: AtomicU64,
    received: AtomicU64,
    started: Instant,
}

impl Record {
    fn new(call: Arc<CallState>, request: &wire::Request) -> Self {
        Self::of(call, request.host.clone(), request.port, request.protocol)
    }

    /// The record of the connections turned away unread: host `*`, port 0.
    fn unread(call: Arc<CallState>) -> Self {
        Self::of(call, "*".into(), 0, Protocol::Unread)
    }

    fn of(call: Arc<CallState>, host: String, port: u16, protocol: Protocol) -> Self {
        let entry = Connection {
            call_id: call.call_id.clone(),
            host,
            port,
            protocol,
            allowed: false,
            reached: false,
            source: Source::Mode(NetworkMode::Off),
            reason: None,
            address: None,
            sent: 0,
            received: 0,
            duration_ms: 0,
        };
        Self { call, entry, sent: AtomicU64::new(0), received: AtomicU64::new(0), started: Instant::now() }
    }

    fn refuse(&mut self, source: Source, why: String) {
        self.entry.source = source;
        self.entry.reason = Some(why);
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        self.entry.sent = self.sent.load(Ordering::Relaxed);
        self.entry.received = self.received.load(Ordering::Relaxed);
        self.entry.duration_ms = self.started.elapsed().as_millis() as u64;
        self.call.gate.record(&self.entry);
        self.call.log.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(self.entry.clone());
    }
}

/// A command's listener being served.
pub struct Serving {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    call: Arc<CallState>,
}

impl Serving {
    /// Stops serving (the command has ended) and says which hosts it reached or was refused
    /// (the connections turned away over a bound as one entry, host `*`).
    pub async fn finish(self) -> Vec<HostUse> {
        self.stop.cancel();
        let _ = self.task.await;
        let (count, why) =
            std::mem::take(&mut *self.call.turned_away.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        if count > 0 {
            // Their requests were never read: one record says how many, and why.
            let mut record = Record::unread(self.call.clone());
            record.refuse(Source::Limit, format!("{count} connections turned away: {why}"));
        }
        let log = std::mem::take(&mut *self.call.log.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        let mut uses = summarize(&log);
        if let Some(unread) = uses.iter_mut().find(|h| h.host == "*" && h.port == 0) {
            unread.connections = count;
        }
        uses
    }
}

/// Connections grouped by host, port and outcome, in first-seen order.
fn summarize(log: &[Connection]) -> Vec<HostUse> {
    let mut out: Vec<HostUse> = Vec::new();
    for c in log {
        let allowed = c.allowed;
        match out.iter_mut().find(|h| h.host == c.host && h.port == c.port && h.allowed == allowed) {
            Some(h) => {
                h.connections += 1;
                h.sent += c.sent;
                h.received += c.received;
            }
            None => out.push(HostUse {
                host: c.host.clone(),
                port: c.port,
                allowed,
                connections: 1,
                sent: c.sent,
                received: c.received,
                reason: c.reason.clone(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests;
