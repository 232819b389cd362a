//! `bridle`: the engine without a window — headless agent turns, single tool calls through the
//! whole pipeline, guard decisions, and the session store.
//!
//! Rule: the JSON shapes and exit codes of DESIGN section 12 are a contract other programs and
//! tests rely on; human-readable text goes to stderr, machine-readable text to stdout.

mod acp;
mod approvals;
mod audit;
mod auth;
mod cli;
mod config;
mod drive;
mod mcp;
mod models;
mod processes;
mod review;
mod run;
mod sessions;
mod setup;
mod skills;
mod terminal;
mod tool;
mod worktree;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    bridle_core::wiring::protect_this_process();
    let cli = Cli::parse();
    // What goes wrong inside the engine (a lost audit record, a panicked turn) goes to stderr;
    // `RUST_LOG` sets the level (default: warnings and errors).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Colours only for a terminal: `bridle acp`'s stderr is an editor's log.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_writer(std::io::stderr).try_init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("bridle: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let outcome = runtime.block_on(async {
        match &cli.command {
            Command::Run(args) => run::run(&cli.global, args).await,
            Command::Tool(args) => tool::tool(&cli.global, args).await,
            Command::Guard(args) => tool::guard(&cli.global, args),
            Command::Sessions(args) => sessions::sessions(&cli.global, args).await,
            Command::Audit(args) => audit::audit(&cli.global, args),
            Command::Approvals(args) => approvals::approvals(&cli.global, args).await,
            Command::Acp => acp::acp(&cli.global).await,
            Command::Processes(args) => processes::processes(&cli.global, args).await,
            Command::Models(args) => models::models(&cli.global, args).await,
            Command::Auth(args) => auth::auth(&cli.global, args),
            Command::Mcp(args) => mcp::mcp(&cli.global, args).await,
            Command::Skills(args) => skills::skills(&cli.global, args),
            Command::Config(args) => config::config(&cli.global, args),
        }
    });
    // A file tool whose I/O outlived its timeout still holds a blocking thread; the answer is
    // out, so the process does not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("bridle: {e:#}");
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}
