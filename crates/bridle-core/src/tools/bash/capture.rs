//! A command's output: stdout and stderr share a pipe that Bridle drains into the output file.
//!
//! Rule: the file never grows past the cap. The drain writes at most the cap, then says so and
//! stops reading, so a fast writer blocks (and is stopped) instead of racing a size check. The
//! call never waits on the pipe's end for long: once the command and what it started are gone,
//! the writers are closed and the drain ends by itself.

use std::io::{Read, Write};
use std::time::Duration;

/// The drain's side of a command's output.
pub(super) struct Drain {
    full: tokio::sync::oneshot::Receiver<()>,
    finished: tokio::sync::oneshot::Receiver<()>,
}

/// A pipe for the command (its write end, to hand to stdout and stderr) and the drain that copies
/// at most `cap` bytes of it into `file`.
pub(super) fn start(mut file: std::fs::File, cap: u64) -> std::io::Result<(std::io::PipeWriter, Drain)> {
    let (mut reader, writer) = std::io::pipe()?;
    let (full_tx, full) = tokio::sync::oneshot::channel();
    let (finished_tx, finished) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("bash-output".into()).spawn(move || {
        let mut written = 0u64;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let room = usize::try_from(cap - written).unwrap_or(usize::MAX).min(n);
            if file.write_all(&buf[..room]).is_err() {
                break;
            }
            written += room as u64;
            if room < n {
                // Past the cap: no more reading; the writer blocks until it is stopped.
                let _ = full_tx.send(());
                break;
            }
        }
        let _ = file.flush();
        let _ = finished_tx.send(());
    })?;
    Ok((writer, Drain { full, finished }))
}

impl Drain {
    /// Resolves when the output passed the cap (never, if it does not).
    pub(super) async fn full(&mut self) {
        if (&mut self.full).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Waits (at most `limit`) for the drain to have copied everything the command wrote.
    pub(super) async fn finish(self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.finished).await;
    }
}
