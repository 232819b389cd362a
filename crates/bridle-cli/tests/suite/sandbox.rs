//! The shell sandbox from the user's side: real escape attempts, run for real through `bridle
//! tool bash` in `auto` (approved where the guard asks: an approved call is still confined), each
//! aimed only at things the test made, so nothing is harmed if the sandbox is missing. Run with
//! bubblewrap and with Landlock forced, each as the user running the tests and, when that is
//! root (as CI runs), again as `nobody`: a sandbox that keeps root's capabilities fails the first,
//! one that leans on root's rights fails the second. Each target is read from a file at run time
//! (`$(cat .t/NAME)`), a disguise no reader of text can see through, so what is tested is the
//! kernel, not the guard.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::bridle::*;

/// Who runs `bridle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum User {
    /// Whoever runs the tests (root in CI).
    Invoking,
    /// `nobody`, dropped to from root.
    Nobody,
}

const NOBODY: u32 = 65534;
/// What a secret in Bridle's own environment looks like to a command that goes looking.
const CANARY: &str = "sk-canary-Q7x9Lm2Pz8Rk4Vb6Nw1Hj3Tf5Yc0Gd";

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false)
}

/// `nobody` cannot reach the build's folder (under root's home): a copy of the binary it can,
/// at one place per build (two checkouts testing at once never run each other's binary) that
/// each run of that build replaces (renamed into place, so a run still using it is not hurt).
pub(super) fn binary_for(user: User) -> PathBuf {
    static COPY: OnceLock<PathBuf> = OnceLock::new();
    match user {
        User::Invoking => PathBuf::from(env!("CARGO_BIN_EXE_bridle")),
        User::Nobody => COPY
            .get_or_init(|| {
                let dir = PathBuf::from("/var/tmp/bridle-test-bin");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
                let fresh = dir.join(format!("bridle.{}", std::process::id()));
                std::fs::copy(env!("CARGO_BIN_EXE_bridle"), &fresh).unwrap();
                std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755)).unwrap();
                // The build's own name: a hash of where its binary lives.
                let build = {
                    use std::hash::{Hash, Hasher};
                    let mut hasher = std::collections::hash_map::DefaultHasher::new();
                    env!("CARGO_BIN_EXE_bridle").hash(&mut hasher);
                    hasher.finish()
                };
                let copy = dir.join(format!("bridle-{build:016x}"));
                std::fs::rename(&fresh, &copy).unwrap();
                copy
            })
            .clone(),
    }
}

/// A workspace, a data dir, canaries and a fake home with a secret, outside `/tmp` (a private
/// `/tmp` must not be what makes an attempt fail), owned by whoever runs `bridle`.
pub(super) struct Setup {
    root: tempfile::TempDir,
    pub user: User,
    pub dirs: Dirs,
    pub canaries: PathBuf,
    pub home: PathBuf,
    /// Variables Bridle is launched with beyond the usual ones.
    env: Vec<(String, String)>,
}

impl Setup {
    pub(super) fn new(user: User, config: &str) -> Setup {
        let root = tempfile::tempdir_in("/var/tmp").unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut dirs = Dirs::new();
        dirs.workspace = root.path().join("ws");
        dirs.data = root.path().join("data");
        let canaries = root.path().join("canaries");
        let home = root.path().join("home");
        for d in [&dirs.workspace, &dirs.data, &canaries, &home.join(".ssh")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(canaries.join("canary"), "untouched\n").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "SECRET-KEY-MATERIAL\n").unwrap();
        std::fs::write(dirs.data.join("config.toml"), config).unwrap();
        let setup = Setup { root, user, dirs, canaries, home, env: Vec::new() };
        setup.hide("canaries", &setup.canaries.display().to_string());
        setup.hide("home", &setup.home.display().to_string());
        setup.hide("data", &setup.dirs.data.display().to_string());
        setup
    }

    /// Launches Bridle with `name=value` too.
    pub(super) fn with_env(mut self, name: &str, value: &str) -> Setup {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Writes a target where a command can read it (`.t/NAME`).
    pub(super) fn hide(&self, name: &str, value: &str) {
        std::fs::create_dir_all(self.dirs.workspace.join(".t")).unwrap();
        std::fs::write(self.dirs.workspace.join(".t").join(name), value).unwrap();
        self.own();
    }

    /// Hands everything made so far to the user `bridle` runs as.
    pub(super) fn own(&self) {
        if self.user == User::Nobody {
            let ok = std::process::Command::new("chown")
                .args(["-R", &format!("{NOBODY}:{NOBODY}")])
                .arg(self.root.path())
                .status()
                .unwrap();
            assert!(ok.success());
        }
    }

    fn canary(&self) -> String {
        std::fs::read_to_string(self.canaries.join("canary")).unwrap()
    }

    /// `bridle ARGS` as the setup's user, with its data dir, workspace and home, and a secret in
    /// its own environment.
    pub(super) fn bridle(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::from(as_user(self.user, binary_for(self.user)));
        command
            .args(args)
            .arg("--data-dir")
            .arg(&self.dirs.data)
            .arg("--workspace")
            .arg(&self.dirs.workspace)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            // A secret in Bridle's own environment, which no command may read.
            .env("OPENAI_API_KEY", CANARY)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.dirs.workspace)
            .stdin(std::process::Stdio::null());
        command
    }

    /// `bridle tool bash` with `command`, approved; the result the model would get. The command
    /// runs from a script file the guard cannot read: these tests are of the kernel's boundary,
    /// and an escape the guard would refuse by its text must still be tried against the kernel.
    pub(super) async fn bash(&self, command: &str) -> Value {
        static SCRIPTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SCRIPTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let script = format!(".t/escape-{n}.sh");
        std::fs::write(self.dirs.workspace.join(&script), command).unwrap();
        self.own();
        let (report, _) = self.tool_bash("auto", json!({ "command": format!("bash {script}") }), true).await;
        assert_eq!(report["executed"], true, "`{command}` did not run: {report}");
        report["result"].clone()
    }

    /// `bridle tool bash --mode MODE` with `args` (approved when `approve`): its report, and
    /// what it said on stderr.
    pub(super) async fn tool_bash(&self, mode: &str, args: Value, approve: bool) -> (Value, String) {
        let args = args.to_string();
        let mut argv = vec!["tool", "bash", "--mode", mode, "--args", &args];
        if approve {
            argv.push("--approve");
        }
        let out = self.bridle(&argv).output().await.unwrap();
        let report: Value = serde_json::from_str(&stdout(&out))
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", stdout(&out), stderr(&out)));
        (report, stderr(&out))
    }
}

pub(super) fn output(result: &Value) -> &str {
    result["output"].as_str().unwrap()
}

/// `program`, to be run as `user` (through `setpriv` for `nobody`).
pub(super) fn as_user(user: User, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    match user {
        User::Invoking => std::process::Command::new(program),
        User::Nobody => {
            let mut c = std::process::Command::new("setpriv");
            c.args([&format!("--reuid={NOBODY}"), &format!("--regid={NOBODY}"), "--clear-groups", "--"]).arg(program);
            c
        }
    }
}

/// Who the escapes run as: the invoking user and, when that is root, `nobody` too.
pub(super) fn users() -> Vec<User> {
    if is_root() {
        vec![User::Invoking, User::Nobody]
    } else {
        eprintln!("not root: the escapes run as this user only (CI runs them as root and as nobody)");
        vec![User::Invoking]
    }
}

/// `RLIMIT_NPROC`, a user's process limit, counts every process of that user: the escape runs
/// (each starts processes up to its limit, as `nobody` among others) take turns.
pub(super) static ONE_NOBODY_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Every escape class, then ordinary work; `expected` is the sandbox the results must name.
async fn escapes_fail_and_work_goes_on(backend: &str, expected: &str, user: User) {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    // With the network on (every public host, through the proxy): no door opens with it.
    let config = format!(
        "mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\nmax_processes = 200\ntmp_size = \"64M\"\n\
         [sandbox.network]\nmode = \"allow\"\nallow = [\"*\"]\n"
    );
    let t = Setup::new(user, &config);
    let config_file = t.dirs.data.join("config.toml");

    // Writes outside the workspace, through a variable and through brace expansion.
    let r = t.bash("D=$(cat .t/canaries); echo pwned > $D/canary").await;
    assert_eq!(r["details"]["sandbox"], expected, "{r}");
    let r2 = t.bash("{cp,/etc/hostname,$(cat .t/canaries)/brace}").await;
    assert_eq!(t.canary(), "untouched\n", "{r}");
    assert!(!t.canaries.join("brace").exists(), "{r2}");

    // Privilege: remount / read-write and write outside; unmount the mask over a secret.
    let r = t.bash("mount -o remount,rw / ; D=$(cat .t/canaries); echo pwned > $D/canary; echo done").await;
    assert_eq!(t.canary(), "untouched\n", "{r}");
    let r = t.bash("H=$(cat .t/home); umount -l $H/.ssh; umount $H/.ssh; cat $H/.ssh/id_rsa").await;
    assert!(!output(&r).contains("SECRET-KEY-MATERIAL"), "{r}");
    let r = t.bash("H=$(cat .t/home); cat $H/.ssh/id_rsa").await;
    assert!(!output(&r).contains("SECRET-KEY-MATERIAL"), "{r}");

    // Bridle's own environment: unmount /proc to see the host's, then read every process's.
    let r = t
        .bash("umount -l /proc 2>/dev/null; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null | grep -c sk-canary")
        .await;
    assert!(!output(&r).contains(CANARY), "{r}");
    assert!(output(&r).contains("\n0\n") || output(&r).contains("\n0"), "a process's environment held the key: {r}");

    // A connection to a listener the test runs on loopback.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    t.hide("port", &listener.local_addr().unwrap().port().to_string());
    let r = t.bash("P=$(cat .t/port); exec 3<>/dev/tcp/127.0.0.1/$P && echo connected").await;
    assert!(listener.accept().is_err(), "the command connected: {r}");
    assert!(!output(&r).contains("connected\n"), "{r}");

    // A datagram to a UDP socket the test listens on (Landlock alone cannot stop UDP).
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    t.hide("udp", &udp.local_addr().unwrap().port().to_string());
    let r = t
        .bash("/usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"127.0.0.1\", int(sys.argv[1]))); print(\"sent\")' $(cat .t/udp)")
        .await;
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(udp.recv(&mut [0u8; 8]).is_err(), "a datagram arrived: {r}");
    if expected == "landlock" {
        // Refused at the socket (under bwrap it goes to the sandbox's own loopback, not the host's).
        assert!(!output(&r).contains("sent\n"), "{r}");
    }

    // A Unix socket the test listens on, at a path no mask covers.
    let socket = t.canaries.join("door.sock");
    let unix = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    unix.set_nonblocking(true).unwrap();
    t.hide("sock", &socket.display().to_string());
    let r = t
        .bash("/usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"connected\")' $(cat .t/sock)")
        .await;
    assert!(unix.accept().is_err(), "the command connected to the socket: {r}");
    assert!(!output(&r).contains("connected\n"), "{r}");

    // A signal to a process the test started.
    let mut victim = std::process::Command::new("sleep").arg("300").spawn().unwrap();
    t.hide("victim", &victim.id().to_string());
    let r = t.bash("V=$(cat .t/victim); kill -9 $V").await;
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(victim.try_wait().unwrap().is_none(), "the test's process was killed: {r}");
    victim.kill().unwrap();
    let _ = victim.wait();

    // Bridle's own config, rewritten to turn the guard off.
    let r = t.bash("C=$(cat .t/data); echo 'mode = \"bypass\"' > $C/config.toml").await;
    assert_eq!(std::fs::read_to_string(&config_file).unwrap(), config, "{r}");

    // Bounded: 2,000 background sleeps stop at the limit (200 here).
    let r = t
        .bash(
            "/usr/bin/python3 -c '
import subprocess
started = []
try:
    for _ in range(2000):
        started.append(subprocess.Popen([\"sleep\", \"30\"]))
except OSError as e:
    print(\"refused:\", e)
print(len(started))'",
        )
        .await;
    let started: usize = output(&r).lines().rev().find_map(|l| l.trim().parse().ok()).unwrap_or(usize::MAX);
    assert!(started < 200, "{started} processes started: {r}");

    // Persistence through git, and the private /tmp's size (bubblewrap only: Landlock leaves
    // .git/ to the guard and shares /tmp, as every Landlock result says).
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(&t.dirs.workspace).status().unwrap();
    assert!(git.success());
    t.own();
    let git_config = std::fs::read_to_string(t.dirs.workspace.join(".git/config")).unwrap();
    if expected == "bwrap" {
        let r = t.bash("G=.git; printf '[core]\\n\\thooksPath = /x\\n' >> $G/config; touch $G/hooks/pre-commit").await;
        assert_eq!(std::fs::read_to_string(t.dirs.workspace.join(".git/config")).unwrap(), git_config, "{r}");
        assert!(!t.dirs.workspace.join(".git/hooks/pre-commit").exists(), "{r}");
        let r = t.bash("mv .git .git2 && mkdir .git && cp -r .git2/. .git/; echo x >> .git/config").await;
        assert_eq!(std::fs::read_to_string(t.dirs.workspace.join(".git/config")).unwrap(), git_config, "{r}");
        for place in ["/tmp/big", "/dev/shm/big", "/dev/big"] {
            let r = t.bash(&format!("head -c 100M /dev/zero > {place}; stat -c %s {place} || echo 0")).await;
            let size: u64 = output(&r).lines().rev().find_map(|l| l.trim().parse().ok()).unwrap_or(u64::MAX);
            assert!(size <= 64 << 20, "{place} took {size} bytes: {r}");
        }
    } else {
        assert!(r["details"]["sandboxGaps"].as_str().unwrap_or_default().contains("/tmp"), "{r}");
    }

    // Ordinary work still works: a build, a test, a commit, writes to the workspace and /tmp.
    std::fs::write(
        t.dirs.workspace.join("Makefile"),
        "all:\n\techo built > out.txt\ntest: all\n\tgrep -q built out.txt\n",
    )
    .unwrap();
    t.own();
    let r = t
        .bash(
            "make -s && make -s test && S=/tmp/bridle-scratch-$$; echo scratch > $S && cat $S && rm $S && \
             git add -A && git -c user.name=t -c user.email=t@t commit -qm work && git log --oneline | wc -l",
        )
        .await;
    assert_eq!(r["details"]["exitCode"], 0, "{r}");
    assert!(output(&r).contains("scratch"), "{r}");
    assert_eq!(std::fs::read_to_string(t.dirs.workspace.join("out.txt")).unwrap(), "built\n");

    // How each command ran is on the record.
    let audit = bridle(&t.dirs, &["audit", "--kind", "tool_completed", "--json"]).await;
    let rows = json_lines(&audit);
    assert!(rows.len() >= 12, "{}", stdout(&audit));
    assert!(rows.iter().all(|r| r["payload"]["sandbox"] == expected), "{}", stdout(&audit));
}

#[tokio::test]
async fn bubblewrap_contains_every_escape_class_for_root_and_for_a_user() {
    for user in users() {
        escapes_fail_and_work_goes_on("bwrap", "bwrap", user).await;
    }
}

#[tokio::test]
async fn landlock_contains_them_when_bubblewrap_is_not_used_for_root_and_for_a_user() {
    for user in users() {
        escapes_fail_and_work_goes_on("landlock", "landlock", user).await;
    }
}

#[tokio::test]
async fn without_a_sandbox_auto_asks_for_every_command_and_results_say_so() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(dirs.data.join("config.toml"), "mode = \"auto\"\n[sandbox]\nenabled = false\n").unwrap();
    let out = bridle(&dirs, &["guard", "bash", "--args", r#"{"command":"ls"}"#]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report["findings"].to_string().contains("without an OS sandbox"), "{report}");

    let out = bridle(&dirs, &["tool", "bash", "--approve", "--args", r#"{"command":"echo ran"}"#]).await;
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["result"]["details"]["sandbox"], "none");
    assert!(output(&report["result"]).contains("[note: ran without an OS sandbox"), "{report}");

    // An allow rule lifts the ask, as for any command the mode asks about.
    std::fs::write(
        dirs.data.join("config.toml"),
        "mode = \"auto\"\n[sandbox]\nenabled = false\n[rules]\nallow = [\"bash(ls*)\"]\n",
    )
    .unwrap();
    let out = bridle(&dirs, &["guard", "bash", "--args", r#"{"command":"ls"}"#]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// Canaries outside `/tmp` for the tests below.
struct Targets {
    _root: tempfile::TempDir,
    canaries: PathBuf,
    home: PathBuf,
}

impl Targets {
    fn new() -> Targets {
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let canaries = root.path().join("canaries");
        let home = root.path().join("home");
        std::fs::create_dir_all(&canaries).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Targets { canaries, home, _root: root }
    }
}

async fn run_bash(dirs: &Dirs, home: &Path, command: &str) -> Value {
    let args = json!({ "command": command }).to_string();
    let out = bridle_with_env(
        &dirs.data,
        &dirs.workspace,
        &["tool", "bash", "--mode", "auto", "--approve", "--args", &args],
        &[("HOME", &home.display().to_string())],
    )
    .await;
    let report: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", stdout(&out), stderr(&out)));
    assert_eq!(report["executed"], true, "`{command}` did not run: {report}");
    report["result"].clone()
}

#[tokio::test]
async fn an_escalation_asks_even_in_auto_and_runs_unconfined_once_approved() {
    let dirs = Dirs::new();
    let t = Targets::new();
    let target = t.canaries.join("escalated");
    let command = format!("echo out > {}", target.display());
    let args = json!({"command": command, "escalate": true, "justification": "write the build cache"}).to_string();
    let out = bridle(&dirs, &["tool", "bash", "--mode", "auto", "--args", &args]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report["findings"].to_string().contains("write the build cache"), "{report}");
    assert!(!target.exists());

    // The same call without escalating is confined; escalated and approved, it runs outside once.
    let confined = json!({ "command": command }).to_string();
    let out = bridle(&dirs, &["tool", "bash", "--mode", "auto", "--approve", "--args", &confined]).await;
    assert!(!target.exists(), "{}", stdout(&out));
    let out = bridle(&dirs, &["tool", "bash", "--mode", "auto", "--approve", "--args", &args]).await;
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["result"]["details"]["sandbox"], "none", "{report}");
    assert_eq!(report["result"]["details"]["escalated"], true);
    assert!(target.exists());
}

#[tokio::test]
async fn git_works_in_a_workspace_that_is_a_sub_folder_of_a_repository() {
    // Outside /tmp, as a user's repository is (the private /tmp hides what is around it).
    let t = Targets::new();
    let repo = t.canaries.with_file_name("repo");
    let mut dirs = Dirs::new();
    dirs.workspace = repo.join("project");
    std::fs::create_dir_all(&dirs.workspace).unwrap();
    let git = |args: &[&str]| std::process::Command::new("git").args(args).current_dir(&repo).status().unwrap();
    assert!(git(&["init", "-q"]).success());
    std::fs::write(dirs.workspace.join("a.txt"), "a").unwrap();
    let r = run_bash(&dirs, &t.home, "git status --short").await;
    assert_eq!(r["details"]["exitCode"], 0, "{r}");
    assert!(output(&r).contains("?? ./"), "{r}");
}

/// Starts `program` as the user `bridle` runs as, and returns it with the first line it prints.
fn serve(user: User, program: &str, args: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = as_user(user, program)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    (child, line.trim().to_string())
}

/// With the network on, a command still reaches no door to the desktop: an abstract socket, an
/// X server (XTEST could type into it) and a session bus (the keychain), each started by the
/// test as the user `bridle` runs as.
async fn the_desktop_stays_out_of_reach(backend: &str, user: User) {
    let t = Setup::new(user, &format!("mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\nnetwork = true\n"));

    let name = format!("bridle-door-{}-{backend}-{user:?}", std::process::id());
    let address =
        <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(name.as_bytes())
            .unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&address).unwrap();
    listener.set_nonblocking(true).unwrap();
    t.hide("abstract", &name);
    let r = t
        .bash("/usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0\"+sys.argv[1]); print(\"connected\")' $(cat .t/abstract)")
        .await;
    assert!(listener.accept().is_err(), "the command reached the abstract socket: {r}");
    assert!(!output(&r).contains("connected\n"), "{r}");

    let (mut x, display) = serve(user, "Xvfb", &["-displayfd", "1", "-nolisten", "tcp"]);
    let reachable = std::process::Command::new("xdpyinfo").args(["-display", &format!(":{display}")]).output().unwrap();
    assert!(reachable.status.success(), "the test's own X server is not reachable");
    t.hide("display", &display);
    let r = t.bash("DISPLAY=:$(cat .t/display) xdpyinfo >/dev/null && echo reached-x").await;
    assert!(!output(&r).contains("reached-x"), "{r}");
    let _ = x.kill();
    let _ = x.wait();

    let bus_path = t.canaries.join("bus");
    let (mut bus, address) = serve(
        user,
        "dbus-daemon",
        &["--session", "--nofork", "--print-address=1", &format!("--address=unix:path={}", bus_path.display())],
    );
    t.hide("bus", &address);
    let r = t
        .bash("dbus-send --bus=$(cat .t/bus) --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames && echo reached-bus")
        .await;
    assert!(!output(&r).contains("reached-bus"), "{r}");
    // The bus was there to be reached: the same call from outside, as the same user, gets through.
    let reached = as_user(user, "dbus-send")
        .args([&format!("--bus={address}"), "--print-reply", "--dest=org.freedesktop.DBus", "/"])
        .arg("org.freedesktop.DBus.ListNames")
        .output()
        .unwrap();
    assert!(reached.status.success(), "the test's own bus is not reachable: {reached:?}");
    let _ = bus.kill();
    let _ = bus.wait();
}

#[tokio::test]
async fn with_the_network_on_no_door_to_the_desktop_opens_under_bubblewrap_or_landlock() {
    for user in users() {
        the_desktop_stays_out_of_reach("bwrap", user).await;
        the_desktop_stays_out_of_reach("landlock", user).await;
    }
}
