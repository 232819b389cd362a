//! The global options, handed to core's one wiring ([`Wiring`]) with this process's environment.

use bridle_core::wiring::{Flags, Wiring};

use crate::cli::Global;

/// The launch's files and config, from the global options and the environment.
pub fn load(global: &Global) -> anyhow::Result<Wiring> {
    let flags =
        Flags { workspace: global.workspace.clone(), data_dir: global.data_dir.clone(), config: global.config.clone() };
    let wiring = Wiring::from_process(flags)?;
    if let Some(warning) = wiring.unsandboxed_warning() {
        eprintln!("bridle: {warning}");
    }
    Ok(wiring)
}
