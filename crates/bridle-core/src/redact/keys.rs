//! Key material: PEM private keys whole or in pieces, the body lines of a key printed one at a
//! time (`grep` prints only the lines that match, without the BEGIN line), WireGuard and PuTTY
//! private keys, wallet recovery phrases and bare AWS secret access keys.
//!
//! Rule: a line that is nothing but a key's base64 (64 characters a line in PEM and PuTTY, 70 in
//! OpenSSH, mixing cases and digits) is a key's line wherever it is printed — alone, after a
//! `path:line:` of grep or a diff's `+`; a certificate's line looks the same and goes too.

use regex::Captures;

use super::patterns::{group, shape, Replace, Shape};

/// What a whole base64 line of a key may be preceded by on its line: grep's `path:12:` (or
/// `path-12-` for context lines), a diff's `+`, `-` or space, indentation.
const LINE_PREFIX: &str = r"(?m)^((?:[^\n]*?[:-]\d+[:-])?[+\- ]?[ \t]*)";

/// A 32-byte value in base64: 43 characters, the last of them holding 2 spare zero bits, and `=`.
const KEY_32: &str = r"[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=";

fn mixed(text: &str) -> bool {
    text.contains(|c: char| c.is_ascii_uppercase())
        && text.contains(|c: char| c.is_ascii_lowercase())
        && text.contains(|c: char| c.is_ascii_digit())
}

/// Group 2 replaced by `[redacted:private-key]` when it mixes cases and digits.
fn key_line(caps: &Captures<'_>) -> String {
    if mixed(group(caps, 2)) {
        format!("{}[redacted:private-key]{}", group(caps, 1), group(caps, 3))
    } else {
        group(caps, 0).to_string()
    }
}

/// The PEM block, whole: it runs before every other shape, so no shape takes a piece of it.
pub(super) fn leading() -> Vec<Shape> {
    vec![shape(
        // The whole block, or everything after BEGIN when the END was cut off.
        r"-{3,}\s*BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-*(?s:.*?)(?:-{3,}\s*END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-*|\z)",
        Replace::Kind("private-key"),
    )]
}

/// Key material but the PEM block, in the order it runs (after the vendors' tokens).
pub(super) fn material() -> Vec<Shape> {
    use Replace::{AfterKind, Kind, With};
    vec![
        // A PEM body without its BEGIN line: lines of base64 opening on a DER sequence (`MII`).
        shape(r"\bMII[A-Za-z0-9+/]{60,}(?:\s*[A-Za-z0-9+/]{16,}){2,}={0,2}", Kind("private-key")),
        // PuTTY: the private lines after their count (the public ones say nothing secret).
        shape(
            r"(Private-Lines:[ \t]*\d+[ \t]*\r?\n)((?:[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*(?:\r?\n|\z))+)",
            With(|c| {
                let end = if group(c, 2).ends_with('\n') { "\n" } else { "" };
                format!("{}[redacted:putty-key]{end}", group(c, 1))
            }),
        ),
        // Grep's lines of a key file, by the file's name: every line of it.
        shape(
            r"(?m)^([^\s:]*(?:\.pem|\.key|\.ppk|\.p8|id_rsa|id_dsa|id_ecdsa|id_ed25519|id_ecdsa_sk|id_ed25519_sk):\d+[:-])(.+)$",
            With(|c| {
                let line = group(c, 2);
                if line.starts_with("[redacted") || line.starts_with("-----") {
                    group(c, 0).to_string()
                } else {
                    format!("{}[redacted:private-key]", group(c, 1))
                }
            }),
        ),
        // WireGuard: `PrivateKey = …`, `PresharedKey = …` (wg configs, `wg showconf`), a key piped
        // to `wg`, and `wg genkey`'s output alone on its line.
        shape(
            format!(r#"(?i)\b((?:private|preshared)[_-]?key\b["']?[ \t]*[:=]?[ \t]*["']?)({KEY_32})"#),
            AfterKind("wireguard-key"),
        ),
        shape(
            format!(r#"\b((?:echo|printf)\s+(?:'%s'\s+)?["']?)({KEY_32})(["']?\s*\|\s*wg\b)"#),
            With(|c| format!("{}[redacted:wireguard-key]{}", group(c, 1), group(c, 3))),
        ),
        shape(
            format!(r"{LINE_PREFIX}({KEY_32})([ \t]*\r?)$"),
            With(|c| format!("{}[redacted:wireguard-key]{}", group(c, 1), group(c, 3))),
        ),
        // A key's base64 line alone (see the module's rule); after grep's `path:line:`, the last,
        // shorter line of a body too, when it ends in padding.
        shape(format!(r"{LINE_PREFIX}([A-Za-z0-9+/]{{64}}|[A-Za-z0-9+/]{{70}})([ \t]*\r?)$"), With(key_line)),
        shape(r"(?m)^([^\n]*?[:-]\d+[:-])([A-Za-z0-9+/]{16,63}==?)([ \t]*\r?)$", With(key_line)),
        // A wallet's recovery phrase: 12 to 24 lowercase words after a word that names one.
        shape(
            r"(?i)\b((?:mnemonic|seed phrase|seed words|recovery phrase|secret recovery phrase|seed)\b[^A-Za-z\n]{0,12})((?-i:[a-z]{3,8})(?:\s+(?-i:[a-z]{3,8})){11,23})\b",
            AfterKind("seed-phrase"),
        ),
    ]
}

/// A bare AWS secret access key: 40 characters of base64 with upper, lower and a digit or `/`/`+`
/// (a git hash is lower-case hex, so it never matches). It runs late, after the commands and
/// names that say more about what it is. It may open a line after a diff's `+`, or follow `=`.
pub(super) fn aws_secret() -> Vec<Shape> {
    vec![shape(
        r"(?m)(?:^\+|^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])",
        Replace::With(|c| {
            let whole = group(c, 0);
            let key = group(c, 1);
            let mixed = key.contains(|ch: char| ch.is_ascii_uppercase())
                && key.contains(|ch: char| ch.is_ascii_lowercase())
                && key.contains(|ch: char| ch.is_ascii_digit() || ch == '/' || ch == '+');
            if mixed && !key.contains("redacted") {
                whole.replacen(key, "[redacted:aws-secret]", 1)
            } else {
                whole.to_string()
            }
        }),
    )]
}
