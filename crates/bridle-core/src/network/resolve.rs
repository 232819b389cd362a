//! Where a connection goes: host names turned into addresses (DNS, or names pinned for tests),
//! and this machine's own addresses.
//!
//! Rule: an address in any spelling ([`super::address::literal`]) is that address, never a name
//! handed to DNS; only the proxy resolves (a command has no DNS of its own).

use std::net::{IpAddr, SocketAddr};

use async_trait::async_trait;

use super::address;

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
        if let Some(addr) = address::literal(host) {
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

/// This machine's own addresses (every interface's).
pub(super) fn own_addresses() -> Vec<IpAddr> {
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
