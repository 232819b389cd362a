//! Secrets of every shape the sanitiser knows, built at run time (so no scanner mistakes this
//! file for a leak), and payloads that carry them the way real events do.

use serde_json::{json, Value};

/// One planted secret: a label, the secret text, and distinctive pieces of it that must not
/// appear anywhere on disk either.
pub struct Planted {
    pub label: &'static str,
    pub secret: String,
    pub pieces: Vec<String>,
}

fn planted(label: &'static str, secret: String, pieces: &[&str]) -> Planted {
    Planted { label, secret, pieces: pieces.iter().map(|p| p.to_string()).collect() }
}

/// Every shape, each with a body unique to it.
pub fn secrets() -> Vec<Planted> {
    let body = |tag: &str| format!("{tag}Q7x9Lm2Pz8Rk4Vb6Nw1Hj3Tf5Yc0Gd");
    let openai = format!("sk-{}", body("Oa1"));
    let project = format!("sk-proj-{}_{}", body("Pj2"), body("Pj3"));
    let anthropic = format!("sk-ant-api03-{}-{}AA", body("An4"), body("An5"));
    let aws_id = "AKIAZ7Q4M2X9L3P8K6W1".to_string();
    let aws_session = "ASIAY2R7T4V9B1N6M3C8".to_string();
    let aws_secret = format!("wJalrXUtnFEMI/K7MDENG/{}", body("Aw6"));
    let jwt_sig = body("Jw7");
    let jwt = format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0.{jwt_sig}");
    let pem_body = format!("MIIEpAIBAAKCAQEA{}\n{}", body("Pm8"), body("Pm9"));
    let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----");
    let cut_pem_body = format!("b3BlbnNzaC1rZXktdjEAAAAA{}", body("Pc0"));
    let cut_pem = format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{cut_pem_body}\n");
    let slack_hook = format!("https://hooks.slack.com/services/T0AAAA/B0BBBB/{}", body("Sw1"));
    let hook_tail = slack_hook.rsplit('/').next().unwrap_or_default().to_string();
    let url_pass = format!("Pw2{}", body("Ur"));
    let bearer = body("Br3");
    let basic = "dXNlcjpodW50ZXIyaHVudGVyMg==".to_string();
    let query_token = body("Qt4");
    let cli_password = format!("Cp5{}", body("x"));
    let env_token = body("Ev6");
    let key_password = format!("hunter2-{}", body("Kp7"));
    vec![
        planted("openai", openai.clone(), &[&openai[3..]]),
        planted("openai-project", project.clone(), &[&project[8..40]]),
        planted("anthropic", anthropic.clone(), &[&anthropic[13..45]]),
        planted("aws-key-id", aws_id.clone(), &[&aws_id[4..]]),
        planted("aws-session-key-id", aws_session.clone(), &[&aws_session[4..]]),
        planted("aws-secret", aws_secret.clone(), &[&aws_secret[22..]]),
        planted("github-classic", format!("ghp_{}", body("Gh1")), &[&body("Gh1")]),
        planted("github-oauth", format!("gho_{}", body("Gh2")), &[&body("Gh2")]),
        planted("github-user", format!("ghu_{}", body("Gh3")), &[&body("Gh3")]),
        planted("github-server", format!("ghs_{}", body("Gh4")), &[&body("Gh4")]),
        planted("github-refresh", format!("ghr_{}", body("Gh5")), &[&body("Gh5")]),
        planted("github-pat", format!("github_pat_11ABCDEFG0_{}", body("Gh6")), &[&body("Gh6")]),
        planted("slack-bot", format!("xoxb-1234567890-{}", body("Sl7")), &[&body("Sl7")]),
        planted("slack-user", format!("xoxp-1234567890-{}", body("Sl8")), &[&body("Sl8")]),
        planted("slack-webhook", slack_hook.clone(), &[&hook_tail]),
        planted("jwt", jwt.clone(), &[&jwt[..60], &jwt_sig]),
        planted("pem", pem.clone(), &[&pem_body[..40], &pem_body[pem_body.len() - 30..]]),
        planted("pem-truncated", cut_pem.clone(), &[&cut_pem_body]),
        planted("url-password", url_pass.clone(), &[&url_pass]),
        planted("bearer", bearer.clone(), &[&bearer]),
        planted("basic", basic.clone(), &[&basic[..20]]),
        planted("query-token", query_token.clone(), &[&query_token]),
        planted("cli-password", cli_password.clone(), &[&cli_password]),
        planted("env-token", env_token.clone(), &[&env_token]),
        planted("key-password", key_password.clone(), &[&key_password[8..]]),
        planted("stripe-live", format!("sk_live_{}", body("St1")), &[&body("St1")]),
        planted("stripe-restricted", format!("rk_live_{}", body("St2")), &[&body("St2")]),
        planted("google", format!("AIza{}abcde", body("Go3")), &[&body("Go3")]),
        planted("sendgrid", format!("SG.{}.{}", body("Sg4"), body("Sg5")), &[&body("Sg4"), &body("Sg5")]),
        planted("gitlab", format!("glpat-{}", body("Gl6")), &[&body("Gl6")]),
        planted("npm", format!("npm_{}123456", body("Np7")), &[&body("Np7")]),
        planted("huggingface", format!("hf_{}", body("Hf8")), &[&body("Hf8")]),
        planted("azure", format!("{}{}==", body("Az9"), body("Az0")), &[&body("Az9")]),
        planted("aws-secret-bare", format!("Zk9/{}aBcD12", body("Ab1")), &[&body("Ab1")]),
        planted("db-pass", format!("Dp2-{}", body("x")), &[&format!("Dp2-{}", body("x"))]),
        planted("docker-password", format!("Dk3{}", body("y")), &[&format!("Dk3{}", body("y"))]),
        planted("htpasswd-password", format!("Ht4{}", body("z")), &[&format!("Ht4{}", body("z"))]),
        planted("linear", format!("lin_api_{}1234567890", body("Li1")), &[&body("Li1")]),
        planted("doppler", format!("dp.st.prd.{}123456789012", body("Dp2")), &[&body("Dp2")]),
        planted("wireguard", format!("{}Lm2Pz8Rk4k=", body("Wg3")), &[&body("Wg3")]),
        planted("keytool-password", format!("Kt4{}", body("w")), &[&format!("Kt4{}", body("w"))]),
        planted("pem-line", format!("{}{}", body("Pl5"), body("Pl6")), &[&body("Pl5"), &body("Pl6")]),
    ]
}

/// Payloads carrying every planted secret, in arguments, tool output, model text, diffs and
/// nested keys (indexed like [`secrets`]).
pub fn payloads(s: &[Planted]) -> Vec<Value> {
    let get = |label: &str| s.iter().find(|p| p.label == label).map(|p| p.secret.clone()).unwrap_or_default();
    let filler = "log line without anything special in it\n".repeat(60);
    vec![
        json!({"arguments": {"command": format!(
            "curl -H 'Authorization: Bearer {}' -u admin:{} 'https://api.example.com/v1?limit=5&token={}&x=1'",
            get("bearer"), get("cli-password"), get("query-token"))}}),
        json!({"arguments": {"command": format!("OPENAI_API_KEY={} python run.py --password {}",
            get("openai"), get("cli-password"))}}),
        json!({"output": format!("{filler}export GITHUB_TOKEN={}\nexport ANTHROPIC={}\n{filler}AWS_ACCESS_KEY_ID={}\naws_secret_access_key = {}\n{filler}",
            get("env-token"), get("anthropic"), get("aws-key-id"), get("aws-secret"))}),
        json!({"text": format!("Here is your key {} and the project key {}. Also {} and {}, {}, {}, {}.",
            get("openai"), get("openai-project"), get("github-classic"), get("github-oauth"),
            get("github-user"), get("github-server"), get("github-refresh"))}),
        json!({"diff": format!("--- a/.env\n+++ b/.env\n@@ -1,2 +1,3 @@\n-SLACK={}\n+SLACK={}\n+HOOK={}\n+PAT={}\n",
            get("slack-bot"), get("slack-user"), get("slack-webhook"), get("github-pat"))}),
        json!({"output": format!("{}\n{}", get("pem"), get("pem-truncated"))}),
        json!({"request": {"headers": {"Authorization": format!("Basic {}", get("basic")), "X-Trace": "1"},
            "body": {"session": get("jwt"), "db": format!("postgres://app:{}@db.internal:5432/app", get("url-password"))}}}),
        json!({"config": {"nested": [{"Password": get("key-password")}, {"aws": {"SecretAccessKey": get("aws-secret")}}],
            "session_key_id": get("aws-session-key-id")}}),
        json!({"output": format!("{}{}", "x".repeat(1990), get("openai"))}),
        json!({"arguments": {"command": format!(
            "STRIPE={} RK={} ./pay && curl 'maps?key={}' -H 'X: {}' && git remote add o https://gitlab.com/{} && echo {} {}",
            get("stripe-live"), get("stripe-restricted"), get("google"), get("sendgrid"), get("gitlab"), get("npm"),
            get("huggingface"))}}),
        json!({"output": format!("DefaultEndpointsProtocol=https;AccountName=a;AccountKey={};EndpointSuffix=x\n{filler}aws configure set aws_secret_access_key {}\n{}",
            get("azure"), get("aws-secret-bare"), get("aws-secret-bare"))}),
        json!({"arguments": {"command": format!(
            "DB_PASS={} MYSQL_PWD={} ./migrate; docker login -u me -p {} r.io; htpasswd -b .htpasswd bob {}",
            get("db-pass"), get("db-pass"), get("docker-password"), get("htpasswd-password"))}}),
        json!({"output": format!("LINEAR={}\nDOPPLER_TOKEN={}\n$ wg genkey\n{}\nkeys/id.txt:2:{}\n",
            get("linear"), get("doppler"), get("wireguard"), &get("pem-line")[..64]),
            "arguments": {"command": format!("keytool -genkey -storepass {} -keystore k.jks", get("keytool-password"))}}),
    ]
}
