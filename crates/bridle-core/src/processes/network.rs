//! A started command's way out, for as long as it runs: its proxy listener served for its call
//! (when `[sandbox.network]` is not off) and its host ports forwarded (`host_ports`), both
//! recorded through the call's gate.
//!
//! Rule: one place opens them for a foreground call and a background process alike; each ends
//! when its owner finishes it, after the command has ended.

use crate::network::{CallNetwork, Forwarding, Serving};
use crate::shell_sandbox::ProxyListener;

/// What serves one command's network.
pub(crate) struct CommandNetwork {
    /// The proxy serving its listener.
    pub serving: Option<Serving>,
    /// Its host ports, forwarded.
    pub forwarding: Option<Forwarding>,
}

/// Serves `listener` and forwards `host_ports` for call `call_id` running `command`, through
/// `network` (none: outside any gate, nothing is served).
pub(crate) fn open(
    listener: Option<ProxyListener>,
    host_ports: Vec<(u16, std::net::TcpListener)>,
    network: Option<&CallNetwork>,
    call_id: &str,
    command: &str,
) -> Result<CommandNetwork, String> {
    let serving = match (listener, network) {
        (Some(listener), Some(CallNetwork { proxy: Some(proxy), gate })) => Some(
            proxy
                .serve(listener.listener, listener.credential, call_id, command, gate.clone())
                .map_err(|e| format!("cannot serve the command's network: {e}"))?,
        ),
        _ => None,
    };
    let forwarding = crate::network::forward(host_ports, call_id, network.map(|n| n.gate.clone()))
        .map_err(|e| format!("cannot forward the host ports: {e}"))?;
    Ok(CommandNetwork { serving, forwarding })
}
