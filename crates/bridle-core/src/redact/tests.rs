#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;
use serde_json::json;

use super::fixtures;
use super::*;

#[test]
fn every_pattern_compiles() {
    let (declared, compiled) = patterns::compiled();
    assert_eq!(compiled, declared);
    assert!(declared > 100, "{declared}");
}

#[test]
fn no_planted_secret_survives_in_any_payload() {
    let planted = fixtures::secrets();
    let all = fixtures::payloads(&planted);
    let clean = sanitize(&Value::Array(all)).to_string();
    for p in &planted {
        assert!(!clean.contains(&p.secret), "{} survived:\n{clean}", p.label);
        for piece in &p.pieces {
            assert!(!clean.contains(piece.as_str()), "a piece of {} survived ({piece}):\n{clean}", p.label);
        }
    }
}

#[test]
fn each_shape_leaves_its_marker() {
    let cases = [
        ("key sk-abcDEF0123456789abcdefXYZ end", "key [redacted:openai-key] end"),
        ("sk-proj-abcDEF0123456789abcdef_XYZ-12", "[redacted:openai-key]"),
        ("sk-ant-api03-abcDEF0123456789abcdef-XYZ", "[redacted:anthropic-key]"),
        ("id=AKIAABCDEFGHIJKLMNOP.", "id=[redacted:aws-key-id]."),
        ("ASIAABCDEFGHIJKLMNOP", "[redacted:aws-key-id]"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [redacted:aws-secret]",
        ),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[redacted:github-token]"),
        ("github_pat_11ABC_defghijklmnopqrstuvwxyz", "[redacted:github-token]"),
        ("xoxb-123456789012-abcdefghijkl", "[redacted:slack-token]"),
        (
            "post to https://hooks.slack.com/services/T00/B00/XXXXabcd now",
            "post to https://hooks.slack.com/[redacted:slack-webhook] now",
        ),
        ("Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [redacted]"),
        ("authorization=Basic dXNlcjpwYXNz", "authorization=Basic [redacted]"),
        ("got bearer abcdefgh12345678 back", "got bearer [redacted] back"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "[redacted:jwt]"),
        (
            "a\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\nb",
            "a\n[redacted:private-key]\nb",
        ),
        ("a -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg", "a [redacted:private-key]"),
        ("git clone https://bob:s3cr3t@example.com/r.git", "git clone https://[redacted]@example.com/r.git"),
        ("GET /cb?code=1&access_token=abc123&x=2", "GET /cb?code=1&access_token=[redacted]&x=2"),
        ("deploy --api-key abc123 --verbose", "deploy --api-key [redacted] --verbose"),
        ("PASSWORD='two words' ./run", "PASSWORD=[redacted] ./run"),
        (r#"{"client_secret": "abc"}"#, r#"{"client_secret": [redacted]}"#),
        ("sshpass -p hunter2 ssh host", "sshpass -p [redacted] ssh host"),
        ("mysql -u root -phunter2 db", "mysql -u root -p[redacted] db"),
        ("curl -u bob:hunter2 https://x", "curl -u bob:[redacted] https://x"),
        ("Cookie: session=abc; theme=dark", "Cookie: [redacted]"),
        (r#"{\"api_key\": \"abc def\", \"n\": 1}"#, r#"{\"api_key\": [redacted], \"n\": 1}"#),
        ("MY_SECRET_TOKEN=abc", "MY_SECRET_TOKEN=[redacted]"),
    ];
    for (input, expected) in cases {
        assert_eq!(sanitize_text(input), expected, "input: {input}");
    }
}

/// The shapes a red-team pass found stored in clear, each in more than one spelling.
#[test]
fn vendor_keys_and_command_line_passwords_leave_their_marker() {
    let b = "Q7x9Lm2Pz8Rk4Vb6Nw1Hj3Tf5Yc0Gd";
    let cases = [
        (format!("STRIPE=sk_live_{b}"), "STRIPE=[redacted:stripe-key]".to_string()),
        (
            format!("curl -u rk_live_{b}: https://api.stripe.com"),
            "curl -u [redacted:stripe-key]: https://api.stripe.com".into(),
        ),
        (format!("test key sk_test_{b} here"), "test key [redacted:stripe-key] here".into()),
        (format!("whsec_{b}"), "[redacted:stripe-key]".into()),
        (format!("maps?key=AIza{b}abcde"), "maps?key=[redacted:google-key]".into()),
        (format!("GOOGLE AIzaSy{b}abc used"), "GOOGLE [redacted:google-key] used".into()),
        (format!("SG.{b}.{b}"), "[redacted:sendgrid-key]".into()),
        (format!("sendgrid: SG.ab{b}.cd{b}!"), "sendgrid: [redacted:sendgrid-key]!".into()),
        (format!("glpat-{b}"), "[redacted:gitlab-token]".into()),
        (format!("git push https://oauth2:glpat-{b}@gitlab.com/x"), "git push https://[redacted]@gitlab.com/x".into()),
        (format!("deploy token gldt-{b}"), "deploy token [redacted:gitlab-token]".into()),
        (
            format!("//registry.npmjs.org/:_authToken=npm_{b}123456"),
            "//registry.npmjs.org/:_authToken=[redacted:npm-token]".into(),
        ),
        (format!("NPM npm_{b}abcdef"), "NPM [redacted:npm-token]".into()),
        (format!("hf_{b}abc"), "[redacted:huggingface-token]".into()),
        (
            format!("huggingface-cli login --token hf_{b}x"),
            "huggingface-cli login --token [redacted:huggingface-token]".into(),
        ),
        (
            format!("DefaultEndpointsProtocol=https;AccountName=x;AccountKey={b}{b}==;EndpointSuffix=core"),
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=[redacted];EndpointSuffix=core".into(),
        ),
        (
            format!("Endpoint=sb://x/;SharedAccessKeyName=r;SharedAccessKey={b}+/x="),
            "Endpoint=sb://x/;SharedAccessKeyName=[redacted];SharedAccessKey=[redacted]".into(),
        ),
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(), "[redacted:aws-secret]".into()),
        ("secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY.".into(), "secret is [redacted:aws-secret].".into()),
        (
            "aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEYx1 --profile p".into(),
            "aws configure set aws_secret_access_key [redacted] --profile p".into(),
        ),
        (
            "aws configure set default.aws_session_token FwoGZXIvY".into(),
            "aws configure set default.aws_session_token [redacted]".into(),
        ),
        ("DB_PASS=hunter2 ./migrate".into(), "DB_PASS=[redacted] ./migrate".into()),
        ("export MYSQL_PWD='hunter 2'".into(), "export MYSQL_PWD=[redacted]".into()),
        ("SMTP_PW=abc mail".into(), "SMTP_PW=[redacted] mail".into()),
        ("pass: hunter2".into(), "pass: [redacted]".into()),
        ("docker login -u bob -p hunter2 registry.io".into(), "docker login -u bob -p [redacted] registry.io".into()),
        ("podman login -phunter2 quay.io".into(), "podman login -p[redacted] quay.io".into()),
        ("docker login --password hunter2 r.io".into(), "docker login --password [redacted] r.io".into()),
        ("htpasswd -b .htpasswd bob hunter2".into(), "htpasswd -b .htpasswd bob [redacted]".into()),
        (
            "htpasswd -cbB /etc/nginx/pw alice s3cret && ls".into(),
            "htpasswd -cbB /etc/nginx/pw alice [redacted] && ls".into(),
        ),
        ("htpasswd -nb bob hunter2".into(), "htpasswd -nb bob [redacted]".into()),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(input, expected)| sanitize_text(input) != *expected)
        .map(|(input, expected)| format!("{input}\n  got      {}\n  expected {expected}", sanitize_text(input)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn look_alikes_of_the_new_shapes_are_left_alone() {
    for text in [
        // A git hash and a sha256 are lower-case hex.
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 merged",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "PWD=/home/me/project OLDPWD=/home/me",
        "bypass the cache; 3 passed, 0 failed; passed=3",
        "htpasswd -c .htpasswd bob",
        "a task_skip_list and sk_live_short",
        "docker login -u bob registry.io",
    ] {
        assert_eq!(sanitize_text(text), text);
    }
}

#[test]
fn ordinary_text_is_left_alone() {
    for text in [
        "Basic usage: run `make` then read the task-management-system-overview-page",
        "Author: Jane Doe <jane@example.com>",
        "max_tokens: 4096, input_tokens=12",
        "ssh git@github.com and http://localhost:8080/path@v2",
        "the risk-assessment-for-the-quarterly-report is done",
        "--no-token-check --verbose",
    ] {
        assert_eq!(sanitize_text(text), text);
    }
}

#[test]
fn values_under_secret_keys_are_replaced_at_any_depth() {
    let input = json!({
        "Password": "p", "DB_PASSWD": "p", "apiKey": "k", "x-api-key": "k", "API_KEY": 7,
        "Authorization": "Basic abc", "set-cookie": "a=b", "private_key": {"pem": "x"},
        "aws_secret_access_key": "s", "credentials": ["a", "b"], "auth": "user:pass",
        "nested": [{"deeper": {"refresh_token": "r", "keep": "visible"}}],
        "usage": {"max_tokens": 100, "inputTokens": 5, "tokenUsage": {"total": 9}},
        "use_token": true, "token": null, "secret": "",
    });
    let expected = json!({
        "Password": REDACTED, "DB_PASSWD": REDACTED, "apiKey": REDACTED, "x-api-key": REDACTED, "API_KEY": REDACTED,
        "Authorization": REDACTED, "set-cookie": REDACTED, "private_key": REDACTED,
        "aws_secret_access_key": REDACTED, "credentials": REDACTED, "auth": REDACTED,
        "nested": [{"deeper": {"refresh_token": REDACTED, "keep": "visible"}}],
        "usage": {"max_tokens": 100, "inputTokens": 5, "tokenUsage": {"total": 9}},
        "use_token": true, "token": null, "secret": "",
    });
    assert_eq!(sanitize(&input), expected);
}

#[test]
fn secret_shaped_keys_are_redacted_too() {
    let key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let clean = sanitize(&json!({ key: 1 }));
    assert_eq!(clean, json!({"[redacted:github-token]": 1}));
}

#[test]
fn long_strings_are_cut_with_their_length() {
    let long = "é".repeat(MAX_STRING_CHARS + 500);
    let clean = sanitize_text(&long);
    assert!(clean.starts_with(&"é".repeat(MAX_STRING_CHARS)));
    assert!(clean.ends_with("…[cut: 2500 chars in all]"), "{}", &clean[clean.len() - 40..]);
    assert_eq!(sanitize_text(&"a".repeat(MAX_STRING_CHARS)), "a".repeat(MAX_STRING_CHARS));
}

#[test]
fn a_secret_straddling_the_cut_is_redacted_whole() {
    for offset in [MAX_STRING_CHARS - 30, MAX_STRING_CHARS - 5, MAX_STRING_CHARS - 1] {
        let secret = "sk-proj-Zq8Wm3Xv7Kp2Rt6Yn1Bc5Hd9Lf4Gj0";
        let text = format!("{}{secret} and more text after it", "x".repeat(offset));
        let clean = sanitize_text(&text);
        assert!(!clean.contains("Zq8Wm"), "offset {offset}: {}", &clean[offset - 5..]);
        assert!(!clean.contains("sk-proj"), "offset {offset}");
    }
    let pem = format!("{}-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAwq9{}", "y".repeat(1980), "Q".repeat(3000));
    let clean = sanitize_text(&pem);
    assert!(!clean.contains("MIIEpA") && !clean.contains("QQQQ"), "{}", &clean[1970..]);
}

#[test]
fn big_collections_are_cut_with_their_size() {
    let items: Vec<u32> = (0..150).collect();
    let clean = sanitize(&json!(items));
    let array = clean.as_array().unwrap();
    assert_eq!(array.len(), MAX_ITEMS + 1);
    assert_eq!(array[MAX_ITEMS], json!("[cut: 150 items in all]"));

    let map: serde_json::Map<String, Value> = (0..150).map(|i| (format!("k{i:03}"), json!(i))).collect();
    let clean = sanitize(&Value::Object(map));
    let object = clean.as_object().unwrap();
    assert_eq!(object.len(), MAX_ITEMS + 1);
    assert_eq!(object["[cut]"], json!("[cut: 150 entries in all]"));
}

#[test]
fn deep_nesting_is_cut() {
    let mut value = json!("leaf");
    for _ in 0..100 {
        value = json!([value]);
    }
    let text = sanitize(&value).to_string();
    assert!(text.contains("[cut: nested deeper than 32]"));
    assert!(!text.contains("leaf"));
}

#[test]
fn the_gitleaks_rules_compile_here() {
    let (used, skipped) = super::gitleaks_rules();
    eprintln!("gitleaks rules: {used} in force, {skipped} skipped");
    assert!(used >= 200, "only {used} gitleaks rules compiled ({skipped} skipped)");
}

/// The second red-team pass's shapes: each is gone from the sanitised text, and its marker says
/// what it was (Bridle's name, or the gitleaks rule's id). Made-up values of the real shapes.
#[test]
fn the_red_teams_new_shapes_are_redacted_with_a_marker_naming_them() {
    let b62 = "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3kL5mN7pQ9rS1tU3vW5";
    let hex = "0123456789abcdef0123456789abcdef";
    let cases: Vec<(String, &str)> = vec![
        (format!("GROQ gsk_{}", &b62[..52]), "groq-key"),
        (format!("token r8_{}", &b62[..37]), "replicate-token"),
        (format!("pplx-{}", &b62[..48]), "gitleaks:perplexity-api-key"),
        (format!("xai-{}", &b62[..64]), "xai-key"),
        (format!("nvapi-{}", &b62[..64]), "nvidia-key"),
        (format!("lsv2_pt_{hex}_{}", &hex[..10]), "langsmith-key"),
        (format!("tvly-dev-{}", &b62[..32]), "tavily-key"),
        (format!("ya29.a0{}", &b62[..60]), "google-oauth-token"),
        (format!("GOCSPX-{}", &b62[..28]), "google-oauth-secret"),
        ("MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhJkLm.aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z".to_string(), "discord-bot-token"),
        (format!("bot 123456789:AA{}", &b62[..33]), "telegram-bot-token"),
        (format!("vault hvs.{b62}{}", &b62[..30]), "gitleaks:vault-service-token"),
        (
            "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MUA".to_string(),
            "gitleaks:age-secret-key",
        ),
        (format!("dapi{hex}"), "gitleaks:databricks-api-token"),
        (format!("shpat_{hex}"), "gitleaks:shopify-access-token"),
        (format!("glsa_{}_{}", &b62[..32], &hex[..8]), "gitleaks:grafana-service-account-token"),
        (format!("twilio SK{hex}"), "gitleaks:twilio-api-key"),
        (format!("AWS_SESSION_TOKEN IQoJb3JpZ2luX2VjE{}", &b62[..60]), "aws-session-token"),
        (format!("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{}\n{}\n{}", &b62[..40], &b62[..64], &b62[..30]), "private-key"),
        (
            "my seed phrase: abandon ability able about above absent absorb abstract absurd abuse access accident"
                .to_string(),
            "seed-phrase",
        ),
    ];
    for (text, kind) in &cases {
        let clean = sanitize_text(text);
        assert!(clean.contains(&format!("[redacted:{kind}]")), "`{text}` became `{clean}`");
    }
    assert_eq!(sanitize_text("redis-cli -h db -a s3cretPass ping"), "redis-cli -h db -a [redacted] ping");
    let hooks = [
        ("https://discord.com/api/webhooks/112233445566778899/aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z", "discord-webhook"),
        ("https://contoso.webhook.office.com/webhookb2/1f2e3d4c-aaaa@bbbb/IncomingWebhook/0a1b2c/dd", "teams-webhook"),
        ("https://hooks.zapier.com/hooks/catch/123456/abcde12/", "zapier-webhook"),
        ("https://maker.ifttt.com/trigger/deploy/with/key/aB3dE5fG7hJ9kL1mN3pQ5r", "ifttt-webhook"),
        ("https://chat.example.com/hooks/xo3bq8y9o7gyjbmdqz1r4w6hfe", "mattermost-webhook"),
        ("https://hooks.slack.com/workflows/T0AAAA/A0BB/12345/aB3dE5fG7hJ9kL1mN3pQ5r", "slack-webhook"),
    ];
    for (hook, kind) in hooks {
        let clean = sanitize_text(&format!("posting to {hook} now"));
        assert!(clean.contains(&format!("[redacted:{kind}]")) && !clean.contains("aB3dE5"), "{hook} became {clean}");
    }
    // Twilio's older shapes: an API key alone, an account's auth token beside its SID.
    let twilio = format!("-u AC{hex}:{} and SK{}", "fedcba9876543210fedcba9876543210", &hex[..32]);
    let clean = sanitize_text(&twilio);
    assert!(!clean.contains("fedcba98") && !clean.contains(&format!("SK{}", &hex[..32])), "{clean}");
    // No vendor shape, but a random value after a key-like name.
    for text in [
        "DEPLOY_KEY=q8Zt3Vb7Nm2Xc5Lk9Pj4Rw6Hy1Df0Gs",
        "x-api-sig: Mz9Qr4Tn7Vb2Lk8Xc5Wp3Hj6Yd1Fs0Ga",
        "signing_salt \"t7Kq2Vn9Zb4Xm6Lc3Rp8Wj5Hd1Fy0Gs\"",
    ] {
        let clean = sanitize_text(text);
        assert!(
            clean.contains("[redacted")
                && !clean.contains("Vb7Nm2Xc5")
                && !clean.contains("Tn7Vb2Lk8")
                && !clean.contains("Vn9Zb4Xm6"),
            "`{text}` became `{clean}`"
        );
    }
}

/// What looks a little like a secret and is not: hashes, ids, words, an image.
#[test]
fn the_new_shapes_leave_look_alikes_alone() {
    let alike = [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "the seed of the idea was planted",
        "use a mnemonic: every good boy does fine",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "tokens used: 4096 of 128000",
        "cargo build --release && ./target/release/bridle --help",
        "primary_key = \"user_id\"",
        "sort_key=created_at_descending_order",
        "keyboard layout us_international_with_dead_keys",
        "see https://docs.example.com/hooks/overview for webhooks",
        "AC0123456789abcdef0123456789abcdef is the account",
    ];
    for text in alike {
        assert_eq!(sanitize_text(text), text);
    }
}

/// The gitleaks rules match bytes: text around a match that is not ASCII stays whole.
#[test]
fn a_gitleaks_match_beside_characters_that_are_not_ascii_keeps_them_whole() {
    let text = "clé 🔑shpat_0123456789abcdef0123456789abcdef🔑 fin, secret_key = \"ßüéß0aB3dE5fG7hJ9kL1mN3pQ5\"";
    let clean = sanitize_text(text);
    assert!(clean.starts_with("clé 🔑[redacted:gitleaks:shopify-access-token]🔑 fin"), "{clean}");
    assert!(!clean.contains("0aB3dE5fG7hJ9kL1mN3pQ5"), "{clean}");
}

/// An 8 MiB string (a big file write's arguments) is read only as far as it is kept: its secret
/// near the start is gone, its size is said, and it takes no longer than a small one would.
#[test]
fn a_huge_string_is_redacted_where_it_is_kept_and_cut() {
    let text = format!("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 {}", "c".repeat(8 * 1024 * 1024));
    let started = std::time::Instant::now();
    let clean = sanitize_text(&text);
    assert!(clean.starts_with("token [redacted:github-token] ccc"), "{}", &clean[..60]);
    assert!(clean.ends_with(&format!("…[cut: {} chars in all]", text.chars().count())));
    assert!(clean.chars().count() < MAX_STRING_CHARS + 40);
    eprintln!("8 MiB sanitised in {:?}", started.elapsed());
}
