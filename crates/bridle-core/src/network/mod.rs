//! The network, by host (DESIGN §5.2): the proxy that is a sandboxed command's only way out.
//!
//! A session whose `[sandbox.network]` is not off has one [`Proxy`]; each command gets its own
//! listener (inside its network namespace under bubblewrap, on the host's loopback under
//! Landlock), served for the call that started it ([`Proxy::serve`]), so every connection
//! belongs to a call. A connection says where it goes (SOCKS5, HTTP `CONNECT`, or a plain HTTP
//! request: [`wire`]); the name is judged ([`policy`]), a person is asked when the policy says
//! so (through the session's [`Gate`], while the connection waits), the name is resolved by the
//! proxy and every address checked, and only then is anything sent.
//!
//! Rules: it fails closed — a refusal is the client's protocol's error, at once, never a hang;
//! no connection goes unrecorded (its record is written when it ends however it ends, an
//! aborted task included); UDP never leaves (there is none to carry: names are resolved here).

mod forward;
pub mod policy;
pub mod wire;

pub use forward::{forward, Forwarding};

use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::config::{NetworkConfig, NetworkMode};
pub use policy::{entry, HostPattern, Judgement, Policy, Source};
use wire::{Protocol, Refusal};

/// How long a client has to say where it goes.
const REQUEST_TIME: Duration = Duration::from_secs(30);
/// How long a connection to a host may take.
const CONNECT_TIME: Duration = Duration::from_secs(30);
/// Copy buffer for each direction, while a connection is open (two per connection). 64 KiB
/// measured a quarter below a direct download under bubblewrap; 128 KiB is on par.
const BUFFER: usize = 128 * 1024;

/// Turns host names into addresses: DNS, or the names pinned for tests.
#[async_trait]
pub trait Resolve: Send + Sync {
    /// The addresses of `host` (a name or an address).
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The system's resolver, with some names pinned to addresses first (`BRIDLE_NET_RESOLVE`, read
/// by the front end's wiring: how tests name loopback servers).
#[derive(Debug, Clone, Default)]
pub struct SystemResolver {
    pinned: Vec<(String, IpAddr)>,
}

impl SystemResolver {
    /// A resolver with `pinned` names (`name=address`, comma-separated; a malformed entry is an
    /// error naming it).
    pub fn with_pinned(pinned: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for entry in pinned.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let parsed =
                entry.split_once('=').and_then(|(n, a)| Some((n.trim().to_ascii_lowercase(), a.trim().parse().ok()?)));
            out.push(parsed.ok_or_else(|| format!("BRIDLE_NET_RESOLVE: `{entry}` is not name=address"))?);
        }
        Ok(Self { pinned: out })
    }
}

#[async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(addr) = bare.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(addr, port)]);
        }
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        let pinned: Vec<SocketAddr> =
            self.pinned.iter().filter(|(n, _)| *n == name).map(|(_, a)| SocketAddr::new(*a, port)).collect();
        if !pinned.is_empty() {
            return Ok(pinned);
        }
        let found = tokio::net::lookup_host(format!("{name}:{port}")).await?;
        Ok(found.collect())
    }
}

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

/// A command's dealings with one host, for its tool card.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostUse {
    /// The host, as the client named it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether these connections were let through.
    pub allowed: bool,
    /// How many.
    pub connections: u32,
    /// Bytes from the command to the host, all of them together.
    pub sent: u64,
    /// Bytes from the host to the command.
    pub received: u64,
    /// Why it was refused, when it was.
    pub reason: Option<String>,
}

/// A session's proxy: its policy, the hosts its people allowed, its resolver.
pub struct Proxy {
    policy: RwLock<Policy>,
    grants: Mutex<BTreeSet<String>>,
    resolver: Arc<dyn Resolve>,
    own: Vec<IpAddr>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("policy", &self.policy).field("grants", &self.grants).finish()
    }
}

impl Proxy {
    /// The proxy of `config`, resolving with `resolver`; a pattern that cannot be read is an error.
    pub fn new(config: &NetworkConfig, resolver: Arc<dyn Resolve>) -> Result<Self, String> {
        Ok(Self { policy: RwLock::new(Policy::new(config)?), grants: Mutex::default(), resolver, own: own_addresses() })
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
                        Ok((stream, _)) => {
                            connections.spawn(task_call.clone().handle(stream));
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

    /// The judgement and, when it allows, the address to connect to; `ask` is consulted when the
    /// policy leaves it to a person.
    async fn decide(
        &self,
        call: &CallState,
        host: &str,
        port: u16,
    ) -> Result<(Source, Vec<SocketAddr>), (Source, String)> {
        let key = entry(host, port);
        let granted = self.grants.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&key);
        let judged = self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner).judge(host, port, granted);
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
        let policy = self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Every address must pass, not only the first: a name that answers with one public and one
        // private address is refused.
        for addr in &addrs {
            if let Some(why) = policy.refuse_address(host, addr.ip(), port, &self.own) {
                return Err((Source::Address, why));
            }
        }
        Ok((source, addrs))
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
    /// Answers given for this command, one question per host however many connections wait.
    asked: Mutex<HashMap<String, Arc<OnceCell<Answer>>>>,
    log: Mutex<Vec<Connection>>,
}

impl CallState {
    async fn ask(&self, host: &str, port: u16) -> Answer {
        let cell = self
            .asked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(entry(host, port))
            .or_default()
            .clone();
        let request =
            HostRequest { call_id: self.call_id.clone(), command: self.command.clone(), host: host.into(), port };
        cell.get_or_init(|| self.gate.ask(&request)).await.clone()
    }

    /// One client connection, start to end.
    async fn handle(self: Arc<Self>, mut client: TcpStream) {
        let _ = client.set_nodelay(true);
        let request = match tokio::time::timeout(REQUEST_TIME, wire::read_request(&mut client, &self.credential)).await
        {
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
        let up = async {
            if !request.forward.is_empty() {
                to_host.write_all(&request.forward).await?;
                record.sent.fetch_add(request.forward.len() as u64, Ordering::Relaxed);
            }
            pump(&mut from_client, &mut to_host, &record.sent).await
        };
        let down = pump(&mut from_host, &mut to_client, &record.received);
        let _ = tokio::join!(up, down);
    }
}

/// The message a refused client gets.
fn refused(request: &wire::Request, why: &str) -> String {
    format!("the connection to {}:{} was refused: {why}", request.host, request.port)
}

/// Copies until the end of `from`, counting into `count`, then ends `to`'s writing side.
async fn pump(
    from: &mut (impl tokio::io::AsyncRead + Unpin),
    to: &mut (impl tokio::io::AsyncWrite + Unpin),
    count: &AtomicU64,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = from.read(&mut buf).await?;
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
        let entry = Connection {
            call_id: call.call_id.clone(),
            host: request.host.clone(),
            port: request.port,
            protocol: request.protocol,
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
    /// Stops serving (the command has ended) and says which hosts it reached or was refused.
    pub async fn finish(self) -> Vec<HostUse> {
        self.stop.cancel();
        let _ = self.task.await;
        let log = std::mem::take(&mut *self.call.log.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        summarize(&log)
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

/// This machine's own addresses (every interface's).
fn own_addresses() -> Vec<IpAddr> {
    #[allow(unsafe_code)]
    // SAFETY: getifaddrs fills a list this function walks read-only and frees once.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) != 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut at = list;
        while !at.is_null() {
            let addr = (*at).ifa_addr;
            if !addr.is_null() {
                match i32::from((*addr).sa_family) {
                    libc::AF_INET => {
                        let v4 = &*(addr as *const libc::sockaddr_in);
                        out.push(IpAddr::from(u32::from_be(v4.sin_addr.s_addr).to_be_bytes()));
                    }
                    libc::AF_INET6 => {
                        let v6 = &*(addr as *const libc::sockaddr_in6);
                        out.push(IpAddr::from(v6.sin6_addr.s6_addr));
                    }
                    _ => {}
                }
            }
            at = (*at).ifa_next;
        }
        libc::freeifaddrs(list);
        out
    }
}

#[cfg(test)]
mod tests;
