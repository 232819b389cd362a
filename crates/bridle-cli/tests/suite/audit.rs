//! `bridle audit`: listing with filters, verify against a log tampered with the real `sqlite3`
//! tool, export, and no secret on disk. The log is seeded through the library, as the engine
//! writes it.

use bridle_core::audit::{AuditKind, AuditLog, AuditRecord};
use bridle_protocol::{AuditEvent, Decision, DecisionSource};
use serde_json::{json, Value};

use super::bridle::{bridle, json_lines, stderr, stdout, Dirs};

/// 50 rows: sessions s0..s2 in turn, tools bash/read_file alternating, every fifth row a guard
/// decision (deny on multiples of ten).
fn seed(dirs: &Dirs, n: i64) {
    let log = AuditLog::open(&dirs.data).unwrap();
    let records: Vec<AuditRecord> = (1..=n)
        .map(|i| {
            let mut r = AuditRecord::new(AuditKind::ToolCall, 1_700_000_000_000 + i * 1000)
                .session(format!("s{}", i % 3))
                .tool(if i % 2 == 0 { "bash" } else { "read_file" })
                .payload(json!({"n": i, "note": format!("row number {i}")}));
            if i % 5 == 0 {
                r.kind = AuditKind::GuardDecision;
                let decision = if i % 10 == 0 { Decision::Deny } else { Decision::Allow };
                r = r.decision(decision, DecisionSource::Mode);
            }
            r
        })
        .collect();
    log.append(&records).unwrap();
}

/// Runs SQL on the audit database with the `sqlite3` command-line tool; the append-only
/// triggers go first, as they would for anyone editing the file by hand.
fn sqlite3(dirs: &Dirs, sql: &str) {
    let db = dirs.data.join("audit.db");
    let script = format!("DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_no_delete; {sql}");
    let out = std::process::Command::new("sqlite3").arg(&db).arg(script).output().unwrap();
    assert!(out.status.success(), "sqlite3: {}", String::from_utf8_lossy(&out.stderr));
}

async fn verify(dirs: &Dirs) -> (i32, Value, String) {
    let out = bridle(dirs, &["audit", "verify"]).await;
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    (out.status.code().unwrap(), report, stderr(&out))
}

fn ids(lines: &[Value]) -> Vec<i64> {
    lines.iter().map(|l| l["id"].as_i64().unwrap()).collect()
}

#[tokio::test]
async fn filters_select_rows_and_print_oldest_first() {
    let dirs = Dirs::new();
    seed(&dirs, 50);
    let out = bridle(&dirs, &["audit", "--json", "--limit", "1000"]).await;
    assert_eq!(out.status.code(), Some(0));
    let all = json_lines(&out);
    assert_eq!(ids(&all), (1..=50).collect::<Vec<_>>());
    let first: AuditEvent = serde_json::from_value(all[0].clone()).unwrap();
    assert_eq!(first.kind, "tool_call");

    let out = bridle(&dirs, &["audit", "--json", "--session", "s1", "--limit", "1000"]).await;
    assert_eq!(json_lines(&out).len(), 17);

    let out = bridle(&dirs, &["audit", "--json", "--kind", "guard_decision", "--decision", "deny"]).await;
    assert_eq!(ids(&json_lines(&out)), vec![10, 20, 30, 40, 50]);

    let out = bridle(&dirs, &["audit", "--json", "--tool", "bash", "--limit", "3"]).await;
    assert_eq!(ids(&json_lines(&out)), vec![46, 48, 50]);

    let out = bridle(&dirs, &["audit", "--json", "--text", "row number 33\""]).await;
    assert_eq!(ids(&json_lines(&out)), vec![33]);

    let out = bridle(&dirs, &["audit", "--decision", "deny"]).await;
    let table = stdout(&out);
    assert_eq!(table.lines().count(), 5);
    assert!(table.lines().all(|l| l.contains("guard_decision") && l.contains("deny/mode")), "{table}");

    let out = bridle(&dirs, &["audit", "--kind", "no_such_kind"]).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn verify_passes_on_an_untouched_log_from_any_folder() {
    let dirs = Dirs::new();
    seed(&dirs, 50);
    let (code, report, human) = verify(&dirs).await;
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["intact"], true);
    assert_eq!(report["rows"], 50);
    assert!(human.contains("intact: 50 rows checked"), "{human}");

    // No workspace needed to read the log.
    let out = super::bridle::bridle_in(&dirs.data, &dirs.data.join("nowhere"), &["audit", "verify"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test]
async fn verify_names_an_edited_row() {
    let dirs = Dirs::new();
    seed(&dirs, 50);
    sqlite3(&dirs, r#"UPDATE audit SET payload = '{"n":5,"note":"nothing to see"}' WHERE id = 5;"#);
    let (code, report, human) = verify(&dirs).await;
    assert_eq!(code, 1);
    assert_eq!(report["intact"], false);
    assert_eq!(report["firstBad"]["id"], 5);
    assert_eq!(report["firstBad"]["problem"], "altered");
    assert!(human.contains("broken at row 5"), "{human}");
}

#[tokio::test]
async fn verify_names_a_deleted_row() {
    let dirs = Dirs::new();
    seed(&dirs, 50);
    sqlite3(&dirs, "DELETE FROM audit WHERE id = 7;");
    let (code, report, human) = verify(&dirs).await;
    assert_eq!(code, 1);
    assert_eq!(report["firstBad"]["id"], 7);
    assert_eq!(report["firstBad"]["problem"], "missing");
    assert!(human.contains("row 7 is missing"), "{human}");
}

#[tokio::test]
async fn verify_catches_a_truncated_tail_through_the_head() {
    let dirs = Dirs::new();
    seed(&dirs, 50);
    sqlite3(&dirs, "DELETE FROM audit WHERE id > 40;");
    let (code, report, human) = verify(&dirs).await;
    assert_eq!(code, 1);
    assert_eq!(report["rows"], 40);
    assert_eq!(report["firstBad"]["id"], 41);
    assert_eq!(report["firstBad"]["problem"], "truncated");
    assert!(human.contains("the head names row 50"), "{human}");
}

#[tokio::test]
async fn export_writes_jsonl_of_every_row() {
    let dirs = Dirs::new();
    seed(&dirs, 50);
    let file = dirs.workspace.join("audit.jsonl");
    let out = bridle(&dirs, &["audit", "export", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "50");
    let text = std::fs::read_to_string(&file).unwrap();
    let events: Vec<AuditEvent> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len(), 50);
    assert!(events.windows(2).all(|w| w[1].prev_hash == w[0].hash && w[1].id == w[0].id + 1));

    let out = bridle(&dirs, &["audit", "export", dirs.workspace.join("no/such/dir/a.jsonl").to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(1));
}

#[tokio::test]
async fn secrets_never_reach_the_database_or_the_export() {
    let dirs = Dirs::new();
    let openai = format!("sk-proj-{}", "Hq4Rz8Lw2Xn6Vb1Kt5Ym9Pc3".repeat(2));
    let github = format!("ghp_{}", "Zt7Qw3Er9Ty1Ui5Op2As6Df0Gh4J");
    let password = "correct-horse-battery-Staple-42";
    let log = AuditLog::open(&dirs.data).unwrap();
    log.append(&[
        AuditRecord::new(AuditKind::ToolCall, 1).tool("bash").payload(json!({
            "command": format!("OPENAI_API_KEY={openai} git push https://bob:{password}@example.com/r.git"),
        })),
        AuditRecord::new(AuditKind::ToolCompleted, 2).tool("bash").payload(json!({
            "output": format!("token: {github}\n"), "env": {"DB_PASSWORD": password},
        })),
    ])
    .unwrap();
    drop(log);
    let file = dirs.workspace.join("audit.jsonl");
    let out = bridle(&dirs, &["audit", "export", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0));
    let listing = bridle(&dirs, &["audit", "--json"]).await;
    let mut places = vec![("listing".to_string(), listing.stdout.clone())];
    for name in ["audit.db", "audit.db-wal", "audit.head"] {
        if let Ok(bytes) = std::fs::read(dirs.data.join(name)) {
            places.push((name.to_string(), bytes));
        }
    }
    places.push(("export".into(), std::fs::read(&file).unwrap()));
    for (place, bytes) in &places {
        for secret in [&openai[8..], &github[4..], password] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} found in {place}");
        }
    }
}
