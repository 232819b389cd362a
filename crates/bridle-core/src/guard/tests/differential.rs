//! The shell reader against real shells: every corpus line runs in real bash, and again in real
//! dash (what `sh` is on Debian), inside bubblewrap (read-only system, private `/tmp`, no
//! network, its own process tree), with every program it could start replaced by a stub that
//! logs its argv. Each program the shell actually started must be one the reader believed would
//! start, with the arguments it believed — otherwise the guard judged a different command from
//! the one that ran. In dash the line is compared with the reader's reading of `sh -c 'LINE'`;
//! inside either, `sh`, `dash` and `ash` are dash and `bash` is bash.
//!
//! What is compared: the logged argv against each simple command the reader found, its wrappers
//! included (`sudo rm -rf /` ran as `sudo`, the reader saw `rm` under `sudo`). A word the reader
//! could not know (`$X`, a glob) matches any run of arguments; `~` is the home folder.
//! Lines the reader calls fork bombs are not run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::corpus::{dangerous, everyday, lines, CRITICAL};
use crate::guard::shell::{self, SimpleCommand, SHELLS};

/// Builtins turned off so that bash looks them up on `PATH` and finds the stub.
const SHADOWED_BUILTINS: &str = "kill echo printf test [ pwd type hash ulimit umask times";
/// How long one line may run.
const LINE_TIMEOUT: Duration = Duration::from_secs(3);
/// Field and record separators in the log.
const FIELD: char = '\u{1f}';
const RECORD: char = '\u{1e}';

/// A program start bash made: the name it was started as and its arguments.
type Argv = Vec<String>;

/// Logs its arguments as one start (the first is the program's name), in one write so
/// the stages of a pipeline do not interleave.
fn log_script(log: &Path) -> String {
    format!(
        "#!/bin/sh\nr=\"${{1##*/}}\"; shift\nfor a in \"$@\"; do r=\"$r$(printf '\\037')$a\"; done\nprintf '%s\\036' \"$r\" >> '{}'\n",
        log.display()
    )
}

/// The stub every program name points to: logs its argv; `echo`, `printf`, `dirname`,
/// `basename` and `pwd` also print (as the real ones would) and `which` names the stub, so a script piped into a shell, `$(printf ...)`
/// and `$(which rm)` still work.
fn stub_script(bin: &Path) -> String {
    format!(
        "#!/bin/sh\n'{log}' \"$0\" \"$@\"\n\
         case \"${{0##*/}}\" in\n\
           echo) BASH_ENV= /bin/bash -c 'echo \"$@\"' echo \"$@\" ;;\n\
           printf) BASH_ENV= /bin/bash -c 'printf \"$@\"' printf \"$@\" ;;\n\
           which) for a in \"$@\"; do BASH_ENV= /bin/bash -c 'printf \"%s\\n\" \"$1\"' x '{bin}/'\"$a\"; done ;;\n\
           dirname|basename) /usr/bin/\"${{0##*/}}\" \"$@\" ;;\n\
           pwd) /bin/pwd ;;\n\
         esac\nexit 0\n",
        log = bin.join(".log").display(),
        bin = bin.display()
    )
}

/// Loaded by every bash that starts (`BASH_ENV`): builtins off, and unknown programs logged.
fn prelude(bin: &Path, line: &str) -> String {
    // `printf -v` sets a variable only as the builtin: kept for lines that use it.
    let shadowed =
        if line.contains("printf -v") { SHADOWED_BUILTINS.replace(" printf", "") } else { SHADOWED_BUILTINS.into() };
    format!(
        "enable -n {shadowed}\ncommand_not_found_handle() {{ '{}' \"$@\"; return 0; }}\n",
        bin.join(".log").display()
    )
}

/// Every name a line could run: its words that look like program names, and the programs the
/// reader found.
fn program_names(line: &str, script: &shell::Script) -> Vec<String> {
    let mut names: Vec<String> = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || "._+-".contains(c)))
        .filter(|w| !w.is_empty() && !w.starts_with('-') && w.len() < 64)
        .map(str::to_string)
        .collect();
    names.extend(script.commands.iter().filter_map(|c| c.program.clone()));
    names.extend(script.commands.iter().flat_map(|c| c.wrappers.clone()));
    names.retain(|n| !n.contains('/') && n != "." && n != "..");
    names.sort();
    names.dedup();
    names
}

/// The shell a line is run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shell {
    Bash,
    Dash,
}

/// The real shell a shell program's name starts in the sandbox.
fn real_shell(name: &str) -> &'static Path {
    match name {
        "sh" | "dash" | "ash" => Path::new("/bin/dash"),
        _ => Path::new("/bin/bash"),
    }
}

/// Runs `line` in a real shell in a sandbox; returns what started, or `None` when it timed out.
fn run_in(shell: Shell, line: &str, script: &shell::Script, scratch: &Path) -> Option<Vec<Argv>> {
    let (bin, home, work, log) = (scratch.join("bin"), scratch.join("home"), scratch.join("work"), scratch.join("log"));
    for d in [&bin, &home, &work] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(&log, "").unwrap();
    let stub = bin.join(".stub");
    for (file, text) in [(&stub, stub_script(&bin)), (&bin.join(".log"), log_script(&log))] {
        std::fs::write(file, text).unwrap();
        std::fs::set_permissions(file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    for name in program_names(line, script) {
        let target = bin.join(&name);
        if target.exists() {
            continue;
        }
        // Shells stay real (bash loads the prelude too); everything else is the stub.
        let real = if SHELLS.contains(&name.as_str()) { real_shell(&name) } else { stub.as_path() };
        std::os::unix::fs::symlink(real, &target).unwrap();
    }
    let prelude_file = scratch.join("prelude.sh");
    std::fs::write(&prelude_file, prelude(&bin, line)).unwrap();
    let s = |p: &Path| p.display().to_string();
    let mut child = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"])
        .args(["--bind", &s(scratch), &s(scratch)])
        .args(["--unshare-all", "--die-with-parent", "--new-session", "--chdir", &s(&work)])
        .args(["--clearenv", "--setenv", "PATH", &s(&bin), "--setenv", "HOME", &s(&home)])
        .args(["--setenv", "BASH_ENV", &s(&prelude_file), "--setenv", "PWD", &s(&work)])
        .args([if shell == Shell::Bash { "/bin/bash" } else { "/bin/dash" }, "-c", line])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bwrap runs (scripts/setup-system.sh installs bubblewrap)");
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > LINE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    Some(text.split(RECORD).filter(|r| !r.is_empty()).map(|r| r.split(FIELD).map(str::to_string).collect()).collect())
}

/// One word as the reader has it: certain text, or unknown (matches any run of arguments).
#[derive(Debug)]
enum Believed {
    Text(String),
    Unknown,
}

fn believed_words(cmd: &SimpleCommand, home: &Path, cwd: &Path) -> Vec<Believed> {
    let home = home.display().to_string();
    cmd.words
        .iter()
        .skip(1)
        .map(|w| {
            let v = &w.value;
            if (w.expands && v.contains('$')) || !w.nested.is_empty() || (!w.quoted && v.contains(['*', '?', '['])) {
                return Believed::Unknown;
            }
            // A quoted word keeps a `~` as text, unless it leads the word unquoted or came out of
            // an expansion that had expanded it (`"$(echo ~)"`, `"${arr[@]}"`).
            let tilde_expanded = w.raw.starts_with('~') || w.raw.contains(['$', '`']);
            if w.quoted && !tilde_expanded {
                return Believed::Text(v.clone());
            }
            // Tilde forms bash expands: `~`, `~/x`, `~+` (the working folder), `~root`, and
            // after `=` or `=@` in an argument (`of=~/.bashrc`).
            if v.starts_with("~-") {
                return Believed::Unknown;
            }
            let v = match v.as_str() {
                "~" => home.clone(),
                "~+" => cwd.display().to_string(),
                _ if v.starts_with("~+/") => format!("{}{}", cwd.display(), &v[2..]),
                _ if v.starts_with("~root") => format!("/root{}", &v[5..]),
                _ => v.replace("=~/", &format!("={home}/")).replace("=@~/", &format!("=@{home}/")),
            };
            let v = match v.strip_prefix("~/") {
                Some(rest) => format!("{home}/{rest}"),
                None => v,
            };
            Believed::Text(v)
        })
        .collect()
}

/// Whether `believed` matches the end of `args` exactly (unknown words match any run).
fn matches_tail(believed: &[Believed], args: &[String]) -> bool {
    // Anchored at the end: the wrappers' own options come before.
    fn from(b: &[Believed], a: &[String], anchored_start: bool) -> bool {
        match b.first() {
            None => a.is_empty(),
            Some(Believed::Unknown) => (0..=a.len()).any(|k| from(&b[1..], &a[k..], true)),
            Some(Believed::Text(t)) => {
                if anchored_start {
                    a.first() == Some(t) && from(&b[1..], &a[1..], true)
                } else {
                    (0..a.len()).any(|k| a[k] == *t && from(&b[1..], &a[k + 1..], true))
                }
            }
        }
    }
    from(believed, args, false) || (believed.is_empty())
}

/// Whether the reader believed this start: a command of this name whose words are its
/// arguments, or one under a wrapper of this name (`sudo -u x rm -rf /`, `su -c 'id' root`)
/// that the wrapper's arguments name. A program only known at run time matches anything.
fn believed(argv: &Argv, script: &shell::Script, home: &Path, cwd: &Path) -> bool {
    let Some((name, args)) = argv.split_first() else { return true };
    script.commands.iter().any(|cmd| {
        if cmd.dynamic {
            return true;
        }
        let Some(program) = cmd.program.as_deref() else { return false };
        if program == name {
            let b = believed_words(cmd, home, cwd);
            let open = b.iter().any(|w| matches!(w, Believed::Unknown));
            return matches_tail(&b, args) && (open || b.len() == args.len());
        }
        // Under a wrapper that names it, or that feeds it what it reads (`xargs`); a script a
        // shell was given (`bash i.sh` finds `i.sh` on `PATH`).
        let wrapped =
            cmd.wrappers.iter().any(|w| w == name) && (name == "xargs" || args.iter().any(|a| a.contains(program)));
        let script = shell::is_shell(program) && cmd.positionals().first().is_some_and(|w| w.value == *name);
        wrapped || script
    })
}

/// Lines using what only bash expands, which dash passes on as written (so it runs those words
/// literally, not what the reader expanded): brace expansion, `[[`, `coproc`, `~` after `=`
/// and `~+`, ANSI-C quotes, hex escapes, `printf -v`. They run in bash only.
fn dash_runs_less(line: &str) -> bool {
    let braces = line.match_indices('{').any(|(at, _)| {
        let inner = line[at + 1..].split('}').next().unwrap_or_default();
        line[at + 1..].contains('}')
            && !inner.contains(char::is_whitespace)
            && (inner.contains(',') || inner.contains(".."))
    });
    braces || ["[[", "coproc", "=~", "~+", "$'", "\\x", "printf -v"].iter().any(|form| line.contains(form))
}

#[test]
fn what_bash_and_dash_run_is_what_the_reader_believed() {
    let dangerous: Vec<String> = dangerous().into_iter().chain(lines(CRITICAL)).collect();
    let everyday = everyday();
    let tmp = tempfile::tempdir().unwrap();
    let (mut ran, mut starts, mut timed_out, mut skipped) = ([0; 2], [0; 2], [0; 2], 0);
    let mut unseen = Vec::new();
    for (i, line) in dangerous.iter().chain(&everyday).enumerate() {
        let script = shell::parse(line);
        // Also any line defining a function near an `&`: a bomb the reader missed must not run
        // (as root no process limit holds it).
        let bomb =
            script.commands.iter().any(|c| c.function.as_deref().is_some_and(|f| c.program.as_deref() == Some(f)))
                || (line.contains("()") && line.contains('&'));
        if bomb {
            skipped += 1;
            continue;
        }
        // In dash, the line is what `sh -c 'LINE'` runs.
        let as_sh = shell::parse(&format!("sh -c '{}'", line.replace('\'', "'\\''")));
        let shells = if dash_runs_less(line) { 1 } else { 2 };
        for (k, (shell, reading)) in
            [(Shell::Bash, &script), (Shell::Dash, &as_sh)].into_iter().enumerate().take(shells)
        {
            let scratch = tmp.path().join(format!("l{i}-{k}"));
            let home = scratch.join("home");
            let Some(log) = run_in(shell, line, reading, &scratch) else {
                timed_out[k] += 1;
                continue;
            };
            ran[k] += 1;
            starts[k] += log.len();
            for argv in log {
                if !believed(&argv, reading, &home, &scratch.join("work")) {
                    unseen.push(format!("{shell:?}: {line:?}\n    ran {argv:?}"));
                }
            }
            let _ = std::fs::remove_dir_all(&scratch);
        }
    }
    println!(
        "differential: {} lines ran in bash ({} program starts, {} timed out) and {} in dash ({} starts, {} timed out), \
         {skipped} fork bombs skipped, {} starts the reader did not foresee",
        ran[0],
        starts[0],
        timed_out[0],
        ran[1],
        starts[1],
        timed_out[1],
        unseen.len()
    );
    assert!(ran[0] > 500 && ran[1] > 500, "only {ran:?} lines ran");
    assert!(unseen.is_empty(), "the shell ran what the reader did not see:\n{}", unseen.join("\n"));
}
