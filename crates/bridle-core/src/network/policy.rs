//! Which hosts a command may reach: `[sandbox.network]`'s patterns, judged on the name the client
//! asked for, and which addresses are never reached unless listed as addresses.
//!
//! Rules: deny > allow > the session's grants > mode; a pattern that cannot be read is an error
//! when the session starts, never a pattern that silently matches nothing; loopback, link-local,
//! private, shared and multicast ranges and the machine's own addresses are refused unless an
//! `allow` entry names the address itself (a name that resolves to one is refused too: DNS
//! rebinding).

use std::net::IpAddr;

use crate::config::{NetworkConfig, NetworkMode};

/// One `allow` or `deny` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    text: String,
    host: Host,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    /// `*`: every host.
    Any,
    /// `example.com`: that name only.
    Exact(String),
    /// `*.example.com`: names below it (not the name itself).
    Below(String),
    /// `10.0.0.5`, `10.0.0.0/8`, `[::1]`: addresses.
    Net(IpAddr, u8),
}

impl HostPattern {
    /// Reads `text`: a host name, `*`, `*.name`, an address or a network (`10.0.0.0/8`), each with
    /// an optional `:port` (`[v6]:port` for an IPv6 address).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("`{text}` is not a host pattern: {why}");
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(bad("it is empty"));
        }
        let (host, port) = split_port(trimmed).map_err(|e| bad(&e))?;
        let host = if host == "*" {
            Host::Any
        } else if let Some(rest) = host.strip_prefix("*.") {
            Host::Below(name(rest).map_err(|e| bad(&e))?)
        } else if let Some((addr, bits)) = host.split_once('/') {
            let addr: IpAddr = addr.parse().map_err(|_| bad("a network is an address and a prefix length"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let bits: u8 = bits.parse().ok().filter(|b| *b <= max).ok_or_else(|| bad("the prefix length is wrong"))?;
            Host::Net(addr, bits)
        } else if let Ok(addr) = host.parse::<IpAddr>() {
            Host::Net(addr, if addr.is_ipv4() { 32 } else { 128 })
        } else {
            Host::Exact(name(host).map_err(|e| bad(&e))?)
        };
        Ok(Self { text: trimmed.to_string(), host, port })
    }

    /// The entry as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the client's `host` (a name or an address) and `port` match.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match &self.host {
            Host::Any => true,
            Host::Exact(name) => *name == host,
            Host::Below(name) => host.strip_suffix(name.as_str()).is_some_and(|head| head.ends_with('.')),
            Host::Net(..) => host.trim_start_matches('[').trim_end_matches(']').parse().is_ok_and(|a| self.holds(a)),
        }
    }

    /// Whether this entry names `addr` as an address (a name never does).
    fn holds(&self, addr: IpAddr) -> bool {
        let Host::Net(net, bits) = self.host else { return false };
        match (net, canonical(addr)) {
            (IpAddr::V4(n), IpAddr::V4(a)) => prefix(u32::from(n).into(), u32::from(a).into(), 32, bits),
            (IpAddr::V6(n), IpAddr::V6(a)) => prefix(u128::from(n), u128::from(a), 128, bits),
            _ => false,
        }
    }
}

fn prefix(net: u128, addr: u128, width: u8, bits: u8) -> bool {
    if bits == 0 {
        return true;
    }
    let shift = u32::from(width - bits);
    (net >> shift) == (addr >> shift)
}

/// `host:port` as an `allow` entry, a grant and a question's key name it (`[v6]:port` for an
/// IPv6 address, so it reads back as the same host and port).
pub fn entry(host: &str, port: u16) -> String {
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(_) => format!("[{host}]:{port}"),
        Err(_) => format!("{host}:{port}"),
    }
}

/// `host[:port]`, `[v6][:port]`, or a bare IPv6 address.
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let port = |p: &str| p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| format!("`{p}` is not a port"));
    if let Some(rest) = text.strip_prefix('[') {
        let (addr, after) = rest.split_once(']').ok_or("an unclosed `[`")?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((addr, Some(port(p)?))),
            None if after.is_empty() => Ok((addr, None)),
            None => Err("text after `]`".into()),
        };
    }
    if text.matches(':').count() > 1 {
        return Ok((text, None));
    }
    match text.rsplit_once(':') {
        Some((host, p)) => Ok((host, Some(port(p)?))),
        None => Ok((text, None)),
    }
}

/// A host name, lower-cased: letters, digits, `-`, `_` and dots.
fn name(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text
            .split('.')
            .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    if !ok {
        return Err("a host name is letters, digits, `-` and dots".into());
    }
    Ok(text.to_ascii_lowercase())
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is that IPv4 address.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(addr),
        v4 => v4,
    }
}

/// Why an address is not reached without being listed, or `None` for a public one.
pub fn private_kind(addr: IpAddr) -> Option<&'static str> {
    match canonical(addr) {
        IpAddr::V4(a) => {
            let [x, y, ..] = a.octets();
            if a.is_loopback() {
                Some("a loopback address")
            } else if a.is_link_local() {
                Some("a link-local address (cloud metadata lives there)")
            } else if a.is_private() || (x == 100 && (64..128).contains(&y)) {
                Some("a private address")
            } else if a.is_unspecified() || x == 0 || a.is_broadcast() || a.is_multicast() || x >= 240 {
                Some("not a host's address")
            } else {
                None
            }
        }
        IpAddr::V6(a) => {
            let first = a.segments()[0];
            if a.is_loopback() {
                Some("a loopback address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else if first & 0xfe00 == 0xfc00 {
                Some("a private address")
            } else if a.is_unspecified() || a.is_multicast() {
                Some("not a host's address")
            } else {
                None
            }
        }
    }
}

/// Who decided about a host, in the audit and on the tool card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A `deny` entry.
    Deny(String),
    /// An `allow` entry.
    Allow(String),
    /// A person's answer earlier in this session.
    Session,
    /// The mode (`allow` without a match refuses; `off` refuses everything).
    Mode(NetworkMode),
    /// A person, asked now.
    User,
    /// Nobody answered in time.
    Timeout,
    /// The address the name resolves to.
    Address,
    /// `[sandbox.network] host_ports`: a port of the host's loopback forwarded on purpose.
    HostPort,
}

impl Source {
    /// How the audit names it.
    pub fn describe(&self) -> String {
        match self {
            Source::Deny(p) => format!("deny {p}"),
            Source::Allow(p) => format!("allow {p}"),
            Source::Session => "session".into(),
            Source::Mode(m) => format!("mode {}", m.as_str()),
            Source::User => "user".into(),
            Source::Timeout => "timeout".into(),
            Source::Address => "address".into(),
            Source::HostPort => "host_ports".into(),
        }
    }
}

/// The name judgement: reach it, refuse it, or ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Connect (after the address check).
    Allow(Source),
    /// Refuse, with why.
    Refuse(Source, String),
    /// A person decides.
    Ask,
}

/// `[sandbox.network]`, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    mode: NetworkMode,
    allow: Vec<HostPattern>,
    deny: Vec<HostPattern>,
}

impl Policy {
    /// The policy of `config`; an entry that cannot be read is an error naming it.
    pub fn new(config: &NetworkConfig) -> Result<Self, String> {
        let read = |list: &[String], key: &str| {
            list.iter()
                .map(|p| HostPattern::parse(p).map_err(|e| format!("[sandbox.network] {key}: {e}")))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Self { mode: config.mode, allow: read(&config.allow, "allow")?, deny: read(&config.deny, "deny")? })
    }

    /// The mode.
    pub fn mode(&self) -> NetworkMode {
        self.mode
    }

    /// Adds an `allow` entry (an "always" answer) to the policy in force.
    pub fn allow(&mut self, pattern: HostPattern) {
        if !self.allow.contains(&pattern) {
            self.allow.push(pattern);
        }
    }

    /// Judges `host:port` on its name; `granted` tells whether the session's answers cover it.
    pub fn judge(&self, host: &str, port: u16, granted: bool) -> Judgement {
        if self.mode == NetworkMode::Off {
            return Judgement::Refuse(
                Source::Mode(self.mode),
                "the network is off ([sandbox.network] mode = \"off\")".into(),
            );
        }
        if let Some(p) = self.deny.iter().find(|p| p.matches(host, port)) {
            return Judgement::Refuse(
                Source::Deny(p.as_str().into()),
                format!("`{}` is denied in [sandbox.network]", p.as_str()),
            );
        }
        if let Some(p) = self.allow.iter().find(|p| p.matches(host, port)) {
            return Judgement::Allow(Source::Allow(p.as_str().into()));
        }
        if granted {
            return Judgement::Allow(Source::Session);
        }
        match self.mode {
            NetworkMode::Ask => Judgement::Ask,
            mode => Judgement::Refuse(Source::Mode(mode), format!("{host}:{port} is not in [sandbox.network] allow")),
        }
    }

    /// Why `addr` (what `host` resolved to) is not reached, or `None` when it may be: a private,
    /// loopback or link-local address, or one of the machine's `own`, unless an `allow` entry
    /// names the address itself.
    pub fn refuse_address(&self, host: &str, addr: IpAddr, port: u16, own: &[IpAddr]) -> Option<String> {
        let listed = self.allow.iter().any(|p| p.port.is_none_or(|q| q == port) && p.holds(addr));
        if listed {
            return None;
        }
        let kind =
            private_kind(addr).or_else(|| own.contains(&canonical(addr)).then_some("this machine's own address"))?;
        let how = if host.trim_matches(['[', ']']).parse::<IpAddr>().is_ok() {
            format!("{addr} is {kind}")
        } else {
            format!("{host} resolves to {addr}, {kind}")
        };
        Some(format!("{how}; list `{addr}` in [sandbox.network] allow to reach it"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn policy(mode: NetworkMode, allow: &[&str], deny: &[&str]) -> Policy {
        let s = |l: &[&str]| l.iter().map(|p| p.to_string()).collect();
        Policy::new(&NetworkConfig { mode, allow: s(allow), deny: s(deny), host_ports: Vec::new() }).unwrap()
    }

    #[test]
    fn patterns_read_names_wildcards_ports_and_addresses() {
        let p = |t: &str| HostPattern::parse(t).unwrap();
        assert!(p("crates.io").matches("crates.io", 443) && p("crates.io").matches("CRATES.IO.", 80));
        assert!(!p("crates.io").matches("static.crates.io", 443));
        assert!(p("*.npmjs.org").matches("registry.npmjs.org", 443));
        assert!(!p("*.npmjs.org").matches("npmjs.org", 443) && !p("*.npmjs.org").matches("evilnpmjs.org", 443));
        assert!(p("github.com:22").matches("github.com", 22) && !p("github.com:22").matches("github.com", 443));
        assert!(p("10.0.0.0/8").matches("10.1.2.3", 5432) && !p("10.0.0.0/8").matches("11.0.0.1", 1));
        assert!(p("[::1]:5432").matches("::1", 5432) && p("[::1]:5432").matches("[::1]", 5432));
        assert!(p("*").matches("anything.test", 1));
        for (host, port) in [("crates.io", 443), ("::1", 5432), ("10.0.0.5", 22)] {
            assert!(p(&entry(host, port)).matches(host, port) && !p(&entry(host, port)).matches(host, port + 1));
        }
        for bad in ["", "a b", "x:0", "x:http", "10.0.0.0/33", "[::1", "*.", "exa mple.com"] {
            assert!(HostPattern::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deny_beats_allow_beats_grants_beats_mode() {
        let p = policy(NetworkMode::Ask, &["*.example.com"], &["bad.example.com"]);
        assert!(matches!(p.judge("bad.example.com", 443, true), Judgement::Refuse(Source::Deny(_), _)));
        assert_eq!(p.judge("ok.example.com", 443, false), Judgement::Allow(Source::Allow("*.example.com".into())));
        assert_eq!(p.judge("new.test", 443, true), Judgement::Allow(Source::Session));
        assert_eq!(p.judge("new.test", 443, false), Judgement::Ask);
        let strict = policy(NetworkMode::Allow, &["crates.io"], &[]);
        assert!(matches!(strict.judge("new.test", 443, false), Judgement::Refuse(Source::Mode(NetworkMode::Allow), _)));
        let off = policy(NetworkMode::Off, &["*"], &[]);
        assert!(matches!(off.judge("crates.io", 443, false), Judgement::Refuse(..)));
    }

    #[test]
    fn private_addresses_need_listing_as_addresses() {
        let every = policy(NetworkMode::Allow, &["*"], &[]);
        let own: Vec<IpAddr> = vec!["203.0.113.7".parse().unwrap()];
        for addr in [
            "127.0.0.1",
            "169.254.169.254",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.0.1",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "0.0.0.0",
            "203.0.113.7",
        ] {
            let a: IpAddr = addr.parse().unwrap();
            assert!(every.refuse_address("x.test", a, 80, &own).is_some(), "{addr}");
        }
        assert!(every.refuse_address("x.test", "93.184.215.14".parse().unwrap(), 80, &own).is_none());
        let listed = policy(NetworkMode::Allow, &["ok.test", "127.0.0.1"], &[]);
        assert!(listed.refuse_address("ok.test", "127.0.0.1".parse().unwrap(), 8080, &own).is_none());
        assert!(listed.refuse_address("ok.test", "127.0.0.2".parse().unwrap(), 8080, &own).is_some());
        let why = every.refuse_address("localhost", "127.0.0.1".parse().unwrap(), 80, &own).unwrap();
        assert!(why.contains("localhost resolves to 127.0.0.1, a loopback address"), "{why}");
    }
}
