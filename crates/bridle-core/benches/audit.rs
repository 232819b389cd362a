//! Audit log costs: what `AuditSink::record` costs the caller, how many events per second the
//! writer commits (sanitising, hashing, indexing, fsync), and filtered query latency on a log of
//! a million rows (built once per run in a temp dir; `BRIDLE_AUDIT_BENCH_ROWS` overrides the
//! size), and sanitising once secrets are known by value.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/audit_data.rs"]
mod audit_data;

use std::time::{Duration, Instant};

use bridle_core::audit::{AuditFilter, AuditKind, AuditLog, AuditRecord, AuditSink};
use bridle_core::redact;
use bridle_protocol::Decision;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const BATCH: u64 = 1000;

fn records(from: u64) -> Vec<AuditRecord> {
    (from..from + BATCH).map(audit_data::row).collect()
}

fn ingest(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let sink = AuditSink::start(AuditLog::open(dir.path()).unwrap());
    let prepared = records(0);
    let mut group = c.benchmark_group("audit_sink");
    group.throughput(Throughput::Elements(BATCH));
    group.sample_size(10);
    // The caller's side: queueing only (the writer commits in the background, untimed).
    group.bench_function("record_1000_calls", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let batch = prepared.clone();
                let start = Instant::now();
                for r in batch {
                    sink.record(r);
                }
                total += start.elapsed();
                sink.flush().unwrap();
            }
            total
        })
    });
    // End to end: queue, sanitise, hash, insert, fsync, head write — until flush returns.
    group.bench_function("record_1000_and_commit", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let batch = prepared.clone();
                let start = Instant::now();
                for r in batch {
                    sink.record(r);
                }
                sink.flush().unwrap();
                total += start.elapsed();
            }
            total
        })
    });
    // The same with ten times as many records per flush: bigger batches, fewer fsyncs.
    let prepared_10k: Vec<AuditRecord> = (0..10).flat_map(|k| records(k * BATCH)).collect();
    group.throughput(Throughput::Elements(10 * BATCH));
    group.bench_function("record_10000_and_commit", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let batch = prepared_10k.clone();
                let start = Instant::now();
                for r in batch {
                    sink.record(r);
                }
                sink.flush().unwrap();
                total += start.elapsed();
            }
            total
        })
    });
    group.finish();
}

fn sanitise(c: &mut Criterion) {
    let output = audit_data::row(5).payload;
    let call = audit_data::row(2).payload;
    let mut group = c.benchmark_group("audit_sanitize");
    group.throughput(Throughput::Bytes(output.to_string().len() as u64));
    group.bench_function("tool_output_2kb", |b| b.iter(|| redact::sanitize(&output)));
    group.throughput(Throughput::Bytes(call.to_string().len() as u64));
    group.bench_function("tool_call_arguments", |b| b.iter(|| redact::sanitize(&call)));
    group.finish();
}

fn queries(c: &mut Criterion) {
    let rows: u64 = std::env::var("BRIDLE_AUDIT_BENCH_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path()).unwrap();
    let start = Instant::now();
    for from in (0..rows).step_by(10_000) {
        let batch: Vec<_> = (from..(from + 10_000).min(rows)).map(audit_data::row).collect();
        log.append(&batch).unwrap();
    }
    eprintln!("audit bench: built {rows} rows in {:.1?}", start.elapsed());

    let mid = audit_data::session(rows / 2);
    let limit = Some(100);
    let filters = [
        ("session", AuditFilter { session_id: Some(mid.clone()), limit, ..AuditFilter::default() }),
        ("tool", AuditFilter { tool: Some("glob_search".into()), limit, ..AuditFilter::default() }),
        ("kind", AuditFilter { kind: Some(AuditKind::ToolFailed), limit, ..AuditFilter::default() }),
        (
            "kind_and_decision",
            AuditFilter {
                kind: Some(AuditKind::GuardDecision),
                decision: Some(Decision::Deny),
                limit,
                ..AuditFilter::default()
            },
        ),
        (
            "session_and_kind",
            AuditFilter { session_id: Some(mid), kind: Some(AuditKind::ToolCall), limit, ..AuditFilter::default() },
        ),
        ("text_common", AuditFilter { text: Some("Compiling crate-".into()), limit, ..AuditFilter::default() }),
        ("latest_page", AuditFilter { limit, ..AuditFilter::default() }),
    ];
    let mut group = c.benchmark_group(format!("audit_query_{rows}_rows"));
    group.sample_size(30);
    for (name, filter) in &filters {
        assert!(!log.query(filter).unwrap().is_empty(), "{name} finds rows");
        group.bench_function(*name, |b| b.iter(|| log.query(filter).unwrap()));
    }
    group.finish();
}

/// The same payloads once Bridle knows 20 secrets by value (a `.env` it read): one more scan of
/// each string. Last, since the values stay known for the rest of the process.
fn sanitise_with_known_values(c: &mut Criterion) {
    redact::remember((0..20).map(|i| format!("known-secret-value-{i:02}-Zq8Wm3")));
    let output = audit_data::row(5).payload;
    let call = audit_data::row(2).payload;
    let mut group = c.benchmark_group("audit_sanitize_known_values");
    group.throughput(Throughput::Bytes(output.to_string().len() as u64));
    group.bench_function("tool_output_2kb", |b| b.iter(|| redact::sanitize(&output)));
    group.throughput(Throughput::Bytes(call.to_string().len() as u64));
    group.bench_function("tool_call_arguments", |b| b.iter(|| redact::sanitize(&call)));
    group.finish();
}

criterion_group!(benches, sanitise, ingest, queries, sanitise_with_known_values);
criterion_main!(benches);
