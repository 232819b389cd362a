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
/// an allow-list (`PATH`, `HOME`, `LANG`, `LC_*` holding a locale, ... and the config's
/// `[sandbox] env`), and even a listed name stays behind when its value looks secret (a URL with
/// a password).
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
        // A locale category passes holding a locale only, and never under a secret-looking name.
        ("LC_API_KEY", format!("Lc{body}")),
        ("LC_MESSAGES", format!("Lm{body}")),
    ];
    let mut env: Vec<(&str, &str)> = secrets.iter().map(|(n, v)| (*n, v.as_str())).collect();
    env.push(("BRIDLE_TEST_PLAIN", "visible-value"));
    env.push(("BRIDLE_TEST_UNLISTED", "unlisted-value"));
    env.push(("LANG", "C.UTF-8"));
    env.push(("LC_TIME", "de_DE.UTF-8"));
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
    assert!(output.contains("LANG=") && output.contains("LC_TIME=de_DE.UTF-8"), "{output}");
    assert!(!output.contains("BRIDLE_TEST_UNLISTED"), "a name not on the allow-list reached the command:\n{output}");
    for (name, value) in &secrets {
        assert!(!output.contains(&format!("{name}=")), "{name} reached the command:\n{output}");
        assert!(!output.contains(&value[2..]), "the value of {name} reached the command");
    }
}

/// The second red-team pass's shapes, as (label, the text carrying it, a distinctive piece that
/// must not reach the disk, the marker the audit shows instead). Made-up values of the real
/// shapes, built at run time.
fn new_shapes() -> Vec<(&'static str, String, String, &'static str)> {
    let b62 = &"aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3kL5mN7pQ9rS1tU3vW5".repeat(2);
    let hex = "0123456789abcdef0123456789abcdef";
    let piece = |s: &str, from: usize| s[from..from + 16].to_string();
    let one = |label, text: String, at: usize, marker| {
        let p = piece(&text, at);
        (label, text, p, marker)
    };
    vec![
        one("groq", format!("gsk_{}", &b62[..52]), 8, "groq-key"),
        one("replicate", format!("r8_{}", &b62[1..38]), 6, "replicate-token"),
        one("perplexity", format!("pplx-{}", &b62[2..50]), 8, "gitleaks:perplexity-api-key"),
        one("xai", format!("xai-{}", &b62[..64]), 10, "xai-key"),
        one("nvidia", format!("nvapi-{}", &b62[3..64]), 10, "nvidia-key"),
        one("langsmith", format!("lsv2_pt_{hex}_{}", &hex[..10]), 10, "langsmith-key"),
        one("tavily", format!("tvly-dev-{}", &b62[4..36]), 12, "tavily-key"),
        one("google-oauth", format!("ya29.a0{}", &b62[5..65]), 10, "google-oauth-token"),
        one("google-secret", format!("GOCSPX-{}", &b62[6..34]), 9, "google-oauth-secret"),
        one("telegram", format!("bot 123456789:AA{}", &b62[7..40]), 16, "telegram-bot-token"),
        one("vault", format!("hvs.{}", &b62[..96]), 8, "gitleaks:vault-service-token"),
        one("databricks", format!("dapi{hex}"), 6, "gitleaks:databricks-api-token"),
        one("shopify", format!("shpat_{hex}"), 8, "gitleaks:shopify-access-token"),
        one("twilio", format!("twilio SK{}", "fedcba9876543210fedcba9876543210"), 10, "gitleaks:twilio-api-key"),
        one("aws-session", format!("IQoJb3JpZ2luX2VjE{}", &b62[8..68]), 20, "aws-session-token"),
        one(
            "slack-webhook",
            format!("https://hooks.slack.com/services/T0AB/B0CD/{}", &b62[9..33]),
            44,
            "slack-webhook",
        ),
        one(
            "discord-webhook",
            format!("https://discord.com/api/webhooks/1122334455/{}", &b62[10..44]),
            46,
            "discord-webhook",
        ),
        one("high-entropy", format!("DEPLOY_KEY={}", &b62[11..43]), 12, "high-entropy"),
        one(
            "seed",
            "seed phrase: abandon ability able about above absent absorb abstract absurd abuse access accident"
                .to_string(),
            40,
            "seed-phrase",
        ),
    ]
}

/// What looks like a secret and is not: it stays readable in the audit.
const LOOK_ALIKES: &[&str] = &[
    "3f786850e387550fdab836ed7e6dc881de23001b",
    "123e4567-e89b-12d3-a456-426614174000",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
];

/// Each new secret shape goes through `bridle run` three ways — a command's output, a file the
/// model writes, an MCP tool's arguments and answer (the real `server-everything` echo) — and
/// none reaches `audit.db`, its WAL or the export; each leaves its marker, and the look-alikes
/// stay as they were.
#[tokio::test]
async fn the_new_secret_shapes_reach_no_audit_file_through_a_command_a_file_or_an_mcp_call() {
    let shapes = new_shapes();
    let dirs = Dirs::new();
    // Each call carries a third of the shapes, so every string stays under the audit's cut.
    let thirds: Vec<String> = shapes
        .chunks(shapes.len().div_ceil(3))
        .map(|chunk| chunk.iter().map(|s| format!("{}\n", s.1)).collect())
        .collect();
    let alike: String = LOOK_ALIKES.iter().map(|a| format!("{a}\n")).collect();
    std::fs::write(dirs.workspace.join("shapes.txt"), format!("{alike}{}", thirds[0])).unwrap();

    let fixtures = tempfile::tempdir().unwrap();
    let script = json!({"fixtures": [
        {"match": {"userMessage": "carry the shapes", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "call_cat", "name": "bash", "arguments": {"command": "cat shapes.txt"}},
            {"id": "call_write", "name": "write_file", "arguments": {"path": "notes.txt", "content": thirds[1]}},
            {"id": "call_mcp", "name": "mcp__everything__echo", "arguments": {"message": thirds[2]}}
         ]}},
        {"match": {"userMessage": "carry the shapes", "hasToolResult": true}, "response": {"content": "Carried."}}
    ]});
    std::fs::write(fixtures.path().join("shapes.json"), script.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;
    let everything =
        super::aimock::repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(
        dirs.data.join("config.toml"),
        format!(
            "mode = \"bypass\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\
             [mcp.servers.everything]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
            mock.url,
            everything.display()
        ),
    )
    .unwrap();

    let out = bridle(&dirs, &["run", "carry the shapes", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ends: Vec<serde_json::Value> = json_lines(&out).into_iter().filter(|e| e["type"] == "toolCallEnd").collect();
    assert_eq!(ends.len(), 3, "{ends:?}");
    assert!(ends.iter().all(|e| e["status"] == "ok"), "{ends:?}");
    // The tools did their work with the real text: the file holds it, the echo answered it.
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("notes.txt")).unwrap(), thirds[1]);
    let results: String = ends.iter().map(|e| e["result"].to_string()).collect();
    assert!(results.contains("Echo: "), "the echo answered: {results}");

    let export = dirs.data.join("audit.jsonl");
    let out = bridle(&dirs, &["audit", "export", export.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let exported = std::fs::read_to_string(&export).unwrap();
    let mut files = vec![export, dirs.data.join("audit.db")];
    let wal = dirs.data.join("audit.db-wal");
    if wal.exists() {
        files.push(wal);
    }
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        for (label, _, piece, _) in &shapes {
            assert!(!bytes.windows(piece.len()).any(|w| w == piece.as_bytes()), "{label} found in {}", file.display());
        }
    }
    for (label, _, _, marker) in &shapes {
        assert!(exported.contains(&format!("[redacted:{marker}]")), "no `{marker}` marker for {label} in the export");
    }
    for alike in LOOK_ALIKES {
        assert!(exported.contains(alike), "the look-alike `{alike}` was redacted");
    }
}

/// `bridle audit export`'s text, and the raw bytes of every audit file (the export, `audit.db`,
/// its WAL): where a secret must not be.
async fn audit_bytes(dirs: &Dirs) -> (String, Vec<(std::path::PathBuf, Vec<u8>)>) {
    let export = dirs.data.join("audit.jsonl");
    let out = bridle(dirs, &["audit", "export", export.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut files = vec![export.clone(), dirs.data.join("audit.db"), dirs.data.join("audit.db-wal")];
    files.retain(|f| f.exists());
    let bytes = files.iter().map(|f| (f.clone(), std::fs::read(f).unwrap())).collect();
    (std::fs::read_to_string(&export).unwrap(), bytes)
}

const B62: &str = "RMf7NQ1V1OGcOxCHYgRDMYs7yVBCj9Z51dfAeIs7xPTB0LKxOTKcZHNnGAeaaPG6xeTLobuwHk03bUa5";
const HEX: &str = "69791986f4681ee30872e4ab0342579f0594635d0b82175cea2629167efb81690808e7ab6b3bf2e5";

/// Issue 37 part 8's shapes, as (marker, text): vendors' prefixes, password flags, key material.
/// Made-up values of the real formats, built at run time; `B62[4..16]` or `HEX[4..16]` is in each
/// one's secret, so that piece must be nowhere on disk.
fn part8_shapes() -> Vec<(&'static str, String)> {
    let (b, h) = (|n: usize| &B62[..n], |n: usize| &HEX[..n]);
    let wg = format!("{}Bmk=", &B62[..40]);
    vec![
        ("linear-key", format!("lin_api_{}", b(40))),
        ("doppler-token", format!("dp.st.prd.{}", b(43))),
        ("huggingface-token", format!("api_org_{}", b(34))),
        ("sentry-token", format!("sntryu_{}", h(64))),
        ("vercel-token", format!("vcp_{}", b(56))),
        ("supabase-key", format!("sbp_{}", h(40))),
        ("planetscale-token", format!("pscale_tkn_{}", b(43))),
        ("render-key", format!("rnd_{}", b(32))),
        ("tailscale-key", format!("tskey-api-k{}CNTRL-{}", b(10), &B62[..32])),
        ("1password-token", format!("ops_eyJ{}", b(60))),
        ("newrelic-key", format!("NRAK-{}", b(27).to_uppercase())),
        ("mailgun-key", format!("key-{}", h(32))),
        ("notion-token", format!("ntn_{}", b(46))),
        ("cloudflare-token", format!("cfut_{}{}", b(40), h(8))),
        ("docker-token", format!("dckr_pat_{}", b(27))),
        ("atlassian-token", format!("ATATT3xFfGF0{}", b(80))),
        ("contentful-token", format!("CFPAT-{}", b(43))),
        ("netlify-token", format!("nfp_{}", b(40))),
        ("pinecone-key", format!("pcsk_{}", b(50))),
        ("neon-key", format!("napi_{}", b(64))),
        ("sonar-token", format!("squ_{}", h(40))),
        ("figma-token", format!("figd_{}", b(40))),
        ("airtable-token", format!("pat{}.{}", b(14), h(64))),
        ("gitlab-token", format!("glpat-{}.01.{}", b(27), &B62[30..39])),
        ("wireguard-key", format!("PrivateKey = {wg}")),
        ("putty-key", format!("Private-Lines: 1\nAAAAIB{}\nPrivate-MAC: 00ff", b(38))),
        ("", format!("mysql -u root -p{} app", b(16))),
        ("", format!("mongosh -u admin -p {} --host db", b(16))),
        ("", format!("sqlcmd -U sa -P {} -S db", b(16))),
        ("", format!("7z a -p{} out.7z dir", b(16))),
        ("", format!("keytool -list -storepass {} -keypass {}", b(16), b(17))),
        ("", format!("openssl pkcs12 -passout pass:{} -in c.pem", b(16))),
        ("", format!("plink -pw {} bob@host", b(16))),
        ("", format!("ldapsearch -D cn=admin -w {} -b dc=x", b(16))),
        ("", format!("smbclient //srv/share -U alice%{}", b(16))),
        ("", format!("curl -u :{} https://x", b(16))),
        ("", format!("curl -b sid={} https://x", b(16))),
        ("", format!("curl --cookie \"sid={}; theme=dark\" https://x", b(16))),
    ]
}

/// A `.env` of 20 secrets with no shape at all: only the values Bridle learnt when `read_file`
/// read it tell them apart. Each, and each new shape, then goes through a command's output, a file
/// the model writes, an MCP echo, a search of a key file and the provider's own key: none reaches
/// `audit.db`, its WAL or the export.
#[tokio::test]
async fn secrets_known_by_value_and_the_part8_shapes_reach_no_audit_file() {
    let words = ["orchid", "lantern", "copper", "meadow", "harbor"];
    let values: Vec<String> = (0..20)
        .map(|i| format!("{}-{}-{}{i:02}", words[i % 5], words[(i + 2) % 5], ["ux", "qv", "zw", "jk"][i % 4]))
        .collect();
    let env: String = values.iter().enumerate().map(|(i, v)| format!("SERVICE_{i}_SECRET={v}\n")).collect();
    let provider_key = "provider-key-Wq8Zr3Lm-unshaped";
    let shapes = part8_shapes();
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join(".env"), format!("# local\nGREETING=hello\n{env}")).unwrap();
    // Lines of 64 base64 characters, the last one shorter with its padding.
    let pem_body =
        [format!("MIIEpAIBAAKCAQEA{}", &B62[32..80]), B62[16..80].to_string(), format!("{}==", &B62[40..76])];
    std::fs::create_dir_all(dirs.workspace.join("keys")).unwrap();
    std::fs::write(
        dirs.workspace.join("keys/deploy.txt"),
        format!("-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n", pem_body.join("\n")),
    )
    .unwrap();
    let aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

    // Two halves of the shapes per call keep every string under the audit's cut.
    let carried: Vec<String> = shapes
        .chunks(shapes.len().div_ceil(2))
        .map(|half| {
            format!(
                "{}\n{}\n{provider_key}\n",
                half.iter().map(|s| s.1.as_str()).collect::<Vec<_>>().join("\n"),
                values.join(" ")
            )
        })
        .collect();
    let call =
        |id: String, name: &str, arguments: serde_json::Value| json!({"id": id, "name": name, "arguments": arguments});
    let mut calls =
        vec![call("call_grep".into(), "grep_search", json!({"pattern": "[A-Za-z0-9+/]{30}", "path": "keys"}))];
    for (i, text) in carried.iter().enumerate() {
        let command = format!("cat <<'EOF'\n{text}EOF");
        // The AWS secret opens a line of the file, so the diff shows it after a bare `+`.
        let content = format!("AKIAZ7Q4M2X9L3P8K6W1\n{aws}\n{text}");
        calls.push(call(format!("call_echo{i}"), "bash", json!({"command": command})));
        calls.push(call(
            format!("call_write{i}"),
            "write_file",
            json!({"path": format!("notes{i}.txt"), "content": content}),
        ));
        calls.push(call(format!("call_mcp{i}"), "mcp__everything__echo", json!({"message": text})));
    }
    let last_id = calls.last().unwrap()["id"].clone();
    let fixtures = tempfile::tempdir().unwrap();
    let script = json!({"fixtures": [
        {"match": {"userMessage": "use the env", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": ".env"}}]}},
        {"match": {"toolCallId": "call_read"}, "response": {"toolCalls": calls}},
        {"match": {"toolCallId": last_id}, "response": {"content": "Carried."}}
    ]});
    std::fs::write(fixtures.path().join("values.json"), script.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;
    let everything =
        super::aimock::repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(
        dirs.data.join("config.toml"),
        format!(
            "mode = \"bypass\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\
             [mcp.servers.everything]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
            mock.url,
            everything.display()
        ),
    )
    .unwrap();

    let out = bridle_with_env(
        &dirs.data,
        &dirs.workspace,
        &["run", "use the env", "--json"],
        &[("OPENAI_API_KEY", provider_key)],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ends: Vec<serde_json::Value> = json_lines(&out).into_iter().filter(|e| e["type"] == "toolCallEnd").collect();
    assert_eq!(ends.len(), 2 + 3 * carried.len(), "{ends:?}");
    assert!(ends.iter().all(|e| e["status"] == "ok"), "{ends:?}");
    // The tools did their work with the real text: the command printed it, the file holds it, the
    // echo answered it, the search found the key's lines.
    let results: String = ends.iter().map(|e| e["result"]["output"].as_str().unwrap_or_default().to_string()).collect();
    let echoed = format!("Echo: {}", &carried[1][..20]);
    for needle in [&values[7], &values[19], &pem_body[1][..40], &shapes[0].1, &echoed] {
        assert!(results.contains(needle), "the tools' results lack {needle}");
    }
    assert!(std::fs::read_to_string(dirs.workspace.join("notes1.txt")).unwrap().ends_with(&carried[1]));

    let (exported, files) = audit_bytes(&dirs).await;
    let b62_piece = "NQ1V1OGcOxCH";
    let hex_piece = "1986f4681ee3";
    let mut needles: Vec<&str> = values.iter().map(String::as_str).collect();
    needles.extend([
        provider_key,
        b62_piece,
        hex_piece,
        &aws[10..],
        &pem_body[0][20..40],
        &pem_body[1][..30],
        &pem_body[2][..30],
    ]);
    for (file, bytes) in &files {
        for needle in &needles {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "`{needle}` found in {}",
                file.display()
            );
        }
    }
    for (marker, text) in shapes.iter().filter(|s| !s.0.is_empty()) {
        assert!(exported.contains(&format!("[redacted:{marker}]")), "no `{marker}` marker for `{text}` in the export");
    }
    assert!(
        exported.contains("[redacted:value]") && exported.contains("GREETING=hello"),
        "the export lost what is not secret"
    );
}
