//! Credentials on command lines: the password flags of common programs (`mysql -pX`,
//! `sqlcmd -P X`, `keytool -storepass X`, `plink -pw X`, `sshpass -p X`, ...), `user:password`
//! after `-u`, cookies after `curl -b`, and the login commands that take a secret as an operand.
//!
//! Rule: a flag whose meaning depends on the program (`-p` is a port to `ssh` and `psql`, a
//! password to `mysql` and `mongosh`) counts only after that program's name; a flag that means a
//! password to every program that has it (`-storepass`, `-passin`, `-pw`) counts anywhere. MySQL's
//! `-p` takes its password attached only: `mysql -p db` asks for one and names a database.

use regex::Captures;

use super::patterns::{group, shape, Replace, Shape, REDACTED};

/// A flag's value: quoted, or a word that is not another flag.
const VALUE: &str = r#"("[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)"#;
/// Up to the flag, on the same command (not across a pipe, `;` or `&`).
const SAME_COMMAND: &str = r"\b[^\n|;&]*?";

/// The password of `htpasswd -b` is its last operand (third, or second with `-n`).
fn htpasswd(caps: &Captures<'_>) -> String {
    let whole = group(caps, 0);
    let flags: String = whole.split_whitespace().filter(|w| w.starts_with('-')).collect();
    let operands: Vec<&str> = whole.split_whitespace().skip(1).filter(|w| !w.starts_with('-')).collect();
    let at = if flags.contains('n') { 1 } else { 2 };
    match operands.get(at) {
        Some(password) if flags.contains('b') && operands.len() == at + 1 => {
            let cut = whole.len() - password.len();
            format!("{}{REDACTED}", &whole[..cut])
        }
        _ => whole.to_string(),
    }
}

/// The command-line shapes, in the order they run.
pub(super) fn shapes() -> Vec<Shape> {
    use Replace::{After, With};
    vec![
        // `redis-cli -a PASSWORD` (and `--pass`).
        shape(format!(r"(\bredis-cli{SAME_COMMAND}\s(?:-a|--pass)\s+){VALUE}"), After),
        // `aws configure set aws_secret_access_key X` (and the session token).
        shape(
            r"(?i)\b(aws\s+configure\s+set\s+(?:[A-Za-z0-9_.-]+\.)?aws_(?:secret_access_key|session_token)\s+)(\S+)",
            After,
        ),
        // `docker login -p X`, `podman login --password X`, `helm registry login -p X`.
        shape(
            r"\b((?:docker|podman|buildah|skopeo|nerdctl|helm\s+registry|oras)\s+login\b[^\n|;&]*?\s-p\s*)([^\s-]\S*)",
            After,
        ),
        // `htpasswd -b[c] FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`.
        shape(r"\bhtpasswd(?:\s+-[A-Za-z]+)+(?:\s+[^\s-]\S*){2,3}", With(htpasswd)),
        shape(r#"\b(sshpass\s+-p\s*)("[^"\n]*"|'[^'\n]*'|\S+)"#, After),
        // MySQL's clients: the password attached to `-p` only.
        shape(r"\b((?:mysql|mariadb)[a-z-]*\b[^\n|;&]*?\s-p)([^\s-]\S*)", After),
        // MongoDB's tools: `-p PASSWORD`, attached or not.
        shape(
            format!(r"(\bmongo(?:sh|dump|restore|import|export|stat|top|files)?{SAME_COMMAND}\s-p\s*){VALUE}"),
            After,
        ),
        // `-P PASSWORD`: SQL Server's `sqlcmd`/`bcp`, `zip`/`unzip`, Mosquitto's clients.
        shape(
            format!(
                r"(\b(?:sqlcmd|bcp|osql|isql|zip|unzip|zipcloak|mosquitto_(?:pub|sub|rr)){SAME_COMMAND}\s-P\s*){VALUE}"
            ),
            After,
        ),
        // `7z a -pPASSWORD`, `rar a -pPASSWORD`: attached.
        shape(r"(\b(?:7z|7za|7zr|rar|unrar)\b[^\n|;&]*?\s-p)([^\s-]\S*)", After),
        // `ldapsearch -w PASSWORD`.
        shape(format!(r"(\bldap[a-z]*{SAME_COMMAND}\s-w\s*){VALUE}"), After),
        // `lftp -u user,password`.
        shape(r"(\blftp\b[^\n|;&]*?\s-u\s*[^\s,]+,)(\S+)", After),
        // Flags that name a password to every program that has them: Java's `keytool` and
        // `jarsigner` (`-storepass`, `-keypass`, `-srcstorepass`, ...; `:env`/`:file` forms),
        // OpenSSL's `-passin`/`-passout`/`-pass`, PuTTY's `-pw`, FreeRDP's `/p:`.
        shape(
            format!(
                r"(?:^|\s)(-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass|passin|passout|pass|pw)(?::(?:env|file))?\s+){VALUE}"
            ),
            With(|c| {
                let whole = group(c, 0);
                let value = group(c, 2);
                if value.starts_with("[redacted") {
                    return whole.to_string();
                }
                format!("{}{REDACTED}", &whole[..whole.len() - value.len()])
            }),
        ),
        shape(r"(\s/p:)(\S+)", After),
        // `smbclient -U user%password`.
        shape(r#"(\s(?:-U|--user[=\s])\s*["']?[^\s%"']+%)([^\s"']+)"#, After),
        // curl -u user:password, --user user:password (the user may be empty: `-u :token`).
        shape(
            r#"(\s-u\s*|--user[\s=]+)(["']?[^\s:"']*):([^\s"']+)"#,
            With(|c| format!("{}{}:{REDACTED}", group(c, 1), group(c, 2))),
        ),
        // `curl -b 'name=value'`, `--cookie`: a cookie (a file name has no `=`).
        shape(
            r#"(\bcurl\b[^\n|;&]*?\s(?:-b|--cookie)(?:\s+|=))("[^"\n]*"|'[^'\n]*'|[^\s"']+)"#,
            With(|c| {
                if group(c, 2).contains('=') {
                    format!("{}{REDACTED}", group(c, 1))
                } else {
                    group(c, 0).to_string()
                }
            }),
        ),
    ]
}
