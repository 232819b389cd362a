//! Wrappers: commands that run another command (`env`, `sudo`, `timeout`, `xargs`, `sh -c`,
//! `eval`, ...), peeled off until the command that really runs is first.
//!
//! Rule: a wrapper's own options are skipped with their values (`timeout -s KILL 5`, `nice -n
//! 10`, `sudo -u root`), so the program is never mistaken for an option's value; a string a
//! wrapper runs as shell code (`sh -c '...'`, `eval`, `su -c`, `watch`, `flock -c`) is handed
//! back to be read as a script of its own; a wrapper left with nothing to run is the program
//! itself (`env` prints the environment, `sudo -i` is a root shell). `find -exec` clauses come
//! back as commands of their own with `{}` replaced by find's start paths, each one charged to
//! the line's [`Budget`] (start paths times clauses can be many).

use super::budget::{command_weight, word_weight, Budget};
use super::vars::UNKNOWN;
use super::{basename, is_assignment, lexer, Word};

/// What unwrapping a simple command's words gave.
#[derive(Debug, Default)]
pub(super) struct Unwrapped {
    /// `NAME=value` words met before the program (prefixes and `env`'s).
    pub assignments: Vec<Word>,
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// The wrappers removed, outermost first.
    pub wrappers: Vec<String>,
    /// Strings run as shell code.
    pub scripts: Vec<String>,
    /// Commands run by `find -exec` and the like.
    pub commands: Vec<Vec<Word>>,
    /// The folder a wrapper runs the command in (`env -C DIR`, `sudo -D DIR`).
    pub chdir: Option<String>,
}

const SHELLS_WITH_C: &[&str] = &[
    "sh", "bash", "rbash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "posh", "fish", "csh", "tcsh", "oksh", "loksh",
    "elvish", "nu", "xonsh", "pwsh",
];

/// Skips options starting at `i`; `with_value` lists options that take the next word (also
/// accepted glued: `-n10`, `--signal=KILL`). Returns the index of the first non-option.
fn skip_options(words: &[Word], mut i: usize, with_value: &[&str]) -> usize {
    while let Some(w) = words.get(i) {
        let v = w.value.as_str();
        if v == "--" {
            return i + 1;
        }
        if !v.starts_with('-') || v == "-" {
            return i;
        }
        if with_value.contains(&v) {
            i += 2;
            continue;
        }
        i += 1;
    }
    i
}

/// Peels the wrappers off `words`; `input` is what the command reads on its standard input when
/// the reader knows it (an `echo` before it in a pipeline, a here-string), which `xargs` turns
/// into arguments.
pub(super) fn unwrap(words: Vec<Word>, input: Option<&str>, budget: &mut Budget) -> Unwrapped {
    let mut out = Unwrapped::default();
    let mut words = words;
    let mut i = 0;
    loop {
        while words.get(i).is_some_and(is_assignment) {
            out.assignments.push(words[i].clone());
            i += 1;
        }
        let Some(first) = words.get(i) else { break };
        let name = basename(&first.value).to_string();
        let start = i;
        let next = match name.as_str() {
            "env" => {
                let mut j = i + 1;
                let mut split = None;
                while let Some(w) = words.get(j) {
                    let v = w.value.as_str();
                    if v == "--" {
                        j += 1;
                        break;
                    }
                    if !v.starts_with('-') || v == "-" {
                        break;
                    }
                    if v == "-S" || v == "--split-string" {
                        split = words.get(j + 1).map(|w| (j, 2, w.value.clone()));
                        break;
                    }
                    if let Some(s) = v.strip_prefix("--split-string=").or_else(|| v.strip_prefix("-S")) {
                        split = Some((j, 1, s.to_string()));
                        break;
                    }
                    if matches!(v, "-C" | "--chdir") {
                        out.chdir = words.get(j + 1).map(|w| w.value.clone());
                    } else if let Some(dir) = v.strip_prefix("--chdir=") {
                        out.chdir = Some(dir.to_string());
                    }
                    j += if matches!(v, "-u" | "--unset" | "-C" | "--chdir") { 2 } else { 1 };
                }
                if let Some((at, used, text)) = split {
                    // `env -S 'rm -rf /'` splits the string into words.
                    let mut spliced: Vec<Word> = words[..at].to_vec();
                    spliced.extend(split_words(&text, first));
                    spliced.extend(words.get(at + used..).unwrap_or(&[]).iter().cloned());
                    words = spliced;
                    j = at;
                }
                Some(j)
            }
            "command" => match words.get(i + 1).map(|w| w.value.as_str()) {
                Some(flag) if flag.starts_with("-v") || flag.starts_with("-V") => None,
                _ => Some(skip_options(&words, i + 1, &[])),
            },
            "builtin" | "nohup" | "unbuffer" | "busybox" | "toybox" => Some(i + 1),
            "exec" => Some(skip_options(&words, i + 1, &["-a"])),
            "setsid" => Some(skip_options(&words, i + 1, &[])),
            "nice" => Some(skip_options(&words, i + 1, &["-n", "--adjustment"])),
            "time" => Some(skip_options(&words, i + 1, &["-f", "--format", "-o", "--output"])),
            "timeout" => {
                let j = skip_options(&words, i + 1, &["-s", "--signal", "-k", "--kill-after"]);
                Some(j + 1) // the duration
            }
            "stdbuf" => Some(skip_options(&words, i + 1, &["-i", "-o", "-e", "--input", "--output", "--error"])),
            "ionice" => Some(skip_options(&words, i + 1, &["-c", "-n", "--class", "--classdata"])),
            "taskset" | "chrt" => Some(skip_options(&words, i + 1, &[]) + 1),
            "chroot" => Some(skip_options(&words, i + 1, &["--userspec", "--groups"]) + 1),
            "xargs" => {
                let j = skip_options(&words, i + 1, XARGS_WITH_VALUE);
                words = xargs_arguments(words, i, j, input);
                Some(j)
            }
            "sudo" | "doas" | "pkexec" | "run0" => {
                let edit = words[i + 1..]
                    .iter()
                    .take_while(|w| w.value.starts_with('-'))
                    .any(|w| w.value == "-e" || w.value == "--edit");
                if edit {
                    None
                } else {
                    Some(skip_options(
                        &words,
                        i + 1,
                        &[
                            "-u",
                            "-g",
                            "-C",
                            "-D",
                            "-h",
                            "-p",
                            "-r",
                            "-t",
                            "-T",
                            "-U",
                            "--user",
                            "--group",
                            "--chdir",
                            "--prompt",
                            "--role",
                            "--type",
                            "--host",
                            "--close-from",
                            "--other-user",
                            "--command-timeout",
                        ],
                    ))
                }
            }
            "su" | "runuser" => {
                let code = words[i + 1..].windows(2).find(|p| p[0].value == "-c" || p[0].value == "--command");
                if let Some(pair) = code {
                    out.scripts.push(pair[1].value.clone());
                    out.wrappers.push(name);
                    i = words.len();
                    break;
                }
                None
            }
            "flock" => {
                let j = skip_options(&words, i + 1, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
                let code = words.get(j + 1).filter(|w| w.value == "-c" || w.value == "--command");
                if let (Some(_), Some(script)) = (code, words.get(j + 2)) {
                    out.scripts.push(script.value.clone());
                    out.wrappers.push(name);
                    i = words.len();
                    break;
                }
                Some(j + 1)
            }
            "watch" => {
                let j = skip_options(&words, i + 1, &["-n", "--interval"]);
                if j < words.len() {
                    let text: Vec<&str> = words[j..].iter().map(|w| w.value.as_str()).collect();
                    out.scripts.push(text.join(" "));
                    out.wrappers.push(name);
                    i = words.len();
                    break;
                }
                None
            }
            "eval" => {
                if i + 1 < words.len() {
                    let text: Vec<&str> = words[i + 1..].iter().map(|w| w.value.as_str()).collect();
                    out.scripts.push(text.join(" "));
                    out.wrappers.push(name);
                    i = words.len();
                    break;
                }
                None
            }
            // `trap 'rm -rf ~' EXIT`: the string runs when the signal comes.
            "trap" => {
                let j = skip_options(&words, i + 1, &[]);
                if let (Some(code), true) = (words.get(j), words.len() > j + 1) {
                    if code.value != "-" && !code.value.is_empty() {
                        out.scripts.push(code.value.clone());
                    }
                }
                None
            }
            // `sg GROUP -c CMD` or `sg GROUP CMD`: CMD is shell code.
            "sg" | "newgrp" => {
                let rest = words.get(i + 2..).unwrap_or(&[]);
                let code = match rest.split_first() {
                    Some((flag, code)) if flag.value == "-c" => code.iter().map(|w| w.value.as_str()).collect(),
                    _ => rest.iter().map(|w| w.value.as_str()).collect::<Vec<_>>(),
                };
                if !code.is_empty() {
                    out.scripts.push(code.join(" "));
                    out.wrappers.push(name);
                    i = words.len();
                    break;
                }
                None
            }
            // Programs whose arguments are shell code (`hyperfine 'a' 'b'`, `tmux new -d 'a'`),
            // or whose code option's value is (`npx -c 'a'`): read as scripts; the program
            // stays what it is.
            runner if SHELL_STRING_RUNNERS.iter().any(|(r, _, _)| *r == runner) => {
                let (_, with_value, joined) =
                    SHELL_STRING_RUNNERS.iter().find(|(r, _, _)| *r == runner).copied().unwrap_or(("", &[], false));
                let mut positionals = Vec::new();
                let mut j = i + 1;
                while let Some(w) = words.get(j) {
                    let v = w.value.as_str();
                    if with_value.contains(&v) {
                        j += 2;
                        continue;
                    }
                    if CODE_OPTIONS.contains(&v) {
                        out.scripts.extend(words.get(j + 1).map(|w| w.value.clone()));
                        j += 2;
                        continue;
                    }
                    if !v.starts_with('-') && !RUNNER_SUBCOMMANDS.contains(&v) {
                        positionals.push(v.to_string());
                    }
                    j += 1;
                }
                match joined {
                    true if !positionals.is_empty() => out.scripts.push(positionals.join(" ")),
                    true => {}
                    false => out.scripts.extend(positionals),
                }
                None
            }
            shell if SHELLS_WITH_C.contains(&shell_name(shell)) => {
                let mut j = i + 1;
                let mut has_c = false;
                while let Some(w) = words.get(j) {
                    let v = w.value.as_str();
                    if v == "--" {
                        j += 1;
                        break;
                    }
                    if !(v.starts_with('-') || v.starts_with('+')) || v == "-" {
                        break;
                    }
                    if matches!(v, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
                        j += 2;
                        continue;
                    }
                    if v.starts_with('-') && !v.starts_with("--") && v.contains('c') {
                        has_c = true;
                    }
                    j += 1;
                }
                match (has_c, words.get(j)) {
                    (true, Some(script)) => {
                        out.scripts.push(script.value.clone());
                        out.wrappers.push(name);
                        i = words.len();
                        break;
                    }
                    _ => None,
                }
            }
            // Tracers and fake environments run the command that follows their options.
            "strace" | "ltrace" => Some(skip_options(
                &words,
                i + 1,
                &["-o", "-e", "-p", "-s", "-u", "-E", "-O", "-S", "-P", "-a", "-b", "-I", "-X"],
            )),
            "fakeroot" | "fakechroot" => Some(skip_options(&words, i + 1, &["-l", "-s", "-i", "--lib", "--faked"])),
            // Run the command that follows their options, as it is or as another user, under a
            // tracer, a fake display or bus, or through a proxy.
            wrapper if PLAIN_WRAPPERS.iter().any(|(w, _)| *w == wrapper) => {
                let with_value = PLAIN_WRAPPERS.iter().find(|(w, _)| *w == wrapper).map_or(&[][..], |(_, v)| *v);
                let mut j = skip_options(&words, i + 1, with_value);
                // `perf stat CMD`, `gdb --args CMD`: a subcommand or marker first.
                if matches!(wrapper, "perf" | "gdb") {
                    j = words[i + 1..]
                        .iter()
                        .position(|w| matches!(w.value.as_str(), "stat" | "record" | "trace" | "--args"))
                        .map_or(words.len(), |p| skip_options(&words, i + 2 + p, with_value));
                }
                // `gosu USER CMD`, `setarch ARCH CMD`, `faketime TIME CMD`: an operand first.
                if matches!(wrapper, "gosu" | "su-exec" | "setarch" | "s6-setuidgid" | "faketime") {
                    j += 1;
                }
                Some(j)
            }
            "bwrap" => {
                let mut j = i + 1;
                while let Some(w) = words.get(j) {
                    let v = w.value.as_str();
                    if !v.starts_with("--") {
                        break;
                    }
                    j += 1 + BWRAP_VALUES.iter().find(|(o, _)| *o == v).map_or(0, |(_, n)| *n);
                }
                Some(j)
            }
            "ip" if words.get(i + 1..i + 3).is_some_and(|w| w[0].value == "netns" && w[1].value == "exec") => {
                Some(i + 4)
            }
            "unshare" | "nsenter" | "firejail" | "proot" => {
                Some(skip_options(&words, i + 1, &["-t", "--target", "-S", "-G", "--setuid", "--setgid", "-R", "-w"]))
            }
            "systemd-run" | "systemd-inhibit" => Some(skip_options(
                &words,
                i + 1,
                &[
                    "-u",
                    "--unit",
                    "-p",
                    "--property",
                    "-M",
                    "--machine",
                    "-H",
                    "--host",
                    "--slice",
                    "--description",
                    "--uid",
                    "--gid",
                    "-E",
                    "--setenv",
                    "--working-directory",
                    "--what",
                    "--who",
                    "--why",
                    "--mode",
                ],
            )),
            // `alias ll='rm -rf ~'`: a later `ll` runs the value, so the value is read as code.
            "alias" => {
                for w in &words[i + 1..] {
                    if let Some((_, body)) = w.value.split_once('=') {
                        out.scripts.push(body.to_string());
                    }
                }
                None
            }
            // `script -qc CMD [file]` runs CMD as shell code.
            "script" => {
                let code = words[i + 1..].iter().position(|w| {
                    let v = w.value.as_str();
                    v == "--command" || (v.starts_with('-') && !v.starts_with("--") && v.ends_with('c'))
                });
                if let Some(script) = code.and_then(|at| words.get(i + 1 + at + 1)) {
                    out.scripts.push(script.value.clone());
                    out.wrappers.push(name);
                    i = words.len();
                    break;
                }
                None
            }
            // `parallel CMD ::: ARGS` runs CMD with the arguments: read as `CMD ARGS`.
            "parallel" => {
                let j = skip_options(&words, i + 1, &["-j", "--jobs", "-S", "--sshlogin", "--joblog", "--delay"]);
                if let Some(sep) = words[j..].iter().position(|w| matches!(w.value.as_str(), ":::" | "::::" | ":::+")) {
                    let args: Vec<Word> =
                        words[j + sep + 1..].iter().filter(|w| !w.value.starts_with(":::")).cloned().collect();
                    let mut spliced: Vec<Word> = words[..j + sep].to_vec();
                    spliced.extend(args);
                    words = spliced;
                }
                Some(j)
            }
            // `git rebase -x CMD` / `--exec CMD` runs CMD after each commit.
            "git" => {
                let exec = words[i + 1..].windows(2).find(|p| p[0].value == "-x" || p[0].value == "--exec");
                let rebasing = words[i + 1..].iter().any(|w| w.value == "rebase");
                match exec {
                    Some(pair) if rebasing => {
                        out.scripts.push(pair[1].value.clone());
                        None
                    }
                    _ => None,
                }
            }
            python if is_python(python) => match (words.get(i + 1), words.get(i + 2)) {
                // `python -m pip install x` is pip.
                (Some(m), Some(module)) if m.value == "-m" && matches!(module.value.as_str(), "pip" | "pipx") => {
                    Some(i + 2)
                }
                _ => None,
            },
            _ => None,
        };
        match next {
            Some(j) if j < words.len() && j > start => {
                out.wrappers.push(name);
                i = j;
            }
            _ => break,
        }
    }
    out.words = words.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
    out.commands = exec_clauses(&out.words, budget);
    if let Some(tail) = possibly_wrapped(&out.words) {
        if budget.take(command_weight(tail, &[])) {
            out.commands.push(tail.to_vec());
        }
    }
    out
}

/// `chronic rm -rf ~`: a program the reader does not know, whose arguments name a program that
/// matters (one that deletes, fetches, runs code or is Bridle), may be a wrapper that runs
/// them; from that word on they are read as a command too, and judged as one.
fn possibly_wrapped(words: &[Word]) -> Option<&[Word]> {
    let program = basename(&words.first()?.value);
    if program.is_empty() || NOT_WRAPPERS.contains(&program) || names_a_program_that_matters(program) {
        return None;
    }
    // A bare name or a standard program path, not a file the command reads (`sha256sum
    // target/release/bridle`).
    let names = |w: &Word| {
        let v = w.value.as_str();
        let standard =
            ["/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"].iter().any(|d| v.starts_with(d));
        (!v.contains('/') || standard) && names_a_program_that_matters(basename(v))
    };
    let at = words.iter().skip(1).position(names)?;
    Some(&words[1 + at..])
}

fn names_a_program_that_matters(name: &str) -> bool {
    MATTERS.contains(&name) || name.starts_with("mkfs") || super::is_shell_or_interpreter(name)
}

/// Programs that delete, overwrite, fetch, signal or run code, or are Bridle.
const MATTERS: &[&str] = &[
    "rm",
    "srm",
    "shred",
    "rmdir",
    "unlink",
    "dd",
    "mv",
    "cp",
    "chmod",
    "chown",
    "truncate",
    "tee",
    "find",
    "curl",
    "wget",
    "kill",
    "pkill",
    "killall",
    "bridle",
    "bridle-app",
    "eval",
    "sudo",
    "doas",
    "su",
    "xargs",
    "cat",
];

/// Programs known not to run their arguments (they print, search or read them).
const NOT_WRAPPERS: &[&str] = &[
    "echo",
    "printf",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "man",
    "info",
    "whatis",
    "apropos",
    "tldr",
    "help",
    "which",
    "type",
    "whereis",
    "command",
    "hash",
    "alias",
    "unalias",
    "complete",
    "compgen",
    "history",
    "declare",
    "typeset",
    "export",
    "local",
    "readonly",
    "read",
    "test",
    "[",
    "[[",
    "git",
    "sed",
    "awk",
    "jq",
    "yq",
    "printenv",
    "apt",
    "apt-get",
    "apt-cache",
    "dpkg",
    "dnf",
    "yum",
    "brew",
    "pacman",
    "snap",
    "cargo",
    "rustup",
    "pip",
    "pip3",
    "npm",
    "pnpm",
    "yarn",
    "gem",
    "go",
    "make",
    "ls",
    "file",
    "stat",
    "wc",
    "head",
    "tail",
    "less",
    "more",
    "sort",
    "uniq",
    "diff",
    "cmp",
    "comm",
    "touch",
    "mkdir",
    "ln",
    "install",
    "pgrep",
    "ps",
    "pidof",
    "lsof",
    "wait",
    "true",
    "false",
    "exit",
    "return",
    "shift",
    "set",
    "unset",
    "trap",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "kill",
    "pkill",
    "killall",
    "tar",
    "zip",
    "unzip",
    "gzip",
    "gunzip",
    "xz",
    "zstd",
    "base64",
    "xxd",
    "od",
    "hexdump",
    "strings",
];

const XARGS_WITH_VALUE: &[&str] = &[
    "-I",
    "-L",
    "-n",
    "-P",
    "-s",
    "-d",
    "-E",
    "-a",
    "--arg-file",
    "--delimiter",
    "--max-args",
    "--max-lines",
    "--max-procs",
    "--max-chars",
    "--replace",
    "--eof",
];

/// `xargs`'s command, from `at` (after xargs's options, which start after `xargs` at `start`),
/// with the input in place: in every `-I` replacement, or appended as arguments. An input the
/// reader does not know makes each replacement [`UNKNOWN`]; appended unknown input adds
/// nothing (the rules weigh `xargs rm` on its own).
fn xargs_arguments(mut words: Vec<Word>, start: usize, at: usize, input: Option<&str>) -> Vec<Word> {
    let options = &words[start + 1..at.min(words.len())];
    let mut replace = None;
    for (k, w) in options.iter().enumerate() {
        let v = w.value.as_str();
        if v == "-I" || v == "--replace" {
            replace = options.get(k + 1).map(|w| w.value.clone());
        } else if let Some(r) = v.strip_prefix("-I").or_else(|| v.strip_prefix("--replace=")) {
            replace = Some(r.to_string());
        } else if v == "-i" {
            replace = Some("{}".to_string());
        } else if let Some(r) = v.strip_prefix("-i") {
            replace = Some(r.to_string());
        }
    }
    let first_line = input.map(|text| text.lines().next().unwrap_or("").trim().to_string());
    match (replace.filter(|r| !r.is_empty()), input) {
        (Some(r), _) => {
            let with = first_line.unwrap_or_else(|| UNKNOWN.to_string());
            for w in words.iter_mut().skip(at) {
                if w.value.contains(&r) {
                    w.value = w.value.replace(&r, &with);
                    w.expands = w.value.contains('$');
                }
            }
        }
        (None, Some(text)) if at < words.len() => {
            let origin = words[at].clone();
            words.extend(text.split_whitespace().map(|v| Word {
                raw: v.to_string(),
                value: v.to_string(),
                ..origin.clone()
            }));
        }
        (None, _) => {}
    }
    words
}

/// A shell's name without a version (`ksh93` is `ksh`).
fn shell_name(program: &str) -> &str {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit());
    if SHELLS_WITH_C.contains(&base) {
        base
    } else {
        program
    }
}

/// Wrappers that run the command after their options, with the options that take a value.
const PLAIN_WRAPPERS: &[(&str, &[&str])] = &[
    ("setpriv", &["--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits"]),
    ("chronic", &[]),
    ("eatmydata", &[]),
    ("catchsegv", &[]),
    ("torsocks", &["-u", "-p", "-a", "-P"]),
    ("proxychains", &["-f"]),
    ("proxychains4", &["-f"]),
    ("tsocks", &[]),
    ("flatpak-spawn", &[]),
    ("valgrind", &[]),
    (
        "xvfb-run",
        &[
            "-n",
            "--server-num",
            "-s",
            "--server-args",
            "-e",
            "--error-file",
            "-f",
            "--auth-file",
            "-w",
            "--wait",
            "-p",
            "--xauth-protocol",
        ],
    ),
    ("dbus-run-session", &["--config-file", "--dbus-daemon"]),
    ("dbus-launch", &["--config-file"]),
    ("chpst", &["-u", "-U", "-b", "-e", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-r", "-t"]),
    ("daemonize", &["-a", "-c", "-e", "-E", "-l", "-o", "-p", "-u"]),
    (
        "perf",
        &["-e", "--event", "-p", "--pid", "-o", "--output", "-r", "--repeat", "-x", "-F", "--freq", "-c", "--count"],
    ),
    ("gdb", &[]),
    ("lldb", &[]),
    ("entr", &[]),
    (
        "numactl",
        &["-C", "-N", "-m", "-p", "-i", "--physcpubind", "--cpunodebind", "--membind", "--preferred", "--interleave"],
    ),
    ("prlimit", &["-p", "--pid"]),
    ("cgexec", &["-g"]),
    ("trickle", &["-d", "-u", "-w", "-t", "-l", "-n"]),
    ("faketime", &["-m", "-f"]),
    ("gosu", &[]),
    ("su-exec", &[]),
    ("s6-setuidgid", &[]),
    ("setarch", &[]),
    ("linux32", &[]),
    ("linux64", &[]),
    ("caffeinate", &["-t", "-w"]),
    ("with-contenv", &[]),
    ("schedtool", &["-a", "-p", "-n", "-e"]),
    ("runcon", &["-u", "-r", "-t", "-l"]),
    ("sandbox-exec", &["-f", "-n", "-p", "-D"]),
];

/// Programs whose positional arguments are shell code: their options that take a value, and
/// whether the positionals make one command (`tmux new -d rm -rf x`) or one each (`hyperfine`).
const SHELL_STRING_RUNNERS: &[(&str, &[&str], bool)] = &[
    (
        "hyperfine",
        &[
            "-r",
            "--runs",
            "-w",
            "--warmup",
            "-m",
            "--min-runs",
            "-M",
            "--max-runs",
            "-n",
            "--command-name",
            "-S",
            "--shell",
            "-u",
            "--time-unit",
            "--export-json",
            "--export-csv",
            "--export-markdown",
            "--export-asciidoc",
            "--style",
            "-N",
        ],
        false,
    ),
    ("tmux", &["-s", "-n", "-t", "-c", "-x", "-y", "-e", "-f", "-L", "-S", "-F"], true),
    ("screen", &["-S", "-c", "-e", "-p", "-X"], true),
    (
        "watchexec",
        &[
            "-e",
            "--exts",
            "-w",
            "--watch",
            "-i",
            "--ignore",
            "-f",
            "--filter",
            "-d",
            "--debounce",
            "-s",
            "--signal",
            "--shell",
        ],
        true,
    ),
    ("nodemon", &["-e", "--ext", "-w", "--watch", "-i", "--ignore", "-d", "--delay"], true),
    ("npx", &["-p", "--package"], false),
    ("pnpx", &["-p", "--package"], false),
];

/// Options whose value is shell code, for [`SHELL_STRING_RUNNERS`].
const CODE_OPTIONS: &[&str] = &["-c", "--call", "--exec", "-x", "-p", "--prepare", "--cleanup", "-s", "--setup", "-C"];

/// Subcommands of the runners that are not code (`tmux new-session -d 'cmd'`).
const RUNNER_SUBCOMMANDS: &[&str] = &["new", "new-session", "new-window", "split-window", "send-keys", "run-shell"];

/// bwrap's options that take values, and how many.
const BWRAP_VALUES: &[(&str, usize)] = &[
    ("--bind", 2),
    ("--bind-try", 2),
    ("--ro-bind", 2),
    ("--ro-bind-try", 2),
    ("--dev-bind", 2),
    ("--dev-bind-try", 2),
    ("--symlink", 2),
    ("--setenv", 2),
    ("--file", 2),
    ("--bind-data", 2),
    ("--ro-bind-data", 2),
    ("--chmod", 2),
    ("--proc", 1),
    ("--dev", 1),
    ("--tmpfs", 1),
    ("--dir", 1),
    ("--chdir", 1),
    ("--unsetenv", 1),
    ("--uid", 1),
    ("--gid", 1),
    ("--hostname", 1),
    ("--seccomp", 1),
    ("--add-seccomp-fd", 1),
    ("--lock-file", 1),
    ("--remount-ro", 1),
    ("--cap-add", 1),
    ("--cap-drop", 1),
    ("--perms", 1),
    ("--size", 1),
    ("--userns", 1),
    ("--userns2", 1),
    ("--pidns", 1),
    ("--args", 1),
    ("--info-fd", 1),
    ("--json-status-fd", 1),
    ("--block-fd", 1),
    ("--userns-block-fd", 1),
    ("--sync-fd", 1),
    ("--exec-label", 1),
    ("--file-label", 1),
    ("--overlay-src", 1),
    ("--overlay", 3),
    ("--tmp-overlay", 1),
    ("--ro-overlay", 1),
    ("--argv0", 1),
    ("--mqueue", 1),
];

fn is_python(name: &str) -> bool {
    name == "python" || name.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `env -S` text split into words (quotes honoured), spanning the word it came from.
fn split_words(text: &str, origin: &Word) -> Vec<Word> {
    lexer::lex(text, super::MAX_DEPTH)
        .tokens
        .into_iter()
        .filter_map(|t| match t {
            lexer::Token::Word(mut w) => {
                w.span = origin.span;
                Some(w)
            }
            _ => None,
        })
        .collect()
}

/// `find ... -exec cmd {} \;` (and `-execdir`, `-ok`, `-okdir`): one command per start path,
/// `{}` replaced by it, so `find ~ -exec rm -rf {} \;` reads as `rm -rf ~`. `fd -x cmd` runs
/// `cmd` on what it finds, inside its search path.
/// Whether find's tests keep its start folders out of what it yields: a `-name`/`-path`
/// pattern with no wildcard that a start folder's own name (`.`, `/`, `~`) cannot be, or
/// `-mindepth` of 1 or more. Alternatives (`-o`) or negations (`!`, `-not`) make it unsure.
fn names_only_children(args: &[Word]) -> bool {
    if args.iter().any(|w| matches!(w.value.as_str(), "-o" | "-or" | "!" | "-not")) {
        return false;
    }
    args.windows(2).any(|p| match p[0].value.as_str() {
        "-name" | "-iname" => {
            !p[1].value.contains(['*', '?', '[']) && !matches!(p[1].value.as_str(), "." | ".." | "/" | "~")
        }
        "-mindepth" => p[1].value.parse::<u32>().is_ok_and(|d| d >= 1),
        _ => false,
    })
}

fn exec_clauses(words: &[Word], budget: &mut Budget) -> Vec<Vec<Word>> {
    let Some(program) = words.first().map(|w| basename(&w.value)) else { return Vec::new() };
    let mut clauses = Vec::new();
    match program {
        "find" | "gfind" => {
            let roots: Vec<&Word> = words[1..]
                .iter()
                .take_while(|w| !w.value.starts_with('-') && w.value != "(" && w.value != "!")
                .collect();
            // With a name test that the start folder cannot pass (`-name __pycache__`), `{}` is
            // something beneath it, never the folder itself.
            let beneath = names_only_children(&words[1..]);
            // What one start path (or `path/…`) weighs in place of a `{}`.
            let path = roots.iter().map(|r| word_weight(r) + 2 * '\u{2026}'.len_utf8() + 2).max().unwrap_or(0);
            let mut i = 1;
            while i < words.len() {
                if matches!(words[i].value.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let end = words[i + 1..]
                        .iter()
                        .position(|w| w.value == ";" || w.value == "+")
                        .map_or(words.len(), |p| i + 1 + p);
                    let clause = &words[i + 1..end];
                    // One copy per start path, each with the path for every `{}`.
                    let holes = clause.iter().filter(|w| w.value == "{}").count();
                    let copy = command_weight(clause, &[]).saturating_add(holes.saturating_mul(path));
                    if !budget.take(roots.len().max(1).saturating_mul(copy)) {
                        break;
                    }
                    if roots.is_empty() {
                        clauses.push(clause.to_vec());
                    }
                    for root in &roots {
                        let replaced = clause
                            .iter()
                            .map(|w| match (w.value == "{}", beneath) {
                                (true, true) => {
                                    // `…`: a name, not a glob, so the path is judged as it stands.
                                    let child = format!("{}/\u{2026}", root.value.trim_end_matches('/'));
                                    Word { raw: child.clone(), value: child, ..(*root).clone() }
                                }
                                (true, false) => (*root).clone(),
                                (false, _) => w.clone(),
                            })
                            .collect();
                        clauses.push(replaced);
                    }
                    i = end;
                }
                i += 1;
            }
        }
        "fd" | "fdfind" => {
            if let Some(p) =
                words.iter().position(|w| matches!(w.value.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
            {
                let clause: Vec<Word> = words[p + 1..].iter().take_while(|w| w.value != ";").cloned().collect();
                clauses.push(clause);
            }
        }
        _ => {}
    }
    clauses.retain(|c| !c.is_empty());
    clauses
}
