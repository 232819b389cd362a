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

mod known;

use super::budget::{command_weight, word_weight, Budget};
use super::lexer::{self, Dialect};
use super::{basename, is_assignment, Word};
use known::{
    possibly_wrapped, xargs_arguments, BWRAP_VALUES, CODE_OPTIONS, PLAIN_WRAPPERS, RUNNER_SUBCOMMANDS,
    SHELL_STRING_RUNNERS, XARGS_WITH_VALUE,
};

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
    pub scripts: Vec<ShellCode>,
    /// Commands run by `find -exec` and the like.
    pub commands: Vec<Vec<Word>>,
    /// The folder a wrapper runs the command in (`env -C DIR`, `sudo -D DIR`).
    pub chdir: Option<String>,
}

/// A string run as shell code, with the positional parameters and the dialect it runs with.
#[derive(Debug)]
pub(super) struct ShellCode {
    pub text: String,
    pub args: Args,
    /// `None`: the shell reading the line reads it too (`eval`, `trap`).
    pub dialect: Option<Dialect>,
}

/// The positional parameters shell code runs with.
#[derive(Debug)]
pub(super) enum Args {
    /// The current shell's (`eval`, `trap`, `alias`).
    Current,
    /// A new shell's: `$0`, then `$1` ... (`sh -c CODE NAME ARGS`).
    New(Vec<String>),
    /// Not known (`xargs sh -c CODE` appends some; a runner may pass any; a shell reading its
    /// input takes its own: `bash -s ARGS`).
    Unknown,
}

impl ShellCode {
    /// Code a program hands to `sh -c` (or the user's shell) with arguments the reader does not
    /// know: read both ways `sh` may read it.
    fn by_runner(text: String) -> Self {
        Self { text, args: Args::Unknown, dialect: Some(Dialect::Posix) }
    }

    /// Code the current shell runs itself.
    fn here(text: String) -> Self {
        Self { text, args: Args::Current, dialect: None }
    }
}

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
                    out.scripts.push(ShellCode::by_runner(pair[1].value.clone()));
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
                    out.scripts.push(ShellCode::by_runner(script.value.clone()));
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
                    out.scripts.push(ShellCode::by_runner(text.join(" ")));
                    out.wrappers.push(name);
                    i = words.len();
                    break;
                }
                None
            }
            "eval" => {
                if i + 1 < words.len() {
                    let text: Vec<&str> = words[i + 1..].iter().map(|w| w.value.as_str()).collect();
                    out.scripts.push(ShellCode::here(text.join(" ")));
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
                        out.scripts.push(ShellCode::here(code.value.clone()));
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
                    out.scripts.push(ShellCode::by_runner(code.join(" ")));
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
                        out.scripts.extend(words.get(j + 1).map(|w| ShellCode::by_runner(w.value.clone())));
                        j += 2;
                        continue;
                    }
                    if !v.starts_with('-') && !RUNNER_SUBCOMMANDS.contains(&v) {
                        positionals.push(v.to_string());
                    }
                    j += 1;
                }
                match joined {
                    true if !positionals.is_empty() => out.scripts.push(ShellCode::by_runner(positionals.join(" "))),
                    true => {}
                    false => out.scripts.extend(positionals.into_iter().map(ShellCode::by_runner)),
                }
                None
            }
            shell if super::is_shell(shell) => {
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
                        // `sh -c CODE NAME ARGS`: `$0` is NAME (else the shell), `$1` ... ARGS;
                        // under `xargs`, which appends arguments, they are not known.
                        let given = &words[j + 1..];
                        let split = given.iter().any(|w| w.expands && !w.quoted && w.value.contains('$'));
                        let args = if split || out.wrappers.iter().any(|w| w == "xargs") {
                            Args::Unknown
                        } else {
                            let zero = given.first().map_or_else(|| name.clone(), |w| w.value.clone());
                            Args::New(
                                std::iter::once(zero).chain(given.iter().skip(1).map(|w| w.value.clone())).collect(),
                            )
                        };
                        out.scripts.push(ShellCode {
                            text: script.value.clone(),
                            args,
                            dialect: Some(Dialect::of(&name)),
                        });
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
                        out.scripts.push(ShellCode::here(body.to_string()));
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
                    out.scripts.push(ShellCode::by_runner(script.value.clone()));
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
                        out.scripts.push(ShellCode::by_runner(pair[1].value.clone()));
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
