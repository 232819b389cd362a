//! What a simple command says about itself: its arguments, flags, positionals and text, and
//! whether it is a shell or interpreter about to read code from standard input.
//!
//! Rule: flags are read the way the programs read them — short letters may be clustered (`-rf`),
//! long flags may carry `=value`, and nothing after `--` is a flag.

use super::{SimpleCommand, Word};

impl SimpleCommand {
    /// The arguments (every word after the program).
    pub fn args(&self) -> &[Word] {
        self.words.get(1..).unwrap_or(&[])
    }

    /// The program and arguments (quotes removed) and redirections, joined by single spaces.
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = self.words.iter().map(|w| w.value.clone()).collect();
        for r in &self.redirects {
            parts.push(format!("{}{}", r.operator(), r.target.value));
        }
        parts.join(" ")
    }

    /// Whether a short flag letter (`-r` in `-rf`) or a long flag (`--recursive`, `--out=x`) is
    /// among the arguments, before any `--`.
    pub fn has_flag(&self, flag: &str) -> bool {
        for w in self.args() {
            let v = w.value.as_str();
            if v == "--" {
                return false;
            }
            if let Some(long) = flag.strip_prefix("--") {
                if v.strip_prefix("--").is_some_and(|rest| rest == long || rest.starts_with(&format!("{long}="))) {
                    return true;
                }
            } else if v.starts_with('-') && !v.starts_with("--") && v.len() > 1 {
                let letters = &v[1..];
                if letters.chars().all(|c| c.is_ascii_alphanumeric()) && letters.contains(flag) {
                    return true;
                }
            }
        }
        false
    }

    /// The arguments that are not options, in order (everything after `--` counts).
    pub fn positionals(&self) -> Vec<&Word> {
        let mut out = Vec::new();
        let mut after_dashes = false;
        for w in self.args() {
            if !after_dashes && w.value == "--" {
                after_dashes = true;
            } else if after_dashes || !w.value.starts_with('-') || w.value == "-" {
                out.push(w);
            }
        }
        out
    }
}

/// Shells that read a script from standard input when given no script file.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "posh", "fish", "csh", "tcsh", "oksh", "loksh",
    "elvish", "nu", "xonsh", "pwsh",
];

/// Files that are standard input (`bash /dev/stdin`, `. /dev/fd/0`).
const STDIN_FILES: &[&str] = &["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// Whether `program` (a basename) is a shell, versions included (`ksh93`).
pub fn is_shell(program: &str) -> bool {
    SHELLS.contains(&program) || SHELLS.contains(&program.trim_end_matches(|c: char| c.is_ascii_digit()))
}

/// Interpreters that run code read from standard input when given no script.
pub const INTERPRETERS: &[&str] =
    &["python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "bun", "deno", "osascript"];

/// Whether `program` (a basename) is a shell or interpreter, versions included (`python3.12`).
pub fn is_shell_or_interpreter(program: &str) -> bool {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    is_shell(program) || INTERPRETERS.contains(&program) || INTERPRETERS.contains(&base)
}

impl SimpleCommand {
    /// A shell or interpreter that will read code from standard input: no script file (or
    /// `/dev/stdin` as one) and no `-c`/`-e` code argument (`bash`, `sh -s`, `python3 -`,
    /// `perl`, `. /dev/stdin`).
    pub fn reads_code_from_stdin(&self) -> bool {
        let Some(program) = self.program.as_deref() else { return false };
        if matches!(program, "." | "source") {
            return self.positionals().first().is_some_and(|w| STDIN_FILES.contains(&w.value.as_str()));
        }
        if !is_shell_or_interpreter(program) {
            return false;
        }
        // Letters that mean "the code is the next argument": `-c` for shells (and python),
        // `-e`/`-E` for perl, ruby and node, `-r` for php.
        let code_letters: &[char] = if is_shell(program) { &['c'] } else { &['c', 'e', 'E', 'r', 'p'] };
        let mut skip_value = false;
        for w in self.args() {
            let v = w.value.as_str();
            if skip_value {
                skip_value = false;
                continue;
            }
            if v == "-" || v == "-s" || v == "--" {
                return true;
            }
            if v.starts_with('-') {
                // Code given on the command line: `-c`, `-e`, `-E`, `-r` (php), `--eval`.
                if matches!(v, "--eval" | "--print" | "-m" | "--command")
                    || (!v.starts_with("--") && v.strip_prefix('-').is_some_and(|l| l.contains(code_letters)))
                {
                    return false;
                }
                if matches!(v, "-o" | "+o" | "-O" | "+O" | "-W" | "-X" | "-I" | "--rcfile" | "--init-file") {
                    skip_value = true;
                }
                continue;
            }
            return STDIN_FILES.contains(&v);
        }
        true
    }

    /// A shell (or `.`/`source`) that will run what it reads on standard input as shell code.
    pub fn runs_stdin_as_shell(&self) -> bool {
        self.reads_code_from_stdin()
            && self.program.as_deref().is_some_and(|p| is_shell(p) || matches!(p, "." | "source"))
    }
}
