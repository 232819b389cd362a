//! Issue 37 part 8: each new shape is redacted (its marker names it, no piece of it is left) and a
//! near miss of it is left alone. Made-up values of the real formats, built at run time.
#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::sanitize_text;

const B62: &str = "RMf7NQ1V1OGcOxCHYgRDMYs7yVBCj9Z51dfAeIs7xPTB0LKxOTKcZHNnGAeaaPG6xeTLobuwHk03bUa5";
const HEX: &str = "69791986f4681ee30872e4ab0342579f0594635d0b82175cea2629167efb81690808e7ab6b3bf2e5";
const UPPER: &str = "RMF7NQ1V1OGCOXCHYGRDMYS7YVBCJ9Z51DFAEIS7XPTB0LKX";

fn b(n: usize) -> &'static str {
    &B62[..n]
}

fn h(n: usize) -> &'static str {
    &HEX[..n]
}

/// Fails naming every case whose sanitised text does not hold `[redacted:<marker>]` or still
/// holds a 12-character piece of the secret's body.
fn assert_redacted(cases: &[(&str, String)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(marker, text)| {
            let clean = sanitize_text(text);
            let marked =
                clean.contains(&format!("[redacted:{marker}]")) || (marker.is_empty() && clean.contains("[redacted"));
            let leaked = [&B62[4..16], &HEX[4..16], &UPPER[4..16], &B62[30..42]].iter().any(|p| clean.contains(*p));
            (!marked || leaked).then(|| format!("{marker}: `{text}`\n   became `{clean}`"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn assert_left_alone(texts: &[&str]) {
    for text in texts {
        assert_eq!(sanitize_text(text), *text);
    }
}

#[test]
fn vendor_prefixes_are_redacted_with_their_vendors_name() {
    let cases = [
        ("linear-key", format!("LINEAR lin_api_{}", b(40))),
        ("doppler-token", format!("dp.st.dev.{}", b(43))),
        ("doppler-token", format!("dp.pt.{}", b(43))),
        ("doppler-token", format!("dp.ct.{}", b(43))),
        ("doppler-token", format!("dp.sa.{}", b(43))),
        ("doppler-token", format!("dp.scim.{}", b(43))),
        ("doppler-token", format!("dp.audit.{}", b(43))),
        ("huggingface-token", format!("api_org_{}", b(34))),
        ("sentry-token", format!("sntrys_eyJpYXQiOjE2ODAwMDAwMDAsInVybCI6Imh0dHBzOi8vc2VudHJ5LmlvIn0_{}", b(43))),
        ("sentry-token", format!("sntryu_{}", h(64))),
        ("vercel-token", format!("vcp_{}", b(56))),
        ("vercel-token", format!("vci_{}", b(40))),
        ("supabase-key", format!("sbp_{}", h(40))),
        ("supabase-key", format!("sb_secret_{}", b(31))),
        ("planetscale-token", format!("pscale_tkn_{}", b(43))),
        ("planetscale-token", format!("pscale_pw_{}", b(43))),
        ("render-key", format!("rnd_{}", b(32))),
        ("tailscale-key", format!("tskey-auth-k{}CNTRL-{}", b(10), &B62[20..52])),
        ("1password-token", format!("ops_eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSIs{}", b(80))),
        ("newrelic-key", format!("NRAK-{}", &UPPER[..27])),
        ("mailgun-key", format!("key-{}", h(32))),
        ("mailgun-key", format!("{}-{}-{}", h(32), &HEX[32..40], &HEX[40..48])),
        ("notion-token", format!("secret_{}", b(43))),
        ("notion-token", format!("ntn_{}", b(46))),
        ("cloudflare-token", format!("cfut_{}{}", b(40), h(8))),
        ("cloudflare-token", format!("cfat_{}{}", b(40), h(8))),
        ("docker-token", format!("dckr_pat_{}", b(27))),
        ("atlassian-token", format!("ATATT3xFfGF0{}", B62.repeat(2))),
        ("atlassian-token", format!("ATBB{}", b(32))),
        ("contentful-token", format!("CFPAT-{}", b(43))),
        ("firebase-key", format!("AAAA{}:APA91b{}", b(7), B62.repeat(2))),
        ("netlify-token", format!("nfp_{}", b(40))),
        ("postman-key", format!("PMAT-{}", &UPPER[..26])),
        ("pinecone-key", format!("pcsk_{}", b(50))),
        ("elevenlabs-key", format!("sk_{}", h(48))),
        ("neon-key", format!("napi_{}", b(64))),
        ("sonar-token", format!("squ_{}", h(40))),
        ("buildkite-token", format!("bkua_{}", h(40))),
        ("figma-token", format!("figd_{}", b(40))),
        ("sourcegraph-token", format!("sgp_{}", h(40))),
        ("prefect-key", format!("pnu_{}", b(36))),
        ("resend-key", format!("re_{}_{}", b(8), &B62[8..32])),
        ("deno-deploy-token", format!("ddp_{}", b(36))),
        ("e2b-key", format!("e2b_{}", h(40))),
        ("airtable-token", format!("pat{}.{}", b(14), h(64))),
        ("circleci-token", format!("CCIPAT_{}_{}", b(22), h(40))),
        ("gitlab-token", format!("glpat-{}.01.{}", b(27), &B62[30..39])),
        // Covered before this issue (by Bridle's shapes or the gitleaks rules): pinned here too.
        ("xai-key", format!("xai-{}", b(80))),
        ("groq-key", format!("gsk_{}", b(52))),
        ("replicate-token", format!("r8_{}", b(37))),
        ("huggingface-token", format!("hf_{}", b(34))),
        ("npm-token", format!("npm_{}", b(36))),
        ("gitlab-token", format!("gldt-{}", b(20))),
        ("sendgrid-key", format!("SG.{}.{}", b(22), &B62[22..65])),
        ("", format!("pplx-{}", b(48))),
        ("", format!("dapi{}", h(32))),
        ("", format!("pul-{}", h(40))),
        ("", format!("fo1_{}", b(43))),
        ("", format!("pypi-AgEIcHlwaS5vcmc{}", b(70))),
        ("", format!("shpat_{}", h(32))),
        ("", format!("glsa_{}_{}", b(32), h(8))),
        ("", format!("glc_{}", b(60))),
        ("", format!("PMAK-{}-{}", h(24), &HEX[24..58])),
        ("", format!("dop_v1_{}", h(64))),
        ("", format!("HRKU-AA{}", b(58))),
        ("", format!("{}.atlasv1.{}", b(14).to_lowercase(), b(67))),
        ("", format!("twilio SK{}", h(32))),
    ];
    assert_redacted(&cases);
}

#[test]
fn near_misses_of_the_vendor_prefixes_are_left_alone() {
    assert_left_alone(&[
        "see lin_api_docs and dp.st.example for the token formats",
        "api_org_id, sntryu_short, sbp_config, pscale_tkn_short, tskey-auth",
        "vcp_abcdefghijklmnopqrstuvwxyzabcdef is letters only",
        "rnd_seed_generator_for_tests_abcdefg",
        "ops_eyJabc and NRAK-123 and key-value-store",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "secret_key_base and secret_abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq",
        "cfut_short dckr_pat_ ATATT3 CFPAT-docs AAAA:APA91b nfp_short PMAT-2024",
        "pcsk_x napi_create_function squ_abc bkua_ figd_x sgp_ pnu_ re_compile_pattern_for_all_things",
        "ddp_ e2b_ path.to.file CCIPAT_",
        "sk_69791986f4681ee30872e4ab0342579f0594635d0b82175",
    ]);
}

#[test]
fn password_flags_of_common_programs_are_redacted() {
    let cases = [
        ("mysql -u root -pS3cr3tPass db", "mysql -u root -p[redacted] db"),
        ("mysqldump -u root -pS3cr3tPass db", "mysqldump -u root -p[redacted] db"),
        ("mongosh -u admin -p S3cr3tPass --host db", "mongosh -u admin -p [redacted] --host db"),
        ("sqlcmd -S db -U sa -P S3cr3tPass -Q 'select 1'", "sqlcmd -S db -U sa -P [redacted] -Q 'select 1'"),
        ("zip -P S3cr3tPass out.zip notes.txt", "zip -P [redacted] out.zip notes.txt"),
        ("mosquitto_pub -u bob -P 'S3cr3t Pass' -t x", "mosquitto_pub -u bob -P [redacted] -t x"),
        ("7z a -pS3cr3tPass out.7z dir", "7z a -p[redacted] out.7z dir"),
        (
            "keytool -genkey -keystore k.jks -storepass S3cr3tPass -keypass An0therPass",
            "keytool -genkey -keystore k.jks -storepass [redacted] -keypass [redacted]",
        ),
        (
            "keytool -importkeystore -srcstorepass S3cr3t1 -deststorepass S3cr3t2",
            "keytool -importkeystore -srcstorepass [redacted] -deststorepass [redacted]",
        ),
        (
            "openssl pkcs12 -export -passout pass:S3cr3tPass -in c.pem",
            "openssl pkcs12 -export -passout [redacted] -in c.pem",
        ),
        ("plink -ssh -pw S3cr3tPass bob@host", "plink -ssh -pw [redacted] bob@host"),
        ("ldapsearch -x -D cn=admin -w S3cr3tPass -b dc=x", "ldapsearch -x -D cn=admin -w [redacted] -b dc=x"),
        ("smbclient //srv/share -U alice%S3cr3tPass", "smbclient //srv/share -U alice%[redacted]"),
        ("lftp -u alice,S3cr3tPass sftp://host", "lftp -u alice,[redacted] sftp://host"),
        ("xfreerdp /u:alice /p:S3cr3tPass /v:host", "xfreerdp /u:alice /p:[redacted] /v:host"),
        ("sshpass -p S3cr3tPass ssh host", "sshpass -p [redacted] ssh host"),
        ("deploy --password S3cr3tPass now", "deploy --password [redacted] now"),
        ("deploy --password=S3cr3tPass now", "deploy --password=[redacted] now"),
        ("curl -u :S3cr3tToken https://x", "curl -u :[redacted] https://x"),
        ("curl -b 'session=abc123def456' https://x", "curl -b [redacted] https://x"),
        ("curl --cookie \"sid=xyz789; theme=dark\" https://x", "curl --cookie [redacted] https://x"),
        ("curl -sS -b sid=xyz789 https://x", "curl -sS -b [redacted] https://x"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(input, expected)| sanitize_text(input) != *expected)
        .map(|(input, expected)| format!("{input}\n  got      {}\n  expected {expected}", sanitize_text(input)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn flags_that_are_not_passwords_are_left_alone() {
    assert_left_alone(&[
        // MySQL's bare `-p` asks for the password; the next word is the database.
        "mysql -u root -p appdb",
        "ssh -p 2222 bob@host",
        "psql -p 5432 -h db -U alice app",
        "rsync -P src/ dst/",
        "7z a -mx9 out.7z dir",
        "keytool -list -keystore k.jks",
        "wc -w notes.txt",
        "curl -b cookies.txt https://x",
        "docker run -p 8080:80 nginx",
    ]);
}

#[test]
fn wireguard_and_putty_private_keys_are_redacted() {
    let key = format!("yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3f{}k=", "Bm");
    let config = format!("[Interface]\nAddress = 10.0.0.2/32\nPrivateKey = {key}\n\n[Peer]\nPresharedKey = {key}\n");
    let clean = sanitize_text(&config);
    assert!(!clean.contains(&key[..30]), "{clean}");
    assert!(
        clean.contains("PrivateKey = [redacted:wireguard-key]") && clean.contains("Address = 10.0.0.2/32"),
        "{clean}"
    );
    for text in [format!("$ wg genkey\n{key}\n"), format!("echo {key} | wg pubkey"), format!("+{key}")] {
        let clean = sanitize_text(&text);
        assert!(clean.contains("[redacted:wireguard-key]") && !clean.contains(&key[..30]), "{text} became {clean}");
    }

    let private = format!("AAAAIB{}", b(38));
    let ppk = format!(
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me@host\nPublic-Lines: 2\n\
         AAAAC3NzaC1lZDI1NTE5AAAAIGkq\nx7Qw\nPrivate-Lines: 1\n{private}\nPrivate-MAC: {}\n",
        h(64)
    );
    let clean = sanitize_text(&ppk);
    assert!(!clean.contains(&private), "{clean}");
    assert!(clean.contains("Private-Lines: 1\n[redacted:putty-key]\nPrivate-MAC:"), "{clean}");
}

#[test]
fn near_misses_of_the_key_shapes_are_left_alone() {
    let base = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBm";
    assert_left_alone(&[
        // 43 characters without `=`; a 32-byte value cannot end in `Z=`; a digest named as one.
        &format!("{base}k"),
        &format!("{base}Z="),
        "Private-Lines: are counted by PuTTY",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ]);
}

/// Grep prints a key file's matching lines one at a time, each after `path:line:`: no BEGIN line
/// is in the same string, yet no line of the body is left.
#[test]
fn pem_body_lines_in_grep_output_are_redacted() {
    let body = [format!("MIIEpAIBAAKCAQEA{}", b(48)), B62[..64].to_string(), B62[10..74].to_string()];
    let last = format!("{}==", &B62[20..44]);
    let grep = format!(
        "keys/deploy.txt:2:{}\nkeys/deploy.txt:3:{}\nkeys/deploy.txt:4:{}\nkeys/deploy.txt:27:{last}\nsrc/main.rs:9:let key = load();",
        body[0], body[1], body[2]
    );
    let clean = sanitize_text(&grep);
    for line in body.iter().chain([&last]) {
        assert!(!clean.contains(&line[4..20]), "{line} survived:\n{clean}");
    }
    assert!(
        clean.contains("keys/deploy.txt:3:[redacted:private-key]")
            && clean.ends_with("src/main.rs:9:let key = load();")
    );
    // A key file known by its name: every line, whatever its length.
    let clean = sanitize_text(&format!("certs/server.key:5:{}\ncerts/server.key:6:{}", b(50), &B62[50..80]));
    assert_eq!(clean, "certs/server.key:5:[redacted:private-key]\ncerts/server.key:6:[redacted:private-key]");
    assert_left_alone(&[
        "src/main.rs:12:let answer = compute_the_answer_to_everything_in_the_universe();",
        "docs/server.key.md:5:how to rotate the key",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ]);
}

/// The two boundary bugs: an AWS secret opening a diff's `+` line, or after `=` under a name that
/// says nothing, or beside its key id whatever it looks like.
#[test]
fn a_bare_aws_secret_in_a_diff_or_after_its_key_id_is_redacted() {
    let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    let cases = [
        format!("--- a/creds\n+++ b/creds\n@@ -0,0 +1,2 @@\n+AKIAZ7Q4M2X9L3P8K6W1\n+{secret}\n"),
        format!("AWS_SK={secret}"),
        "AKIAZ7Q4M2X9L3P8K6W1,wJalrXUtnFEMIKMDENGbPxRfiCYEXAMPLEKEYabc".to_string(),
        "aws AKIAZ7Q4M2X9L3P8K6W1 wJalrXUtnFEMIKMDENGbPxRfiCYEXAMPLEKEYabc".to_string(),
    ];
    for text in &cases {
        let clean = sanitize_text(text);
        assert!(clean.contains("[redacted:aws-secret]") && !clean.contains("XUtnFEMI"), "`{text}` became `{clean}`");
    }
    assert_left_alone(&["+4b825dc642cb6eb9a060e54bf8d69288fbee4904", "x=4b825dc642cb6eb9a060e54bf8d69288fbee4904"]);
}
