//! `bridle auth set|clear|header`: a provider's API key into or out of the OS keychain, and the
//! values of the telemetry collector's headers into it.
//!
//! Rule: the key is read from stdin only (never an argument, which `ps` and shell history
//! would keep) and is never printed; the config file is not touched.

use std::io::{IsTerminal, Read};

use bridle_core::config::ProviderKind;
use bridle_core::secrets;

use crate::cli::{AuthAction, AuthArgs, AuthTarget, Global, EXIT_ERROR, EXIT_USAGE};
use crate::setup;
use crate::terminal::safe;

pub fn auth(global: &Global, args: &AuthArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    let (target, set) = match &args.action {
        AuthAction::Set(target) => (target, true),
        AuthAction::Clear(target) => (target, false),
        AuthAction::Header { name } => return header(&setup.config, name),
    };
    let Some((kind, base_url)) = target_of(&setup.config, target) else {
        eprintln!("bridle auth: no provider: pass --provider openai|anthropic|ollama (and --base-url)");
        return Ok(EXIT_USAGE);
    };
    let account = secrets::account(kind, &base_url);
    if !set {
        return Ok(match secrets::clear(kind, &base_url) {
            Ok(true) => {
                eprintln!("bridle auth: removed the key for {}", safe(&account));
                0
            }
            Ok(false) => {
                eprintln!("bridle auth: no key was stored for {}", safe(&account));
                0
            }
            Err(e) => {
                eprintln!("bridle auth: {e}");
                EXIT_ERROR
            }
        });
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprintln!("Paste the API key for {} and press Enter, then Ctrl-D:", safe(&account));
    }
    let mut key = String::new();
    stdin.lock().read_to_string(&mut key)?;
    match secrets::set(kind, &base_url, key.trim()) {
        Ok(()) => {
            eprintln!("bridle auth: stored the key for {} in the OS keychain", safe(&account));
            Ok(0)
        }
        Err(secrets::SecretError::Empty) => {
            eprintln!("bridle auth: no key on stdin (pipe it in: `printf %s \"$KEY\" | bridle auth set ...`)");
            Ok(EXIT_USAGE)
        }
        Err(e) => {
            eprintln!("bridle auth: {e}");
            Ok(EXIT_ERROR)
        }
    }
}

/// `bridle auth header NAME`: the value from stdin, for the configured collector.
fn header(config: &bridle_core::config::Config, name: &str) -> anyhow::Result<u8> {
    let Some(endpoint) = config.telemetry.endpoint.as_deref().filter(|_| config.telemetry.is_on()) else {
        eprintln!("bridle auth header: no [telemetry] endpoint in the config");
        return Ok(EXIT_USAGE);
    };
    let mut value = String::new();
    std::io::stdin().lock().read_to_string(&mut value)?;
    match secrets::set_header(name, endpoint, &value) {
        Ok(()) => {
            eprintln!("bridle auth: stored the `{}` header for {} in the OS keychain", safe(name), safe(endpoint));
            Ok(0)
        }
        Err(secrets::SecretError::Empty) => {
            eprintln!("bridle auth header: no value on stdin");
            Ok(EXIT_USAGE)
        }
        Err(e) => {
            eprintln!("bridle auth header: {e}");
            Ok(EXIT_ERROR)
        }
    }
}

/// The provider the key belongs to: the flags, else the config's `[provider]` (its base URL
/// only when the kind matches), else the kind's public server.
fn target_of(config: &bridle_core::config::Config, target: &AuthTarget) -> Option<(ProviderKind, String)> {
    let configured = config.provider.as_ref();
    let kind = target.provider.or(configured.map(|p| p.kind))?;
    let base_url = target
        .base_url
        .clone()
        .or_else(|| configured.filter(|p| p.kind == kind).map(|p| p.base_url.clone()))
        .unwrap_or_else(|| kind.default_base_url().to_string());
    Some((kind, base_url))
}
