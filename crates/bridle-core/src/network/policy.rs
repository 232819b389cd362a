//! Which hosts a command may reach: `[sandbox.network]`'s patterns, judged on the name the client
//! asked for and again on every address it resolves to, and which addresses are never reached
//! unless listed as addresses.
//!
//! Rules: deny > allow > the session's grants > mode; a pattern that cannot be read is an error
//! when the session starts, never a pattern that silently matches nothing; a `deny` entry that
//! names an address or a range denies every spelling and every name that reaches it (an IPv6
//! form carrying it included); the special ranges ([`address::special`]) and the machine's own
//! addresses are refused unless an `allow` entry names the address itself or a range holding it
//! (a name that resolves to one is refused too: DNS rebinding).

use std::net::IpAddr;

use super::address::{self, canonical, carried, within};
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
            let addr = address::literal(addr).ok_or_else(|| bad("a network is an address and a prefix length"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let bits: u8 = bits.parse().ok().filter(|b| *b <= max).ok_or_else(|| bad("the prefix length is wrong"))?;
            Host::Net(addr, bits)
        } else if let Some(addr) = address::literal(host) {
            let addr = canonical(addr);
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
            Host::Net(..) => address::literal(&host).is_some_and(|a| self.holds(a)),
        }
    }

    /// Whether this entry names `addr` as an address, or a range holding it (a name never does).
    fn holds(&self, addr: IpAddr) -> bool {
        let Host::Net(net, bits) = self.host else { return false };
        match (net, canonical(addr)) {
            (IpAddr::V4(n), IpAddr::V4(a)) => within(u32::from(n).into(), u32::from(a).into(), 32, bits),
            (IpAddr::V6(n), IpAddr::V6(a)) => within(u128::from(n), u128::from(a), 128, bits),
            _ => false,
        }
    }

    /// Whether this entry, as a `deny`, reaches `addr`: it holds it, or the IPv4 address it
    /// carries.
    fn denies(&self, addr: IpAddr, port: u16) -> bool {
        self.port.is_none_or(|p| p == port)
            && (self.holds(addr) || carried(addr).is_some_and(|(v4, _)| self.holds(IpAddr::V4(v4))))
    }
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
    /// A bound of the proxy's ([`super::bounds`]): too many questions or connections.
    Limit,
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
            Source::Limit => "limit".into(),
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

    /// Who refuses `addr` (what `host` resolved to, or what it spells) and why, or `None` when
    /// it may be reached: a `deny` entry that reaches it; else, unless an `allow` entry names it
    /// or a range holding it, a special address or one of the machine's `own`.
    pub fn refuse_address(&self, host: &str, addr: IpAddr, port: u16, own: &[IpAddr]) -> Option<(Source, String)> {
        let how = |kind: &str| match address::literal(host) {
            Some(_) => format!("{addr} is {kind}"),
            None => format!("{host} resolves to {addr}, {kind}"),
        };
        if let Some(p) = self.deny.iter().find(|p| p.denies(addr, port)) {
            let why = format!("`{}` is denied in [sandbox.network]", p.as_str());
            return Some((Source::Deny(p.as_str().into()), how(&why)));
        }
        let listed = self.allow.iter().any(|p| p.port.is_none_or(|q| q == port) && p.holds(addr));
        if listed {
            return None;
        }
        let mine = |a: IpAddr| own.iter().any(|o| canonical(*o) == canonical(a));
        let kind = address::special(addr).or_else(|| {
            let own = mine(addr) || carried(addr).is_some_and(|(v4, _)| mine(IpAddr::V4(v4)));
            own.then(|| "this machine's own address".to_string())
        })?;
        Some((Source::Address, format!("{}; list `{addr}` in [sandbox.network] allow to reach it", how(&kind))))
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
        let (source, why) = every.refuse_address("localhost", "127.0.0.1".parse().unwrap(), 80, &own).unwrap();
        assert_eq!(source, Source::Address);
        assert!(why.contains("localhost resolves to 127.0.0.1, a loopback address"), "{why}");
        // This machine's own address, carried in IPv6, is still its own.
        let own_public: Vec<IpAddr> = vec!["93.184.215.14".parse().unwrap()];
        for carrier in ["93.184.215.14", "::ffff:93.184.215.14", "64:ff9b::5db8:d70e", "2002:5db8:d70e::1"] {
            let (_, why) = every.refuse_address("x.test", carrier.parse().unwrap(), 80, &own_public).unwrap();
            assert!(why.contains("own address"), "{carrier}: {why}");
        }
    }

    #[test]
    fn a_denied_address_is_denied_by_every_spelling_and_every_name_that_reaches_it() {
        let p = policy(NetworkMode::Allow, &["*", "127.0.0.1"], &["127.0.0.1:8080", "10.0.0.0/8"]);
        for spelling in ["127.0.0.1", "127.1", "2130706433", "0177.0.0.1", "0x7f.1", "127.0.0.1.", "[::ffff:127.0.0.1]"]
        {
            assert!(
                matches!(p.judge(spelling, 8080, false), Judgement::Refuse(Source::Deny(ref d), _) if d == "127.0.0.1:8080"),
                "{spelling}"
            );
            assert_eq!(p.judge(spelling, 8081, false), Judgement::Allow(Source::Allow("*".into())), "{spelling}");
        }
        let none: &[IpAddr] = &[];
        for (name, addr) in [
            ("localhost", "127.0.0.1"),
            ("pinned.test", "127.0.0.1"),
            ("pinned.test", "::ffff:127.0.0.1"),
            ("pinned.test", "::127.0.0.1"),
            ("pinned.test", "64:ff9b::7f00:1"),
            ("pinned.test", "2002:7f00:1::1"),
            ("db.test", "10.1.2.3"),
            ("db.test", "::ffff:10.9.9.9"),
        ] {
            let addr: IpAddr = addr.parse().unwrap();
            let (source, why) = p.refuse_address(name, addr, 8080, none).unwrap();
            assert!(matches!(source, Source::Deny(_)), "{name} {addr}: {source:?}");
            assert!(why.contains(&format!("{name} resolves to {addr}")) && why.contains("denied"), "{why}");
        }
        // The same address on a port the entry does not name: loopback is listed, so it is reached.
        assert_eq!(p.refuse_address("localhost", "127.0.0.1".parse().unwrap(), 8081, none), None);
        assert!(p.refuse_address("ok.test", "93.184.215.14".parse().unwrap(), 8080, none).is_none());
        // A numeric spelling in the config is the address it spells.
        let spelt = policy(NetworkMode::Allow, &["*"], &["2130706433"]);
        assert!(matches!(spelt.judge("127.0.0.1", 80, false), Judgement::Refuse(Source::Deny(_), _)));
    }

    #[test]
    fn only_an_allow_entry_naming_the_address_or_a_range_holding_it_opens_a_special_one() {
        let none: &[IpAddr] = &[];
        let loopback = policy(NetworkMode::Allow, &["*", "127.0.0.1"], &[]);
        assert_eq!(loopback.refuse_address("x.test", "127.0.0.1".parse().unwrap(), 80, none), None);
        assert_eq!(loopback.refuse_address("x.test", "::ffff:127.0.0.1".parse().unwrap(), 80, none), None);
        for other in ["127.0.0.2", "::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "::1"] {
            let refused = loopback.refuse_address("x.test", other.parse().unwrap(), 80, none);
            assert!(matches!(refused, Some((Source::Address, _))), "{other}: {refused:?}");
        }
        let ranges = policy(NetworkMode::Allow, &["*", "64:ff9b::/96", "198.18.0.0/15", "[fd00::1]:5432"], &[]);
        for (addr, port) in [("64:ff9b::7f00:1", 80), ("198.19.1.1", 80), ("fd00::1", 5432)] {
            assert_eq!(ranges.refuse_address("x.test", addr.parse().unwrap(), port, none), None, "{addr}");
        }
        assert!(ranges.refuse_address("x.test", "fd00::1".parse().unwrap(), 5433, none).is_some());
        assert!(ranges.refuse_address("x.test", "2002:7f00:1::1".parse().unwrap(), 80, none).is_some());
    }
}
