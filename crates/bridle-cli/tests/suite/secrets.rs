//! A whole session seeded with secrets of every shape — in the user's message, the model's tool
//! arguments, a command's output, a file change and the model's own text — leaves none of them
//! in the audit log's bytes (the database and its WAL) or its export, while the conversation
//! store keeps what the model saw.

use serde_json::json;

use super::aimock::Aimock;
use super::bridle::*;

/// Secrets built at run time (no scanner mistakes this file for a leak); each with a distinctive
/// piece that must not appear on disk.
fn secrets() -> Vec<(&'static str, String, String)> {
    let body = |tag: &str| format!("{tag}Zq8Wm3Kx7Np2Rt5Vy9Lb4Hc6");
    let openai = format!("sk-proj-{}{}", body("Op"), body("Oq"));
    let anthropic = format!("sk-ant-api03-{}-{}", body("An"), body("Ao"));
    let aws = format!("AKIA{}", "QX7M2K9L4P8R6T3W");
    let github = format!("ghp_{}", body("Gh"));
    let slack = format!("xoxb-2048-{}", body("Sl"));
    let bearer = body("Be");
    let jwt_sig = body("Jw");
    let jwt = format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.{jwt_sig}");
    let pem_body = format!("MIIEowIBAAKCAQEA{}", body("Pe"));
    let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----");
    let password = format!("pw-{}", body("Pw"));
    let (stripe, google, sendgrid) = (
        format!("sk_live_{}", body("St")),
        format!("AIza{}abcdefghi", body("Go")),
        format!("SG.{}.{}", body("Sg"), body("Sh")),
    );
    let (gitlab, npm, hf) = (
        format!("glpat-{}", body("Gl")),
        format!("npm_{}abcdefghijk", body("Np")),
        format!("hf_{}{}", body("Hf"), body("Hg")),
    );
    let azure = body("Az").repeat(2);
    let aws_secret = format!("wJalr/{}EXAMPLEKEY", body("Aw"));
    let (db, docker, htpasswd) =
        (format!("Db-{}", body("x")), format!("Dk-{}", body("y")), format!("Ht-{}", body("z")));
    vec![
        ("openai", openai.clone(), openai[8..40].to_string()),
        ("anthropic", anthropic.clone(), anthropic[13..40].to_string()),
        ("aws", aws.clone(), aws[4..].to_string()),
        ("github", github.clone(), github[4..].to_string()),
        ("slack", slack.clone(), slack[10..].to_string()),
        ("bearer", format!("Authorization: Bearer {bearer}"), bearer),
        ("jwt", jwt.clone(), jwt_sig),
        ("pem", pem, pem_body),
        ("password", format!("password={password}"), password),
        ("stripe", stripe.clone(), stripe[8..].to_string()),
        ("google", google.clone(), google[4..].to_string()),
        ("sendgrid", sendgrid.clone(), sendgrid[3..30].to_string()),
        ("gitlab", gitlab.clone(), gitlab[6..].to_string()),
        ("npm", npm.clone(), npm[4..].to_string()),
        ("huggingface", hf.clone(), hf[3..].to_string()),
        ("azure", format!("AccountName=a;AccountKey={azure}=="), azure),
        ("aws-configure", format!("aws configure set aws_secret_access_key {aws_secret}"), aws_secret),
        ("db-pass", format!("DB_PASS={db} MYSQL_PWD={db}"), db),
        ("docker", format!("docker login -u me -p {docker} registry.example"), docker),
        ("htpasswd", format!("htpasswd -b .htpasswd bob {htpasswd}"), htpasswd),
    ]
}

#[tokio::test]
async fn no_secret_reaches_the_audit_log_but_the_conversation_keeps_them() {
    let all = secrets();
    let text_of = |label: &str| all.iter().find(|s| s.0 == label).unwrap().1.clone();
    let dirs = Dirs::new();
    let leak: String = all.iter().map(|(_, s, _)| format!("{s}\n")).collect();
    std::fs::write(dirs.workspace.join("leak.txt"), &leak).unwrap();

    // The model's script, written for this run.
    let fixtures = tempfile::tempdir().unwrap();
    let command = format!("cat leak.txt; echo {}; echo '{}'", text_of("github"), text_of("bearer"));
    let env_file = format!("AWS_ACCESS_KEY_ID={}\napi_key={}\n", text_of("aws"), text_of("openai"));
    let final_text =
        format!("I found {} and {} and {} in leak.txt.", text_of("slack"), text_of("jwt"), text_of("anthropic"));
    let script = json!({"fixtures": [
        {"match": {"userMessage": "check the leak", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "call_cat", "name": "bash", "arguments": {"command": command}},
            {"id": "call_env", "name": "write_file", "arguments": {"path": "creds.env", "content": env_file}}
         ]}},
        {"match": {"userMessage": "check the leak", "hasToolResult": true},
         "response": {"content": final_text}}
    ]});
    std::fs::write(fixtures.path().join("secrets.json"), script.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;

    let prompt = format!("check the leak, my key is {}", text_of("password"));
    let base = format!("{}/v1", mock.url);
    let args =
        ["run", &prompt, "--mode", "bypass", "--json", "--provider", "openai", "--base-url", &base, "--model", "m"];
    let out = bridle(&dirs, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    assert!(events.iter().any(|e| e["type"] == "toolCallEnd" && e["status"] == "ok"), "{events:?}");

    let export = dirs.data.join("audit.jsonl");
    let out = bridle(&dirs, &["audit", "export", export.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let exported = std::fs::read_to_string(&export).unwrap();
    for kind in [
        "session_started",
        "user_message",
        "model_request",
        "tool_call",
        "guard_decision",
        "tool_started",
        "tool_completed",
        "file_changed",
    ] {
        assert!(exported.contains(&format!("\"kind\":\"{kind}\"")), "no {kind} row in the export");
    }

    let mut files = vec![export.clone(), dirs.data.join("audit.db")];
    let wal = dirs.data.join("audit.db-wal");
    if wal.exists() {
        files.push(wal);
    }
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        for (label, secret, piece) in &all {
            for needle in [secret.as_bytes(), piece.as_bytes()] {
                assert!(
                    !bytes.windows(needle.len()).any(|w| w == needle),
                    "{label} secret found in {}",
                    file.display()
                );
            }
        }
    }

    // The conversation store is the user's own record of what the model saw: it keeps them.
    let session = events[0]["sessionId"].as_str().unwrap();
    let shown = stdout(&bridle(&dirs, &["sessions", "show", session]).await);
    assert!(shown.contains(&text_of("github")) && shown.contains(&text_of("slack")));
}

/// The user's shell holds credentials; the agent's commands never see them: the environment is
/// an allow-list (`PATH`, `HOME`, `LANG`, ... and the config's `[sandbox] env`), and even a
/// listed name stays behind when its value looks secret (a URL with a password).
#[tokio::test]
async fn the_shell_environment_keeps_no_secret() {
    let dirs = Dirs::new();
    let fixtures = tempfile::tempdir().unwrap();
    let script = json!({"fixtures": [
        {"match": {"userMessage": "show env", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "call_env", "name": "bash", "arguments": {"command": "env"}}]}},
        {"match": {"userMessage": "show env", "hasToolResult": true}, "response": {"content": "done"}}
    ]});
    std::fs::write(fixtures.path().join("env.json"), script.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;
    let body = "Zq8Wm3Kx7Np2Rt5Vy9Lb4Hc6";
    let secrets = [
        ("DATABASE_URL", format!("postgres://app:Pg{body}@db.internal:5432/app")),
        ("MYSQL_PWD", format!("My{body}")),
        ("GITHUB_PAT", format!("Gp{body}")),
        ("DB_PASS", format!("Dp{body}")),
        ("DEPLOY_HELPER", format!("sk_live_Dh{body}")),
        ("OPENAI_API_KEY", format!("sk-proj-Oa{body}")),
    ];
    let mut env: Vec<(&str, &str)> = secrets.iter().map(|(n, v)| (*n, v.as_str())).collect();
    env.push(("BRIDLE_TEST_PLAIN", "visible-value"));
    env.push(("BRIDLE_TEST_UNLISTED", "unlisted-value"));
    env.push(("LANG", "C.UTF-8"));
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(dirs.data.join("config.toml"), "[sandbox]\nenv = [\"BRIDLE_TEST_PLAIN\", \"DATABASE_URL\"]\n")
        .unwrap();
    let base = format!("{}/v1", mock.url);
    let args =
        ["run", "show env", "--mode", "bypass", "--json", "--provider", "openai", "--base-url", &base, "--model", "m"];
    let out = bridle_with_env(&dirs.data, &dirs.workspace, &args, &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let end = json_lines(&out).into_iter().find(|e| e["type"] == "toolCallEnd").expect("the bash call ended");
    let output = end["result"]["output"].as_str().unwrap_or_default().to_string();
    assert!(output.contains("BRIDLE_TEST_PLAIN=visible-value"), "{output}");
    assert!(output.contains("LANG="), "{output}");
    assert!(!output.contains("BRIDLE_TEST_UNLISTED"), "a name not on the allow-list reached the command:\n{output}");
    for (name, value) in &secrets {
        assert!(!output.contains(&format!("{name}=")), "{name} reached the command:\n{output}");
        assert!(!output.contains(&value[2..]), "the value of {name} reached the command");
    }
}
