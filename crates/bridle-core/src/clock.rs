//! The clock, passed in so tests can pin time.

use chrono::{DateTime, TimeZone, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;

    /// The current instant in UTC.
    fn now(&self) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(self.now_ms()).single().unwrap_or_default()
    }
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        Utc::now().timestamp_millis()
    }
}

/// A clock stopped at one instant.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub i64);

impl Clock for FixedClock {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

/// When this process's launch began: set by the front end's first line ([`launch_began`]), else
/// by the first [`Phase`].
static LAUNCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Marks the start of this process's launch, for the times [`Phase`] logs. Front ends call it
/// first.
pub fn launch_began() {
    LAUNCH.get_or_init(std::time::Instant::now);
}

/// One phase of a launch or of a session's start, timed for the log and the app benchmark
/// (`scripts/bench-app/run.mjs` reads these lines): when dropped it logs, at `info`,
/// `phase <name>: <ms> ms, ended at <ms> ms` (the second since [`launch_began`]). It measures
/// only: nothing decides on it and no test asserts a time.
pub struct Phase {
    name: &'static str,
    started: std::time::Instant,
}

impl Phase {
    /// Starts timing `name`.
    pub fn start(name: &'static str) -> Self {
        launch_began();
        Self { name, started: std::time::Instant::now() }
    }
}

/// Logs, at `info`, `mark <name> at <ms> ms` (since [`launch_began`]): a moment of the launch
/// that is no phase's end (the window's page loaded), for the same readers as [`Phase`].
pub fn mark(name: &str) {
    launch_began();
    let at = LAUNCH.get().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
    tracing::info!("mark {name} at {at:.1} ms");
}

impl Drop for Phase {
    fn drop(&mut self) {
        let now = std::time::Instant::now();
        let took = now.duration_since(self.started).as_secs_f64() * 1e3;
        let at = LAUNCH.get().map_or(0.0, |t| now.duration_since(*t).as_secs_f64() * 1e3);
        tracing::info!("phase {}: {took:.1} ms, ended at {at:.1} ms", self.name);
    }
}
