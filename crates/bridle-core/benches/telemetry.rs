//! What exporting to a collector (DESIGN §17) costs the audit log: appending realistic rows with
//! `[telemetry]` off and on (a loopback collector answering 200), in the same run, and what the
//! exporter's own step costs per row (`offer`: the row handed to the bounded queue). Before the
//! benchmarks it prints the memory the queue holds at its bound, measured as the growth of this
//! process's resident set while a collector that never answers lets it fill.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/audit_data.rs"]
mod audit_data;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use bridle_core::audit::{AuditLog, AuditRecord};
use bridle_core::telemetry::{Telemetry, QUEUE_BOUND};
use bridle_protocol::AuditEvent;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const BATCH: u64 = 1000;

/// A collector on loopback that answers every request 200 with an empty body.
fn collector() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if stream.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// A collector that accepts connections and never answers: the exporter's one request hangs.
fn stuck_collector() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    url
}

fn event(i: u64, r: &AuditRecord) -> AuditEvent {
    AuditEvent {
        id: i as i64 + 1,
        at: r.at,
        session_id: r.session_id.clone(),
        turn_id: r.turn_id.clone(),
        call_id: r.call_id.clone(),
        tool: r.tool.clone(),
        kind: r.kind.as_str().into(),
        decision: r.decision,
        source: r.source,
        status: r.status.clone(),
        latency_ms: r.latency_ms,
        payload: bridle_core::redact::sanitize(&r.payload),
        prev_hash: "0".repeat(64),
        hash: "f".repeat(64),
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:").map(|v| v.trim().trim_end_matches(" kB").parse().unwrap()))
        .unwrap()
}

fn queue_memory() {
    let telemetry = Telemetry::start_with(stuck_collector(), HashMap::new(), false, QUEUE_BOUND).unwrap();
    // Measured from before the rows exist: what stays is what the queue (and the batch the
    // worker took before its request hung) holds; the rows past the bound are dropped and freed.
    std::thread::sleep(Duration::from_millis(300));
    let before = rss_kib();
    let events: Vec<AuditEvent> = (0..QUEUE_BOUND as u64 + 2048).map(|i| event(i, &audit_data::row(i))).collect();
    let bytes: usize = events.iter().map(|e| e.payload.to_string().len()).sum();
    telemetry.offer(events, 0);
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib();
    eprintln!(
        "telemetry queue at its bound ({QUEUE_BOUND} rows + one batch in flight, {:.0} B of payload JSON a row): \
         resident set +{:.1} MiB",
        bytes as f64 / (QUEUE_BOUND as f64 + 2048.0),
        (after.saturating_sub(before)) as f64 / 1024.0
    );
    drop(telemetry.shutdown(Duration::from_millis(10), || 0));
}

fn append(c: &mut Criterion) {
    queue_memory();
    let url = collector();
    let mut group = c.benchmark_group("audit_append");
    group.throughput(Throughput::Elements(BATCH));
    group.sample_size(10);
    for on in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let telemetry = on.then(|| Telemetry::start_with(url.clone(), HashMap::new(), false, QUEUE_BOUND).unwrap());
        let log = AuditLog::open(dir.path()).unwrap().with_telemetry(telemetry);
        let mut next = 0u64;
        group.bench_function(if on { "1000_rows_telemetry_on" } else { "1000_rows_telemetry_off" }, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let rows: Vec<AuditRecord> = (next..next + BATCH).map(audit_data::row).collect();
                    next += BATCH;
                    let start = Instant::now();
                    log.append(&rows).unwrap();
                    total += start.elapsed();
                }
                total
            })
        });
    }
    let telemetry = Telemetry::start_with(url, HashMap::new(), false, QUEUE_BOUND).unwrap();
    group.bench_function("offer_1000_rows", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let events: Vec<AuditEvent> = (0..BATCH).map(|i| event(i, &audit_data::row(i))).collect();
                let start = Instant::now();
                telemetry.offer(events, 0);
                total += start.elapsed();
                // Let the worker drain, so the queue is not full for the next iteration.
                std::thread::sleep(Duration::from_millis(50));
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, append);
criterion_main!(benches);
