//! `bridle processes`: the background processes sessions started (DESIGN §4.4), listed and
//! stopped from any process — by their rows in the store, since their output lives in the Bridle
//! process that runs them.

use bridle_core::clock::{Clock, SystemClock};
use bridle_core::processes;
use clap::{Args, Subcommand};

use crate::cli::{Global, EXIT_ERROR};
use crate::setup;
use crate::terminal::safe;

#[derive(Args, Debug)]
pub struct ProcessesArgs {
    #[command(subcommand)]
    pub action: ProcessesAction,
}

#[derive(Subcommand, Debug)]
pub enum ProcessesAction {
    /// The processes that run now (with --session, every process of that session).
    List {
        /// Only this session's, ended ones included.
        #[arg(long)]
        session: Option<String>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Stop a process and everything it started (SIGTERM, then SIGKILL after 2 s).
    Stop {
        /// The process's id (`p1`).
        id: String,
        /// Its session (needed when several sessions run a process of that id).
        #[arg(long)]
        session: Option<String>,
    },
}

pub async fn processes(global: &Global, args: &ProcessesArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    let store = setup.store()?;
    let now = SystemClock.now_ms();
    match &args.action {
        ProcessesAction::List { session, json } => {
            let rows = match session {
                Some(id) => store.processes(id)?,
                None => store.open_processes()?,
            };
            for row in rows {
                let info = processes::info_of(&row);
                if *json {
                    println!("{}", serde_json::to_string(&info)?);
                } else {
                    println!(
                        "{}  {}  session {}  {}",
                        info.id,
                        processes::state_words(&info, now),
                        info.session_id,
                        safe(&info.command)
                    );
                }
            }
            Ok(0)
        }
        ProcessesAction::Stop { id, session } => {
            let mut rows: Vec<_> = match session {
                Some(session) => store.processes(session)?,
                None => store.open_processes()?,
            };
            rows.retain(|r| &r.id == id);
            let row = match rows.as_slice() {
                [row] => row,
                [] => {
                    eprintln!(
                        "bridle processes stop: no process `{id}` runs{}",
                        match session {
                            Some(s) => format!(" in session {s}"),
                            None => String::new(),
                        }
                    );
                    return Ok(EXIT_ERROR);
                }
                _ => {
                    let sessions: Vec<&str> = rows.iter().map(|r| r.session_id.as_str()).collect();
                    eprintln!(
                        "bridle processes stop: sessions {} each run a process `{id}`; name one with --session",
                        sessions.join(", ")
                    );
                    return Ok(EXIT_ERROR);
                }
            };
            match processes::stop_recorded(&store, row, now).await {
                Ok(info) => {
                    println!("{}", serde_json::to_string(&info)?);
                    Ok(0)
                }
                Err(e) => {
                    eprintln!("bridle processes stop: {e}");
                    Ok(EXIT_ERROR)
                }
            }
        }
    }
}
