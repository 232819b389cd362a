//! `bridle sessions export` and `bridle audit verify --export`: a session with a read of a file
//! holding a secret, a denied command and an approved write, exported as Markdown and JSON —
//! its messages and diff are there, none of the run's secrets — verified against the log, and
//! refused, naming the item, after one character of a tool result in the export is changed.

use serde_json::Value;

use super::bridle::*;
use super::telemetry::{audit, run, API_KEY, FILE_SECRET};

async fn verify(dirs: &Dirs, file: &std::path::Path) -> (Option<i32>, Value, String) {
    let out = bridle(dirs, &["audit", "verify", "--export", file.to_str().unwrap()]).await;
    (out.status.code(), serde_json::from_str(stdout(&out).trim()).unwrap(), stderr(&out))
}

#[tokio::test]
async fn an_export_holds_the_session_without_secrets_and_verify_names_an_edited_item() {
    let (dirs, _, _) = run(None).await;
    let rows = audit(&dirs).await;
    let session = rows[0]["sessionId"].as_str().unwrap().to_string();
    let read = rows.iter().find(|r| r["kind"] == "tool_completed" && r["tool"] == "read_file").unwrap();
    let read_id = read["id"].as_i64().unwrap();

    for format in ["md", "json"] {
        let file = dirs.data.parent().unwrap().join(format!("export.{format}"));
        let out =
            bridle(&dirs, &["sessions", "export", &session, "--format", format, "--out", file.to_str().unwrap()]).await;
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(&out));
        let text = std::fs::read_to_string(&file).unwrap();
        for wanted in ["record it; my key is", "Done.", "+hello", "git push origin main", "token = "] {
            assert!(text.contains(wanted), "{format}: `{wanted}` missing");
        }
        for secret in [API_KEY, FILE_SECRET] {
            assert!(!text.contains(secret), "{format}: a secret was exported");
        }
        let head = rows.last().unwrap();
        assert!(text.contains(head["hash"].as_str().unwrap()), "{format}: the chain head's hash");
        for row in &rows {
            assert!(text.contains(row["hash"].as_str().unwrap()), "{format}: row {} and its hash", row["id"]);
        }

        let (code, check, err) = verify(&dirs, &file).await;
        assert_eq!(code, Some(0), "{format}: {check} {err}");
        assert_eq!(check["items"].as_u64(), Some(rows.len() as u64));

        // One character of the read's result changed.
        let edited = match format {
            "json" => {
                let mut doc: Value = serde_json::from_str(&text).unwrap();
                let item = doc["items"].as_array_mut().unwrap().iter_mut().find(|i| i["id"] == read_id).unwrap();
                let output = item["payload"]["output"].as_str().unwrap().replacen("token", "tokem", 1);
                item["payload"]["output"] = Value::String(output);
                serde_json::to_string_pretty(&doc).unwrap()
            }
            _ => {
                let at = text.find(&format!("· row {read_id}\n")).unwrap();
                let offset = at + text[at..].find("token = ").unwrap();
                format!("{}tokem{}", &text[..offset], &text[offset + 5..])
            }
        };
        assert_ne!(edited, text);
        std::fs::write(&file, edited).unwrap();
        let (code, check, err) = verify(&dirs, &file).await;
        println!("{format}: {err}");
        assert_eq!(code, Some(1), "{format}: {check}");
        assert_eq!(check["firstBad"]["id"].as_i64(), Some(read_id), "{format}: {check}");
        let reason = check["firstBad"]["reason"].as_str().unwrap();
        assert!(reason.contains(&format!("row {read_id}, tool_completed")), "{format}: {reason}");
    }
}
