//! `bridle config explain`: every setting in force and where it came from (DESIGN §17).

use clap::{Args, Subcommand};

use crate::cli::Global;

/// `bridle config`.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
}

#[derive(Subcommand, Debug)]
pub enum ConfigAction {
    /// Print each setting in force with its source: the managed policy, your config, or the default.
    Explain,
}

pub fn config(global: &Global, args: &ConfigArgs) -> anyhow::Result<u8> {
    let ConfigAction::Explain = args.action;
    let setup = crate::setup::load(global)?;
    let text = std::fs::read_to_string(&setup.config_file).ok();
    for line in bridle_core::config::explain(&setup.config, &setup.config_file, text.as_deref()) {
        println!("{} = {}    # {}", line.key, line.value, line.source);
    }
    Ok(0)
}
