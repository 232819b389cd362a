//! The log end to end: appends, the chain, tampering, the head, concurrency, the sink, and the
//! byte-level check that no secret reaches the disk.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use bridle_protocol::{Decision, DecisionSource};
use pretty_assertions::assert_eq;
use rusqlite::Connection;
use serde_json::json;

use super::*;

fn record(i: i64) -> AuditRecord {
    let kind = AuditKind::ALL[(i as usize) % AuditKind::ALL.len()];
    let mut r = AuditRecord::new(kind, 1_700_000_000_000 + i)
        .session(format!("s{}", i % 3))
        .turn(format!("t{i}"))
        .tool(if i % 2 == 0 { "bash" } else { "read_file" })
        .payload(json!({"i": i, "text": format!("event {i}")}));
    if kind == AuditKind::GuardDecision {
        r = r.decision(if i % 4 == 0 { Decision::Deny } else { Decision::Allow }, DecisionSource::Mode);
    }
    r
}

fn seeded(n: i64) -> (tempfile::TempDir, AuditLog) {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path()).unwrap();
    let records: Vec<AuditRecord> = (1..=n).map(record).collect();
    log.append(&records).unwrap();
    (dir, log)
}

/// Edits the file the way an attacker with `sqlite3` would: triggers dropped first.
fn tamper(dir: &Path, sql: &str) {
    let conn = Connection::open(dir.join(DB_FILE)).unwrap();
    conn.execute_batch("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;").unwrap();
    conn.execute_batch(sql).unwrap();
}

fn first_bad(log: &AuditLog) -> (i64, Problem) {
    let report = log.verify().unwrap();
    assert!(!report.intact, "{report:?}");
    let bad = report.first_bad.unwrap();
    (bad.id, bad.problem)
}

#[test]
fn appended_rows_form_a_verified_chain() {
    let (dir, log) = seeded(50);
    log.append(&[record(51)]).unwrap();
    let report = log.verify().unwrap();
    assert_eq!(
        report,
        VerifyReport { intact: true, rows: 51, last_id: 51, head_id: Some(51), beyond_head: 0, first_bad: None }
    );
    let all = log.query(&AuditFilter::default()).unwrap();
    assert_eq!(all.len(), 51);
    assert_eq!(all.last().unwrap().prev_hash, GENESIS);
    assert_eq!(all[0].prev_hash, all[1].hash);
    assert!(std::fs::read_to_string(dir.path().join(HEAD_FILE)).unwrap().contains(&all[0].hash));
}

#[test]
fn an_empty_log_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path()).unwrap();
    assert!(log.verify().unwrap().intact);
    log.append(&[]).unwrap();
    assert_eq!(log.verify().unwrap().rows, 0);
}

#[test]
fn the_log_refuses_updates_and_deletes() {
    let (dir, _log) = seeded(3);
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    assert!(conn.execute("UPDATE audit SET payload = '{}' WHERE id = 1", []).is_err());
    assert!(conn.execute("DELETE FROM audit WHERE id = 1", []).is_err());
}

#[test]
fn an_edited_payload_names_its_row() {
    let (dir, log) = seeded(20);
    tamper(dir.path(), r#"UPDATE audit SET payload = '{"i":5,"text":"nothing happened"}' WHERE id = 5"#);
    assert_eq!(first_bad(&log), (5, Problem::Altered));
}

#[test]
fn a_rehashed_row_breaks_the_next_link() {
    let (dir, log) = seeded(20);
    // Recompute row 5's hash after editing it: row 5 checks out, row 6 no longer links.
    tamper(dir.path(), "UPDATE audit SET status = 'ok' WHERE id = 5");
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    let row = conn
        .query_row(&format!("SELECT {} FROM audit WHERE id = 5", chain::COLUMNS), [], chain::StoredRow::from_row)
        .unwrap();
    conn.execute("UPDATE audit SET hash = ?1 WHERE id = 5", [row.compute_hash()]).unwrap();
    assert_eq!(first_bad(&log), (6, Problem::BrokenLink));
}

#[test]
fn a_deleted_middle_row_is_named() {
    let (dir, log) = seeded(20);
    tamper(dir.path(), "DELETE FROM audit WHERE id = 7");
    assert_eq!(first_bad(&log), (7, Problem::Missing));
}

#[test]
fn a_truncated_tail_is_caught_by_the_head() {
    let (dir, log) = seeded(50);
    tamper(dir.path(), "DELETE FROM audit WHERE id > 40");
    let report = log.verify().unwrap();
    assert_eq!(report.rows, 40);
    let bad = report.first_bad.unwrap();
    assert_eq!((bad.id, bad.problem), (41, Problem::Truncated));
    assert!(bad.reason.contains("row 50"), "{}", bad.reason);

    // Appending afterwards does not hide it: the head stays where it was.
    log.append(&[record(1041), record(1042)]).unwrap();
    assert_eq!(first_bad(&log), (43, Problem::Truncated));
    log.append(&(1043..=1055).map(record).collect::<Vec<_>>()).unwrap();
    assert_eq!(first_bad(&log), (50, Problem::HeadMismatch));
}

#[test]
fn a_deleted_or_garbled_head_is_reported() {
    let (dir, log) = seeded(5);
    std::fs::remove_file(dir.path().join(HEAD_FILE)).unwrap();
    assert_eq!(first_bad(&log), (0, Problem::HeadUnreadable));
    // Reopening must not recreate it over existing rows.
    drop(log);
    let log = AuditLog::open(dir.path()).unwrap();
    assert_eq!(first_bad(&log), (0, Problem::HeadUnreadable));
    std::fs::write(dir.path().join(HEAD_FILE), "garbage").unwrap();
    assert_eq!(first_bad(&log), (0, Problem::HeadUnreadable));
}

#[test]
fn rows_beyond_the_head_still_verify() {
    let (dir, log) = seeded(10);
    let row3 = log.query(&AuditFilter { before_id: Some(4), limit: Some(1), ..AuditFilter::default() }).unwrap();
    // As if the process died after committing rows 4..=10 but before writing their head.
    head::write(dir.path(), &Head { id: 3, hash: row3[0].hash.clone() }).unwrap();
    let report = log.verify().unwrap();
    assert!(report.intact, "{report:?}");
    assert_eq!((report.head_id, report.beyond_head), (Some(3), 7));
    assert!(report.summary().contains("7 valid rows after the head"));
    // The next append moves the head to the true end.
    log.append(&[record(11)]).unwrap();
    let report = log.verify().unwrap();
    assert_eq!((report.intact, report.head_id, report.beyond_head), (true, Some(11), 0));
}

#[test]
fn two_handles_in_two_threads_extend_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let log = AuditLog::open(&path).unwrap();
                for i in 0..500 {
                    log.append(&[record(w * 10_000 + i)]).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let log = AuditLog::open(&path).unwrap();
    let report = log.verify().unwrap();
    assert_eq!((report.intact, report.rows, report.head_id), (true, 1000, Some(1000)), "{report:?}");
}

/// The writer half of [`two_processes_extend_one_chain`], run in a child process (this same
/// test binary); on its own, without the variable, it does nothing.
#[test]
fn child_appender() {
    let Some(dir) = std::env::var_os("BRIDLE_AUDIT_CHILD_DIR") else { return };
    let log = AuditLog::open(Path::new(&dir)).unwrap();
    for i in 0..300 {
        log.append(&[record(i)]).unwrap();
    }
}

#[test]
fn two_processes_extend_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["audit::tests::child_appender", "--exact", "--quiet"])
                .env("BRIDLE_AUDIT_CHILD_DIR", dir.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let log = AuditLog::open(dir.path()).unwrap();
    for i in 0..300 {
        log.append(&[record(i)]).unwrap();
    }
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let report = log.verify().unwrap();
    assert_eq!((report.intact, report.rows, report.head_id), (true, 900, Some(900)), "{report:?}");
}

#[test]
fn filters_pick_the_right_rows_newest_first() {
    let (_dir, log) = seeded(130);
    let q = |f: AuditFilter| log.query(&f).unwrap();
    let by_session = q(AuditFilter { session_id: Some("s1".into()), ..Default::default() });
    assert_eq!(by_session.len(), 44);
    assert!(by_session.windows(2).all(|w| w[0].id > w[1].id));
    assert!(by_session.iter().all(|e| e.session_id.as_deref() == Some("s1")));

    let denied =
        q(AuditFilter { kind: Some(AuditKind::GuardDecision), decision: Some(Decision::Deny), ..Default::default() });
    assert!(!denied.is_empty());
    assert!(denied.iter().all(|e| e.kind == "guard_decision" && e.decision == Some(Decision::Deny)));

    let limited = q(AuditFilter { tool: Some("bash".into()), limit: Some(5), ..Default::default() });
    assert_eq!(limited.iter().map(|e| e.id).collect::<Vec<_>>(), vec![130, 128, 126, 124, 122]);

    let window =
        q(AuditFilter { since: Some(1_700_000_000_010), until: Some(1_700_000_000_020), ..Default::default() });
    assert_eq!(window.len(), 10);

    let text = q(AuditFilter { text: Some("EVENT 77\"".into()), ..Default::default() });
    assert_eq!(text.iter().map(|e| e.id).collect::<Vec<_>>(), vec![77]);
    assert!(q(AuditFilter { text: Some("%".into()), ..Default::default() }).is_empty());

    let page = q(AuditFilter { before_id: Some(3), ..Default::default() });
    assert_eq!(page.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2, 1]);
}

#[test]
fn statistics_steer_a_two_column_filter_to_the_selective_index() {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path()).unwrap();
    // 100 sessions of 20 rows, 2 kinds: the session is the selective column.
    let records: Vec<AuditRecord> = (0..2000)
        .map(|i| {
            let kind = if i % 2 == 0 { AuditKind::ToolCall } else { AuditKind::ToolCompleted };
            AuditRecord::new(kind, i).session(format!("s{}", i / 20))
        })
        .collect();
    log.append(&records).unwrap();
    drop(log);
    let log = AuditLog::open(dir.path()).unwrap();
    let conn = log.conn().unwrap();
    assert!(schema::has_stats(&conn).unwrap());
    let plan: Vec<String> = conn
        .prepare("EXPLAIN QUERY PLAN SELECT id FROM audit WHERE session_id = 's7' AND kind = 'tool_call' ORDER BY id DESC LIMIT 100")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(plan.iter().any(|p| p.contains("audit_session")), "{plan:?}");
}

#[test]
fn export_writes_every_row_as_jsonl() {
    let (dir, log) = seeded(25);
    let file = dir.path().join("out").join("audit.jsonl");
    assert!(log.export(&file).is_err(), "the parent folder does not exist");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    assert_eq!(log.export(&file).unwrap(), 25);
    let text = std::fs::read_to_string(&file).unwrap();
    let events: Vec<bridle_protocol::AuditEvent> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.iter().map(|e| e.id).collect::<Vec<_>>(), (1..=25).collect::<Vec<_>>());
    assert!(text.lines().next().unwrap().contains("\"prevHash\""));
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1);
}

#[test]
fn the_sink_batches_flushes_and_drains_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let sink = AuditSink::start(AuditLog::open(dir.path()).unwrap());
    let clones: Vec<_> = (0..4).map(|_| sink.clone()).collect();
    let threads: Vec<_> = clones
        .into_iter()
        .enumerate()
        .map(|(t, s)| {
            std::thread::spawn(move || {
                for i in 0..2500 {
                    s.record(record(t as i64 * 10_000 + i));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    sink.flush().unwrap();
    let log = AuditLog::open(dir.path()).unwrap();
    assert_eq!(log.verify().unwrap().rows, 10_000);
    sink.record(record(1));
    drop(sink);
    assert_eq!(log.verify().unwrap().rows, 10_001);
    let disabled = AuditSink::disabled();
    disabled.record(record(1));
    disabled.flush().unwrap();
}

#[test]
fn a_full_queue_makes_record_wait_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Room for 3: the four threads wait for the writer over and over.
    let sink = AuditSink::start_with_room(AuditLog::open(dir.path()).unwrap(), 3);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let s = sink.clone();
            std::thread::spawn(move || (0..500).for_each(|i| s.record(record(t * 10_000 + i))))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    sink.flush().unwrap();
    assert_eq!(AuditLog::open(dir.path()).unwrap().verify().unwrap().rows, 2000);
}

#[test]
fn the_sink_reports_append_errors_on_flush() {
    let dir = tempfile::tempdir().unwrap();
    let sink = AuditSink::start(AuditLog::open(dir.path()).unwrap());
    // Break the table under the writer: every append now fails.
    Connection::open(dir.path().join(DB_FILE)).unwrap().execute_batch("DROP TABLE audit").unwrap();
    sink.record(record(1));
    let err = sink.flush().unwrap_err();
    assert!(err.to_string().contains("audit"), "{err}");
    sink.flush().unwrap();
}

/// The byte-level promise: seed every secret shape, then search the raw files for them.
#[test]
fn no_secret_reaches_the_disk() {
    let planted = fixtures::secrets();
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.jsonl");
    let sink = AuditSink::start(AuditLog::open(dir.path()).unwrap());
    for (i, payload) in fixtures::payloads(&planted).into_iter().enumerate() {
        let status = if i == 0 { format!("failed: token={}", planted[0].secret) } else { "ok".into() };
        sink.record(
            AuditRecord::new(AuditKind::ToolCompleted, i as i64)
                .session("s")
                .tool("bash")
                .status(status)
                .payload(payload),
        );
    }
    sink.flush().unwrap();
    let files = [DB_FILE.to_string(), format!("{DB_FILE}-wal"), HEAD_FILE.to_string(), "export.jsonl".to_string()];
    let check = |stage: &str| {
        for name in &files {
            let Ok(bytes) = std::fs::read(dir.path().join(name)) else { continue };
            for p in &planted {
                for needle in std::iter::once(&p.secret).chain(&p.pieces) {
                    assert!(
                        !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                        "{stage}: {} ({needle}) found in {name}",
                        p.label
                    );
                }
            }
        }
    };
    let log = AuditLog::open(dir.path()).unwrap();
    assert_eq!(log.export(&export).unwrap(), fixtures::payloads(&planted).len() as u64);
    assert!(std::fs::metadata(dir.path().join(format!("{DB_FILE}-wal"))).is_ok(), "the WAL is checked too");
    check("before checkpoint");
    log.conn().unwrap().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(log);
    drop(sink);
    check("after checkpoint and close");
    let exported = std::fs::read_to_string(&export).unwrap();
    assert!(exported.contains("[redacted:openai-key]") && exported.contains("[redacted:private-key]"));
}

/// A value Bridle knows by value (here remembered directly; in a run, from a `.env` a tool read)
/// has no shape at all, yet it is on disk in no column, no row of the export, no WAL page.
#[test]
fn a_secret_known_by_value_reaches_no_column_on_disk() {
    let value = "audit-known-Pq4Xr8Zt-value";
    crate::redact::remember([value]);
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::open(dir.path()).unwrap();
    let row = AuditRecord::new(AuditKind::ToolCompleted, 1)
        .session(format!("s-{value}"))
        .tool("bash")
        .status(format!("exit 0 {value}"))
        .payload(json!({"output": format!("echo {value}\n{value}\n"), value: [value]}));
    log.append(&[row]).unwrap();
    let export = dir.path().join("export.jsonl");
    log.export(&export).unwrap();
    for name in [DB_FILE.to_string(), format!("{DB_FILE}-wal"), "export.jsonl".to_string()] {
        let bytes = std::fs::read(dir.path().join(&name)).unwrap();
        assert!(!bytes.windows(value.len()).any(|w| w == value.as_bytes()), "found in {name}");
    }
    let stored = &log.query(&AuditFilter::default()).unwrap()[0];
    assert_eq!(stored.payload["output"], "echo [redacted:value]\n[redacted:value]\n");
    assert!(log.verify().unwrap().intact);
}
