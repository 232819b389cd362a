//! `[sandbox.network]` as written: the mode, the host patterns, the host ports, and the old
//! `network = true`. Plain data; the patterns are checked where they are used
//! ([`crate::network`]).

use serde::{Deserialize, Serialize};

use super::NetworkMode;

/// `[sandbox.network]`: which hosts commands reach (DESIGN §5.2). Patterns are host names with
/// an optional port (`crates.io`, `*.npmjs.org`, `github.com:22`, `*`), or addresses
/// (`10.0.0.5`, `10.0.0.0/8`, `[::1]:5432`), the only way to a private or loopback address.
/// Checked where it is used ([`crate::network`]); here it is data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetworkConfig {
    /// What a host no pattern names gets.
    pub mode: NetworkMode,
    /// Hosts reached without asking (in `ask` and `allow`).
    pub allow: Vec<String>,
    /// Hosts always refused, whatever `allow` says.
    pub deny: Vec<String>,
    /// Ports of the host's loopback a command reaches at the same port on its own `127.0.0.1`
    /// (a database, a cache), in every mode, `off` included: a listed host port is not "the
    /// network". Written as numbers or strings (`[5432, "6379"]`).
    pub host_ports: Vec<u16>,
}

impl NetworkConfig {
    /// The old `network = true`: every public host, through the proxy.
    pub fn every_public_host() -> Self {
        Self { mode: NetworkMode::Allow, allow: vec!["*".into()], deny: Vec::new(), host_ports: Vec::new() }
    }

    /// Whether commands get a way out at all.
    pub fn is_on(&self) -> bool {
        self.mode != NetworkMode::Off
    }
}

impl<'de> Deserialize<'de> for NetworkConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, default)]
        struct Table {
            mode: NetworkMode,
            allow: Vec<String>,
            deny: Vec<String>,
            host_ports: Vec<Port>,
        }
        impl Default for Table {
            fn default() -> Self {
                Table { mode: NetworkMode::Off, allow: Vec::new(), deny: Vec::new(), host_ports: Vec::new() }
            }
        }
        /// A port, as a number or a string of one.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Port {
            Number(u16),
            Text(String),
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Old(bool),
            Table(Table),
        }
        match Either::deserialize(deserializer) {
            Ok(Either::Old(true)) => Ok(NetworkConfig::every_public_host()),
            Ok(Either::Old(false)) => Ok(NetworkConfig::default()),
            Ok(Either::Table(t)) => {
                let mut host_ports = Vec::new();
                for port in t.host_ports {
                    let number = match port {
                        Port::Number(n) => Some(n),
                        Port::Text(text) => text.trim().parse().ok(),
                    };
                    match number.filter(|n| *n > 0) {
                        Some(n) if !host_ports.contains(&n) => host_ports.push(n),
                        Some(_) => {}
                        None => return Err(serde::de::Error::custom("`sandbox.network.host_ports` lists ports: 1 to 65535")),
                    }
                }
                Ok(NetworkConfig { mode: t.mode, allow: t.allow, deny: t.deny, host_ports })
            }
            Err(_) => Err(serde::de::Error::custom(
                "`sandbox.network` is either true/false or a table with `mode` (\"off\", \"ask\" or \"allow\"), `allow` and `deny` (lists of host patterns), and `host_ports` (ports of the host's loopback)",
            )),
        }
    }
}
