//! The audit log at scale, one shot: builds a log of N rows (default 1,000,000) in a temp dir
//! (or DIR) with batched appends, then prints the build rate, file sizes, filtered query
//! latency (median of 25 runs, limit 100), and how long `verify` and `export` take.
//!
//! `cargo run --release -p bridle-core --example audit_scale [-- ROWS [DIR]]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/support/audit_data.rs"]
mod audit_data;

use std::time::{Duration, Instant};

use bridle_core::audit::{AuditFilter, AuditKind, AuditLog};
use bridle_protocol::Decision;

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args.next().map(|a| a.parse().expect("ROWS is a number")).unwrap_or(1_000_000);
    let temp = tempfile::tempdir().unwrap();
    let dir = args.next().map(std::path::PathBuf::from).unwrap_or_else(|| temp.path().to_path_buf());
    let log = AuditLog::open(&dir).unwrap();

    let start = Instant::now();
    for from in (0..rows).step_by(10_000) {
        let batch: Vec<_> = (from..(from + 10_000).min(rows)).map(audit_data::row).collect();
        log.append(&batch).unwrap();
    }
    let built = start.elapsed();
    println!("built {rows} rows in {built:.1?} ({:.0} rows/s, batches of 10,000)", rows as f64 / built.as_secs_f64());
    for name in ["audit.db", "audit.db-wal"] {
        if let Ok(meta) = std::fs::metadata(dir.join(name)) {
            println!("{name}: {:.1} MiB", meta.len() as f64 / (1024.0 * 1024.0));
        }
    }

    let mid = audit_data::session(rows / 2);
    let hour = audit_data::row(rows / 2).at;
    let limit = Some(100);
    let filters = [
        ("session", AuditFilter { session_id: Some(mid.clone()), limit, ..AuditFilter::default() }),
        ("tool (rare: glob_search)", AuditFilter { tool: Some("glob_search".into()), limit, ..AuditFilter::default() }),
        ("tool (common: bash)", AuditFilter { tool: Some("bash".into()), limit, ..AuditFilter::default() }),
        ("kind tool_failed", AuditFilter { kind: Some(AuditKind::ToolFailed), limit, ..AuditFilter::default() }),
        (
            "kind guard_decision + decision deny",
            AuditFilter {
                kind: Some(AuditKind::GuardDecision),
                decision: Some(Decision::Deny),
                limit,
                ..AuditFilter::default()
            },
        ),
        ("decision deny", AuditFilter { decision: Some(Decision::Deny), limit, ..AuditFilter::default() }),
        (
            "session + kind tool_call",
            AuditFilter { session_id: Some(mid), kind: Some(AuditKind::ToolCall), limit, ..AuditFilter::default() },
        ),
        (
            "since/until (one hour)",
            AuditFilter { since: Some(hour), until: Some(hour + 3_600_000), limit, ..AuditFilter::default() },
        ),
        ("text (common)", AuditFilter { text: Some("Compiling crate-".into()), limit, ..AuditFilter::default() }),
        (
            "text (absent: full scan)",
            AuditFilter { text: Some("no such text anywhere".into()), limit, ..AuditFilter::default() },
        ),
        ("no filter (latest 100)", AuditFilter { limit, ..AuditFilter::default() }),
    ];
    for (name, filter) in &filters {
        let mut found = 0;
        let runs = (0..25)
            .map(|_| {
                let start = Instant::now();
                found = log.query(filter).unwrap().len();
                start.elapsed()
            })
            .collect();
        println!("query {name:<36} {:>10.2?}  ({found} rows)", median(runs));
    }

    let start = Instant::now();
    let report = log.verify().unwrap();
    println!("verify: {:.1?} — {}", start.elapsed(), report.summary());
    let start = Instant::now();
    let exported = log.export(&dir.join("export.jsonl")).unwrap();
    println!("export: {exported} rows in {:.1?}", start.elapsed());
}
