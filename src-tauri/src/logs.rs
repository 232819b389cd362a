//! The app's log: `<data-dir>/logs/bridle.YYYY-MM-DD.log`, rotated daily, the last 14 kept;
//! the level from `RUST_LOG` (default `info`). What goes wrong in the engine — a lost audit
//! record, a panicked turn, a store failure — is written here, where a user can find it.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;

/// How many lines may wait for the log's writer thread.
const LINES_QUEUED: usize = 1024;

/// Installs the subscriber; the guard flushes the log when dropped. A log that cannot be
/// opened is reported on stderr and the app goes on without it.
pub fn install(data_dir: &Path) -> Option<WorkerGuard> {
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix("bridle")
        .filename_suffix("log")
        .max_log_files(14)
        .build(data_dir.join("logs"));
    let appender = match appender {
        Ok(appender) => appender,
        Err(e) => {
            eprintln!("bridle-app: cannot open the log in {}: {e}", data_dir.join("logs").display());
            return None;
        }
    };
    // The default queue holds 128,000 lines, allocated up front (4 MiB held for the app's life);
    // the app logs a few lines a minute, so a burst past this many is dropped, not waited on.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LINES_QUEUED)
        .finish(appender);
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let installed = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer).with_ansi(false).try_init();
    if let Err(e) = installed {
        eprintln!("bridle-app: cannot install the log: {e}");
    }
    Some(guard)
}
