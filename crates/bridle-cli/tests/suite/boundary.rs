//! The kernel is the boundary in every mode (DESIGN §5.1, §6): escape attempts down the paths
//! beside the main road — `bypass`, set-id files, sockets and terminals, odd workspace paths, a
//! background process in `review` — run for real through `bridle` as the user runs it, under
//! bubblewrap and under forced Landlock, as the invoking user and (when that is root, as in CI)
//! as `nobody`. Every target is something the test made; each assertion is that nothing happened.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};

use super::bridle::*;
use super::sandbox::{output, users, Setup, User, ONE_NOBODY_AT_A_TIME};

pub(super) const BACKENDS: [&str; 2] = ["bwrap", "landlock"];

/// Five spellings of one effect on `target` (read from `.t/target` where the spelling hides it):
/// plain, nested subshells that read like arithmetic, a variable, a substitution, `eval`.
fn spellings(verb: &str, target: &str) -> Vec<String> {
    vec![
        format!("{verb} {target}"),
        format!("(({verb} {target}) )"),
        format!("T={target}; {verb} \"$T\""),
        format!("{verb} $(cat .t/target)"),
        format!("eval \"{verb} $(cat .t/target)\""),
    ]
}

async fn bypass_stays_in_the_sandbox(backend: &str, user: User) {
    let t = Setup::new(user, &format!("mode = \"bypass\"\n[sandbox]\nbackend = \"{backend}\"\n"));
    let victim = t.canaries.join("victim");
    std::fs::create_dir_all(victim.join("deep")).unwrap();
    std::fs::write(victim.join("deep/kept.txt"), "kept\n").unwrap();
    t.own();

    t.hide("target", &victim.display().to_string());
    for command in spellings("rm -rf", &victim.display().to_string()) {
        let (report, _) = t.tool_bash("bypass", json!({ "command": command }), false).await;
        assert_ne!(report["decision"], "ask", "bypass asked about `{command}`: {report}");
        if report["executed"] == true {
            assert_eq!(report["result"]["details"]["sandbox"], backend, "{report}");
        }
        let kept = std::fs::read_to_string(victim.join("deep/kept.txt"));
        assert_eq!(
            kept.ok().as_deref(),
            Some("kept\n"),
            "`{command}` removed the canary ({backend}, {user:?}): {report}"
        );
    }

    let key = t.home.join(".ssh/id_rsa");
    t.hide("target", &key.display().to_string());
    for command in spellings("cat", &key.display().to_string()) {
        let (report, _) = t.tool_bash("bypass", json!({ "command": command }), false).await;
        assert_ne!(report["decision"], "ask", "bypass asked about `{command}`: {report}");
        assert!(!report.to_string().contains("SECRET-KEY-MATERIAL"), "`{command}` read the key: {report}");
    }

    // An escalation is the one question bypass asks; unanswered, nothing runs.
    let escaped = t.canaries.join("escaped");
    let args = json!({"command": format!("touch {}", escaped.display()), "escalate": true, "justification": "x"});
    let (report, _) = t.tool_bash("bypass", args, false).await;
    assert_eq!(report["decision"], "ask", "{report}");
    assert_eq!(report["executed"], false, "{report}");
    assert!(!escaped.exists());
}

#[tokio::test]
async fn bypass_runs_every_command_in_the_sandbox_for_root_and_for_a_user() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    for user in users() {
        for backend in BACKENDS {
            bypass_stays_in_the_sandbox(backend, user).await;
        }
    }
}

#[tokio::test]
async fn with_the_sandbox_turned_off_bridle_says_so_at_every_start_and_bypass_runs_unconfined() {
    let t = Setup::new(User::Invoking, "mode = \"bypass\"\n[sandbox]\nenabled = false\n");
    let (report, said) = t.tool_bash("bypass", json!({"command": "echo ran"}), false).await;
    assert_eq!(report["executed"], true, "{report}");
    assert_eq!(report["result"]["details"]["sandbox"], "none", "{report}");
    assert!(said.contains("warning: the shell sandbox is off"), "{said}");
    // Any other command of the CLI says it too.
    let out = t.bridle(&["sessions", "list"]).output().await.unwrap();
    assert!(stderr(&out).contains("the shell sandbox is off"), "{}", stderr(&out));
}

/// Every file under `root` with a set-id bit.
fn set_id_files(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.permissions().mode() & 0o6000 != 0 {
                found.push(entry.path().display().to_string());
            }
        }
    }
    found
}

async fn no_set_id_file_is_made(backend: &str, user: User) {
    let t = Setup::new(user, &format!("mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\ncapture = false\n"));
    let attempts = [
        "cp /bin/bash sh1 && chmod 4755 sh1",
        "install -m 4755 /bin/bash sh2",
        "cp /bin/bash sh3 && chmod g+s sh3",
        "/usr/bin/python3 -c 'import os; open(\"sh4\", \"w\").close(); os.chmod(\"sh4\", 0o6755)'",
        "/usr/bin/python3 -c 'import os; os.close(os.open(\"sh5\", os.O_CREAT | os.O_WRONLY, 0o4755))'",
        "/usr/bin/python3 -c 'import os, stat; os.mknod(\"sh6\", stat.S_IFREG | 0o4755)'",
        "cp -p /usr/bin/passwd sh7 2>&1; ln /usr/bin/passwd sh8",
    ];
    for command in attempts {
        let r = t.bash(command).await;
        assert_eq!(r["details"]["sandbox"], backend, "{r}");
    }
    // (A background process needs a session: `held::a_background_process_leaves_no_set_id_file`.)
    assert_eq!(set_id_files(&t.dirs.workspace), Vec::<String>::new(), "{backend} {user:?}");
}

#[tokio::test]
async fn no_command_leaves_a_set_id_file_whatever_runs_it_for_root_and_for_a_user() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    for user in users() {
        for backend in BACKENDS {
            no_set_id_file_is_made(backend, user).await;
        }
    }
}

async fn only_tcp_reaches_out(backend: &str, user: User) {
    let t = Setup::new(user, &format!("mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    t.hide("port", &listener.local_addr().unwrap().port().to_string());
    let probe = r#"/usr/bin/python3 - "$(cat .t/port)" <<'EOF'
import socket, sys
def attempt(name, make, address=None):
    try:
        s = make()
        if address is not None:
            s.connect(address)
        print(name, "open")
    except OSError as e:
        print(name, "refused", e.errno)
port = int(sys.argv[1])
attempt("mptcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262), ("127.0.0.1", port))
attempt("sctp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_SCTP))
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
attempt("vsock", lambda: socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM))
attempt("netlink-audit", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9))
attempt("netlink-route", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
EOF"#;
    let r = t.bash(probe).await;
    let said = output(&r);
    for refused in ["mptcp", "sctp", "raw", "packet", "vsock", "netlink-audit"] {
        assert!(said.contains(&format!("{refused} refused")), "{refused} ({backend}, {user:?}): {said}");
    }
    for open in ["netlink-route", "tcp"] {
        assert!(said.contains(&format!("{open} open")), "{open} ({backend}, {user:?}): {said}");
    }
    assert!(listener.accept().is_err(), "an MPTCP connect reached the test's listener: {said}");
}

#[tokio::test]
async fn only_tcp_sockets_and_routing_netlink_can_be_made_for_root_and_for_a_user() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    for user in users() {
        for backend in BACKENDS {
            only_tcp_reaches_out(backend, user).await;
        }
    }
}

/// `bridle tool bash` run with a terminal the test owns as its controlling terminal (through
/// Python's `pty`): the command tries to open that terminal, to take its foreground, and to read
/// what the test types there; returns the report's command output.
async fn in_a_terminal(t: &Setup, command: &str) -> String {
    let args = json!({ "command": command }).to_string();
    let mut bridle = t.bridle(&["tool", "bash", "--mode", "auto", "--approve", "--args", &args]);
    let argv: Vec<String> = std::iter::once(bridle.as_std().get_program())
        .chain(bridle.as_std().get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let harness = r#"
import json, os, pty, select, sys, time
argv = json.loads(sys.argv[1]); marker = sys.argv[2]
pid, master = pty.fork()
if pid == 0:
    open(marker, "w").write(os.ttyname(0))
    os.execvp(argv[0], argv)
seen = b""; typed = False; start = time.time()
while time.time() - start < 60:
    if not typed and time.time() - start > 3:
        os.write(master, b"typed-secret\n"); typed = True
    r, _, _ = select.select([master], [], [], 0.2)
    if r:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
os.waitpid(pid, 0)
sys.stdout.write(seen.decode("utf-8", "replace"))
"#;
    let marker = t.dirs.workspace.join(".t/pty");
    let out = bridle
        .as_std_mut()
        .get_envs()
        .fold(std::process::Command::new("/usr/bin/python3").env_clear(), |c, (k, v)| match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        })
        .arg("-c")
        .arg(harness)
        .arg(serde_json::to_string(&argv).unwrap())
        .arg(&marker)
        .current_dir(&t.dirs.workspace)
        .output()
        .unwrap();
    let seen = String::from_utf8_lossy(&out.stdout).into_owned();
    // The report is the one JSON line among what the terminal echoed.
    let report: Value = seen
        .lines()
        .find_map(|l| serde_json::from_str(l.trim()).ok())
        .unwrap_or_else(|| panic!("no report in what the terminal showed: {seen} {}", stderr(&out)));
    assert_eq!(report["executed"], true, "{report}");
    output(&report["result"]).to_string()
}

async fn the_terminal_stays_the_users(backend: &str, user: User) {
    let t = Setup::new(user, &format!("mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n"));
    t.hide("pty", "");
    let command = r#"sleep 1; P=$(cat .t/pty)
(exec 3<>/dev/tty && echo opened-tty) 2>/dev/null
(exec 4<>"$P" && echo opened-pts) 2>/dev/null
/usr/bin/python3 - "$P" <<'EOF'
import fcntl, os, sys, termios
for path in ("/dev/tty", sys.argv[1]):
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    except OSError as e:
        print("open", path, "refused", e.errno); continue
    try:
        fcntl.ioctl(fd, termios.TIOCSCTTY, 1); print("took the terminal")
    except OSError as e:
        print("TIOCSCTTY refused", e.errno)
    try:
        os.tcsetpgrp(fd, os.getpgrp()); print("took the foreground")
    except OSError as e:
        print("TIOCSPGRP refused", e.errno)
EOF
read -t 6 line < "$P" 2>/dev/null; echo "read:[$line]""#;
    let said = in_a_terminal(&t, command).await;
    for taken in ["opened-tty", "opened-pts", "took the terminal", "took the foreground", "typed-secret"] {
        assert!(!said.contains(taken), "{taken} ({backend}, {user:?}): {said}");
    }
}

#[tokio::test]
async fn a_command_cannot_take_or_read_the_terminal_bridle_runs_in_for_root_and_for_a_user() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    for user in users() {
        for backend in BACKENDS {
            the_terminal_stays_the_users(backend, user).await;
        }
    }
}

/// Credential files a fake home holds (the test's own list, beyond the built-in masks): none is
/// readable from a command.
const CREDENTIALS: &[&str] = &[
    ".config/rclone/rclone.conf",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".docker/contexts/meta/x/meta.json",
    ".kube/config",
    ".kube/cache/token",
    ".pgpass",
    ".my.cnf",
    ".netrc",
    "_netrc",
    ".authinfo",
    ".authinfo.gpg",
    ".s3cfg",
    ".boto",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".terraformrc",
    ".terraform.d/credentials.tfrc.json",
    ".aws/credentials",
    ".aws/config",
    ".azure/accessTokens.json",
    ".config/gcloud/credentials.db",
    ".config/gcloud/application_default_credentials.json",
    ".oci/config",
    ".config/doctl/config.yaml",
    ".config/hcloud/cli.toml",
    ".fly/config.yml",
    ".config/heroku/config.json",
    ".netlify/config.json",
    ".vercel/auth.json",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".composer/auth.json",
    ".nuget/NuGet/NuGet.Config",
    ".gradle/gradle.properties",
    ".ssh/id_ed25519",
    ".gnupg/private-keys-v1.d/key.key",
    ".password-store/site.gpg",
    ".bitcoin/wallet.dat",
    ".electrum/wallets/default_wallet",
    ".ethereum/keystore/UTC--key",
    ".putty/sessions/host",
    "putty.ppk",
    ".vault-token",
    ".config/op/config",
    ".local/share/keyrings/login.keyring",
    ".mozilla/firefox/p/logins.json",
    ".config/google-chrome/Default/Login Data",
    ".git-credentials",
    ".env",
    ".bash_history",
];

async fn home_credentials_stay_hidden(backend: &str, user: User) {
    let t = Setup::new(user, &format!("mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n"));
    for (n, rel) in CREDENTIALS.iter().enumerate() {
        let path = t.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("CREDENTIAL-{n}-VALUE\n")).unwrap();
    }
    t.own();
    let names = CREDENTIALS.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(" ");
    let command = format!("H=$(cat .t/home); for f in {names}; do cat \"$H/$f\" 2>/dev/null; done; echo checked");
    let r = t.bash(&command).await;
    assert!(output(&r).contains("checked"), "{r}");
    assert!(!output(&r).contains("CREDENTIAL-"), "a credential was read ({backend}, {user:?}): {r}");
    assert!(r["details"]["sandboxHome"].as_str().unwrap_or_default().starts_with("home is hidden"), "{r}");
}

#[tokio::test]
async fn credentials_under_home_are_unreadable_whatever_their_name_for_root_and_for_a_user() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    for user in users() {
        for backend in BACKENDS {
            home_credentials_stay_hidden(backend, user).await;
        }
    }
}

/// Writes `files` (path, content) under `root`.
fn write_all(root: &Path, files: &[(&str, &str)]) {
    for (rel, content) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// With home hidden, everyday builds still work from what is shown of it: an offline cargo build
/// with a vendored dependency (the toolchain through `~/.cargo` and `~/.rustup`), `npm test`,
/// `python3 -m pytest`, `go build`, and a commit with the identity in `~/.gitconfig`. The fake
/// home links the toolchains of the user running the tests (their home is not `nobody`'s to
/// read, so this runs as the invoking user).
async fn everyday_work_with_home_hidden(backend: &str) {
    let t = Setup::new(User::Invoking, &format!("mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n"));
    let real_home = std::path::PathBuf::from(std::env::var_os("HOME").unwrap());
    for tool in [".cargo", ".rustup"] {
        std::os::unix::fs::symlink(real_home.join(tool), t.home.join(tool)).unwrap();
    }
    std::fs::write(t.home.join(".gitconfig"), "[user]\n\tname = Sandbox Tester\n\temail = tester@example.com\n")
        .unwrap();
    let ws = &t.dirs.workspace;
    write_all(
        ws,
        &[
            ("app/Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ntiny = \"0.1\"\n"),
            ("app/src/main.rs", "fn main() { println!(\"cargo-{}\", tiny::answer()); }\n"),
            ("app/.cargo/config.toml", "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"vendor\"\n"),
            ("app/vendor/tiny/Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("app/vendor/tiny/src/lib.rs", "pub fn answer() -> u32 { 42 }\n"),
            ("app/vendor/tiny/.cargo-checksum.json", "{\"files\":{},\"package\":null}\n"),
            ("web/package.json", "{\"name\":\"web\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node t.js\"}}\n"),
            ("web/t.js", "console.log('npm-' + (40 + 2));\n"),
            ("py/test_sum.py", "def test_sum():\n    assert sum([40, 2]) == 42\n"),
            ("go/go.mod", "module example.com/hello\n\ngo 1.19\n"),
            ("go/main.go", "package main\n\nfunc main() { println(\"go-42\") }\n"),
        ],
    );
    let path = format!("PATH={}/.cargo/bin:/usr/local/bin:/usr/bin:/bin", t.home.display());
    let r = t
        .bash(&format!(
            "export {path}; (cd app && cargo build --offline -q && ./target/debug/app); (cd web && npm test); \
             (cd py && /usr/bin/python3 -m pytest -q -p no:cacheprovider); (cd go && go build -o hello . && ./hello); \
             git init -q && git add -A && git commit -qm work && git log -1 --format='author=%an'"
        ))
        .await;
    let said = output(&r);
    for expected in ["cargo-42", "npm-42", "1 passed", "go-42", "author=Sandbox Tester"] {
        assert!(said.contains(expected), "{expected} ({backend}): {said}");
    }
}

#[tokio::test]
async fn everyday_builds_and_commits_work_with_home_hidden() {
    let which = |p: &str| std::process::Command::new("sh").args(["-c", &format!("command -v {p}")]).output().unwrap();
    for needed in ["go", "npm"] {
        assert!(which(needed).status.success(), "{needed} is missing: scripts/setup-system.sh installs it");
    }
    for backend in BACKENDS {
        everyday_work_with_home_hidden(backend).await;
    }
}

/// The pids of running processes whose command line is exactly `sleep SECONDS`.
fn sleeping(seconds: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| s.contains(") Z "));
        if args.len() == 2 && args[0].ends_with(b"sleep") && args[1] == seconds.as_bytes() && !zombie {
            found.push(pid);
        }
    }
    found
}

/// Waits up to `limit` for `check` to hold.
pub(super) fn eventually(limit: std::time::Duration, check: impl Fn() -> bool) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    check()
}

async fn nothing_outlives_its_call(backend: &str, user: User, tag: &str) {
    let t = Setup::new(user, &format!("mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n"));
    // After the call: a process in a new session, with a cleared environment (no marker).
    let after_call = format!("30{tag}1");
    let r = t.bash(&format!("setsid env -i sleep {after_call} > /dev/null 2>&1 < /dev/null & echo started")).await;
    let gaps = r["details"]["sandboxGaps"].as_str().unwrap_or_default().to_string();
    let held = !gaps.contains("can outlive its call");
    if held {
        assert!(eventually(std::time::Duration::from_secs(5), || sleeping(&after_call).is_empty()), "{r}");
    } else {
        // Only Landlock where no cgroup can be made says so; bubblewrap's PID namespace holds it.
        assert_eq!(backend, "landlock", "{r}");
        for pid in sleeping(&after_call) {
            let _ = std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
        return;
    }

    // Bridle killed mid-call, then started again: what the command detached is gone by then.
    let crashed = format!("30{tag}2");
    let args = json!({"command": format!("setsid env -i sleep {crashed} > /dev/null 2>&1 < /dev/null & sleep 120")});
    let mut bridle = t.bridle(&["tool", "bash", "--mode", "auto", "--approve", "--args", &args.to_string()]);
    let mut running = bridle.stdout(std::process::Stdio::null()).spawn().unwrap();
    assert!(eventually(std::time::Duration::from_secs(20), || !sleeping(&crashed).is_empty()), "never started");
    let victim = running.id().unwrap();
    // As `nobody`, Bridle runs under setpriv: kill the Bridle process itself, not its launcher.
    let bridle_pid = std::fs::read_to_string(format!("/proc/{victim}/task/{victim}/children"))
        .ok()
        .and_then(|c| c.split_whitespace().next().and_then(|p| p.parse::<u32>().ok()))
        .filter(|_| user == User::Nobody)
        .unwrap_or(victim);
    let _ = std::process::Command::new("kill").args(["-9", &bridle_pid.to_string()]).status();
    let _ = running.wait().await;
    let r = t.bash("echo next start").await;
    assert!(
        eventually(std::time::Duration::from_secs(5), || sleeping(&crashed).is_empty()),
        "a detached process outlived a killed Bridle and the next start ({backend}, {user:?}): {r}"
    );
}

#[tokio::test]
async fn nothing_a_command_detaches_outlives_its_call_nor_a_killed_bridle() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    for (u, user) in users().into_iter().enumerate() {
        for (b, backend) in BACKENDS.into_iter().enumerate() {
            nothing_outlives_its_call(backend, user, &format!("{u}{b}")).await;
        }
    }
}

/// Outside a session (`bridle tool`) nothing holds a command's changes for a person, so `review`
/// asks by the text instead of letting the command write unseen.
#[tokio::test]
async fn review_outside_a_session_asks_before_a_command_runs() {
    let t = Setup::new(User::Invoking, "mode = \"review\"\n");
    let (report, _) = t.tool_bash("review", json!({"command": "echo written > f.txt"}), false).await;
    assert_eq!(report["decision"], "ask", "{report}");
    assert_eq!(report["executed"], false, "{report}");
    assert!(report["findings"].to_string().contains("outside a session"), "{report}");
    assert!(!t.dirs.workspace.join("f.txt").exists());
}
