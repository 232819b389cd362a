//! What the reader knows about programs that run other programs: the wrappers and the options
//! that take a value, the programs whose arguments are shell code, `xargs` and its input, and
//! what to make of a program it does not know whose arguments name one that matters.
//!
//! Rule: a table entry says how to find the command a program runs; a program in no table is
//! not trusted to run nothing — [`possibly_wrapped`] reads its arguments from the first word
//! that names a program that matters.

use super::super::vars::UNKNOWN;
use super::super::{basename, is_shell_or_interpreter, Word};

/// `chronic rm -rf ~`: a program the reader does not know, whose arguments name a program that
/// matters (one that deletes, fetches, runs code or is Bridle), may be a wrapper that runs
/// them; from that word on they are read as a command too, and judged as one.
pub(super) fn possibly_wrapped(words: &[Word]) -> Option<&[Word]> {
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
    MATTERS.contains(&name) || name.starts_with("mkfs") || is_shell_or_interpreter(name)
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

pub(super) const XARGS_WITH_VALUE: &[&str] = &[
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
pub(super) fn xargs_arguments(mut words: Vec<Word>, start: usize, at: usize, input: Option<&str>) -> Vec<Word> {
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

/// Wrappers that run the command after their options, with the options that take a value.
pub(super) const PLAIN_WRAPPERS: &[(&str, &[&str])] = &[
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
pub(super) const SHELL_STRING_RUNNERS: &[(&str, &[&str], bool)] = &[
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
pub(super) const CODE_OPTIONS: &[&str] =
    &["-c", "--call", "--exec", "-x", "-p", "--prepare", "--cleanup", "-s", "--setup", "-C"];

/// Subcommands of the runners that are not code (`tmux new-session -d 'cmd'`).
pub(super) const RUNNER_SUBCOMMANDS: &[&str] =
    &["new", "new-session", "new-window", "split-window", "send-keys", "run-shell"];

/// bwrap's options that take values, and how many.
pub(super) const BWRAP_VALUES: &[(&str, usize)] = &[
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
