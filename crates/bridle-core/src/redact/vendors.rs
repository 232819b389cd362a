//! Tokens a vendor marks with its own prefix (`ghp_`, `sk_live_`, `lin_api_`, `dp.st.`, ...) and
//! the webhook URLs that work as credentials: each replaced whole by a marker naming the vendor.
//!
//! Rule: a prefix that also opens ordinary words or identifiers (`secret_`, `rnd_`, `vcp_`) counts
//! only when what follows it mixes letters and digits, as a random token does.

use regex::Captures;

use super::patterns::{group, shape, Replace, Shape};

fn vendor_key(caps: &Captures<'_>) -> String {
    if group(caps, 0).starts_with("sk-ant-") { "[redacted:anthropic-key]" } else { "[redacted:openai-key]" }.into()
}

/// A Discord bot token (user id, timestamp, HMAC): only when it mixes digits and lower case.
fn discord_bot(caps: &Captures<'_>) -> String {
    let token = group(caps, 0);
    let mixed = token.contains(|ch: char| ch.is_ascii_digit()) && token.contains(|ch: char| ch.is_ascii_lowercase());
    if mixed {
        "[redacted:discord-bot-token]".into()
    } else {
        token.to_string()
    }
}

/// The vendors' shapes, in the order they run.
pub(super) fn shapes() -> Vec<Shape> {
    use Replace::{Kind, Random, With};
    vec![
        shape(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*", Kind("jwt")),
        shape(r"\bsk-[A-Za-z0-9_-]{20,}", With(vendor_key)),
        // Glued to a word (`…xsk-…`): only when it looks random, so `task-management-…` stays.
        shape(
            r"sk-[A-Za-z0-9_-]{20,}",
            With(|c| {
                let key = group(c, 0);
                let random =
                    key.contains(|ch: char| ch.is_ascii_uppercase()) && key.contains(|ch: char| ch.is_ascii_digit());
                if random {
                    vendor_key(c)
                } else {
                    key.to_string()
                }
            }),
        ),
        shape(r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}", Kind("github-token")),
        shape(r"xox[abposre]-[A-Za-z0-9-]{8,}|\bxapp-[A-Za-z0-9-]{8,}", Kind("slack-token")),
        shape(
            r"(?i)\bhttps?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
            With(|_| "https://hooks.slack.com/[redacted:slack-webhook]".into()),
        ),
        // Webhook URLs: whoever holds one can post as the integration.
        shape(
            r"(?i)\bhttps?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
            Kind("discord-webhook"),
        ),
        shape(r#"(?i)\bhttps://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[^\s"'<>]+"#, Kind("teams-webhook")),
        shape(r#"(?i)\bhttps://[a-z0-9-]+\.logic\.azure\.com[^\s"'<>]*sig=[^\s"'<>&]+"#, Kind("teams-webhook")),
        shape(r"(?i)\bhttps://hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+/?", Kind("zapier-webhook")),
        shape(r"(?i)\bhttps://maker\.ifttt\.com/trigger/[^\s/]+/with/key/[A-Za-z0-9_-]+", Kind("ifttt-webhook")),
        shape(r#"(?i)\bhttps?://[^\s/"'<>]+/hooks/[a-z0-9]{26}\b"#, Kind("mattermost-webhook")),
        // Twilio: an account SID's auth token beside it (its API keys are a gitleaks rule).
        shape(
            r"\b(AC[0-9a-fA-F]{32})([:\s,]+)([0-9a-fA-F]{32})\b",
            With(|c| format!("{}{}[redacted:twilio-auth-token]", group(c, 1), group(c, 2))),
        ),
        shape(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{16,}", Kind("stripe-key")),
        shape(r"AIza[0-9A-Za-z_-]{35,}", Kind("google-key")),
        shape(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", Kind("sendgrid-key")),
        // GitLab's routable tokens end in `.01.<crc>`: the suffix goes with them.
        shape(
            r"\bgl(?:pat|dt|rt|ptt|ft|soat|imt|agent|cbt|oas|ffct|wt)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]{2,}){0,2}",
            Kind("gitlab-token"),
        ),
        shape(r"\bnpm_[A-Za-z0-9]{36,}", Kind("npm-token")),
        shape(r"\bgsk_[A-Za-z0-9]{40,}", Kind("groq-key")),
        shape(r"\br8_[A-Za-z0-9]{30,}", Kind("replicate-token")),
        shape(r"\bxai-[A-Za-z0-9]{60,}", Kind("xai-key")),
        shape(r"\bnvapi-[A-Za-z0-9_-]{40,}", Kind("nvidia-key")),
        shape(r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", Kind("langsmith-key")),
        shape(r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{20,}", Kind("tavily-key")),
        shape(r"\bya29\.[A-Za-z0-9_-]{20,}", Kind("google-oauth-token")),
        shape(r"\bGOCSPX-[A-Za-z0-9_-]{20,}", Kind("google-oauth-secret")),
        shape(r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b", With(discord_bot)),
        shape(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", Kind("telegram-bot-token")),
        // AWS session tokens (their base64 opens on the same bytes), whatever name they are under.
        shape(r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{40,}", Kind("aws-session-token")),
        shape(r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}", Kind("huggingface-token")),
        shape(r"\blin_(?:api|oauth)_[A-Za-z0-9]{40,}", Kind("linear-key")),
        // Doppler: personal, service (`dp.st.<config>.…`), CLI, service account, SCIM, audit.
        shape(r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.(?:[A-Za-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}", Kind("doppler-token")),
        shape(r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}", Kind("sentry-token")),
        shape(r"\bvc[piark]_[A-Za-z0-9]{24,}", Random("vercel-token")),
        shape(r"\bsbp_(?:oauth_)?[a-f0-9]{40}\b|\bsb_secret_[A-Za-z0-9_-]{20,}", Kind("supabase-key")),
        shape(r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,}", Kind("planetscale-token")),
        shape(r"\brnd_[A-Za-z0-9]{32,}", Random("render-key")),
        shape(r"\btskey-(?:[a-z]+-)?[A-Za-z0-9]+-[A-Za-z0-9]{20,}", Kind("tailscale-key")),
        shape(r"\bops_eyJ[A-Za-z0-9+/=_-]{40,}", Kind("1password-token")),
        shape(r"\bNR(?:AK|AA|II|JS|IQ|RA)-[A-Za-z0-9_-]{19,}", Kind("newrelic-key")),
        shape(r"\bkey-[a-f0-9]{32}\b|\b[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}\b", Kind("mailgun-key")),
        shape(r"\bsecret_[A-Za-z0-9]{43}\b", Random("notion-token")),
        shape(r"\bntn_[A-Za-z0-9]{40,}", Kind("notion-token")),
        shape(r"\bcf(?:k|ut|at)_[A-Za-z0-9]{40,}", Kind("cloudflare-token")),
        shape(r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}", Kind("docker-token")),
        shape(r"\bAT(?:ATT|CTT)3[A-Za-z0-9_=-]{40,}|\bATBB[A-Za-z0-9]{32,}", Kind("atlassian-token")),
        shape(r"\boy2[a-z0-9]{43}\b", Random("nuget-key")),
        shape(r"\bCFPAT-[A-Za-z0-9_-]{43}", Kind("contentful-token")),
        shape(r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}", Kind("firebase-key")),
        shape(r"\bnf[pcuo]_[A-Za-z0-9]{36,}", Kind("netlify-token")),
        shape(r"\bPMAT-[A-Z0-9]{26}\b", Kind("postman-key")),
        shape(r"\bpcsk_[A-Za-z0-9_]{40,}", Kind("pinecone-key")),
        shape(r"\bsk_[a-f0-9]{48}\b", Kind("elevenlabs-key")),
        shape(r"\bnapi_[A-Za-z0-9]{40,}", Kind("neon-key")),
        shape(r"\bsq[upa]_[a-f0-9]{40}\b", Kind("sonar-token")),
        shape(r"\bbkua_[a-f0-9]{40}\b", Kind("buildkite-token")),
        shape(r"\bfigd_[A-Za-z0-9_-]{40,}", Kind("figma-token")),
        shape(r"\bsgp_[a-f0-9]{16}_[a-f0-9]{40}\b|\bsgp_[a-f0-9]{40}\b", Kind("sourcegraph-token")),
        shape(r"\bpnu_[A-Za-z0-9]{36}\b", Kind("prefect-key")),
        shape(r"\bre_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}\b", Random("resend-key")),
        shape(r"\bddp_[A-Za-z0-9]{36}\b", Kind("deno-deploy-token")),
        shape(r"\be2b_[a-f0-9]{40}\b", Kind("e2b-key")),
        shape(r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", Kind("airtable-token")),
        shape(r"\bCCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}\b", Kind("circleci-token")),
        // An access key id with its secret beside it (`AKIA…,wJalr…` as the console's CSV has
        // them): the secret goes whatever it looks like.
        shape(
            r#"\b((?:AKIA|ASIA)[A-Z0-9]{16})(["']?[\s,:;|=]{1,10}["']?)([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])"#,
            With(|c| {
                let (whole, id, secret) = (group(c, 0), group(c, 1), group(c, 3));
                whole.replacen(id, "[redacted:aws-key-id]", 1).replacen(secret, "[redacted:aws-secret]", 1)
            }),
        ),
        shape(r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}", Kind("aws-key-id")),
    ]
}
