//! Which words of a simple command are paths, and whether the command writes them.
//!
//! Rule: redirection targets and the operands of programs known to change files (`rm`, `mv`,
//! `cp`'s destination, `tee`, `touch`, `chmod`, `ln`, `dd of=`, `sed -i`, `curl -o`, `tar -x
//! -C`, ...) are *certain* and always judged; every other argument is only a *guess* that may
//! be read, judged when it looks like a path. When unsure whether a program writes an operand,
//! it is counted as a read: a read outside the workspace is low, a wrong write would be high.

use std::collections::HashSet;

use super::{SimpleCommand, Word};

/// A path a command touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Operand<'a> {
    /// The word it comes from.
    pub word: &'a Word,
    /// The path text (the word's value, less an `of=`, `--out=` or `@` prefix).
    pub path: String,
    /// The command creates, changes or deletes it.
    pub writes: bool,
    /// A redirection target.
    pub redirect: bool,
    /// Known to be a path (not just an argument that might be one).
    pub certain: bool,
}

/// Programs run from these folders are not worth a finding for where they live.
const STANDARD_BIN: &[&str] = &["/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/opt/homebrew/bin/"];

/// Programs whose arguments are never paths.
const NO_PATHS: &[&str] = &[
    "echo", "printf", "kill", "pkill", "killall", "sleep", "seq", "date", "expr", "test", "[", "[[", "true", "false",
    "export", "unset", "set", "alias", "history", "wait", "exit", "return", "shift", "read", "let", "type", "which",
    "whereis", "hash", "jobs", "fg", "bg", "disown", "trap", "ulimit", "umask", "sysctl",
];

/// Programs whose every operand is created, changed or deleted.
const WRITES_ALL: &[&str] =
    &["rm", "rmdir", "unlink", "shred", "srm", "touch", "mkdir", "truncate", "mkfifo", "mknod", "tee", "mv", "gio"];

/// Programs whose last operand is written and the others read.
const WRITES_LAST: &[&str] = &["cp", "install", "ln", "link", "rsync", "scp", "ditto"];

/// Programs whose first operand is a mode or owner and the rest are changed.
const CHANGES_AFTER_FIRST: &[&str] = &["chmod", "chown", "chgrp", "chattr", "setfacl", "chcon"];

/// Programs whose first operand is a pattern or program text, not a path.
const PATTERN_FIRST: &[&str] =
    &["grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "mawk", "jq", "yq", "sed", "gsed", "perl"];

/// Compilers and tools whose `-o` names the file they write.
const OUTPUT_FLAG: &[&str] = &[
    "cc", "gcc", "g++", "c++", "clang", "clang++", "ld", "rustc", "go", "javac", "sort", "zig", "nasm", "as", "curl",
    "pandoc", "tsc",
];

pub(crate) fn operands(cmd: &SimpleCommand) -> Vec<Operand<'_>> {
    let mut out = Vec::new();
    for r in &cmd.redirects {
        if let Some((target, writes)) = r.file() {
            out.push(Operand { word: target, path: target.value.clone(), writes, redirect: true, certain: true });
        }
    }
    let Some(program) = cmd.program.as_deref() else { return out };
    if let Some(first) = cmd.words.first() {
        if first.value.contains('/') && !STANDARD_BIN.iter().any(|d| first.value.starts_with(d)) {
            out.push(operand(first, &first.value, false, false));
        }
    }
    if NO_PATHS.contains(&program) {
        return out;
    }
    let positionals = cmd.positionals();
    let args = cmd.args();
    let mut known: Vec<Operand<'_>> = Vec::new();
    match program {
        p if WRITES_ALL.contains(&p) => {
            known.extend(positionals.iter().map(|w| operand(w, &w.value, true, true)));
        }
        p if WRITES_LAST.contains(&p) => {
            if let Some(dir) = option_values(args, &["-t", "--target-directory"]).pop() {
                known.push(operand(dir.0, dir.1, true, true));
                known.extend(positionals.iter().map(|w| operand(w, &w.value, false, false)));
            } else if let Some((last, rest)) = positionals.split_last() {
                known.push(operand(last, &last.value, true, true));
                known.extend(rest.iter().map(|w| operand(w, &w.value, false, false)));
            }
        }
        p if CHANGES_AFTER_FIRST.contains(&p) => {
            let skip = usize::from(!args.iter().any(|w| w.value.starts_with("--reference")));
            known.extend(positionals.iter().skip(skip).map(|w| operand(w, &w.value, true, true)));
        }
        "dd" => {
            for w in args {
                if let Some(path) = w.value.strip_prefix("of=") {
                    known.push(operand(w, path, true, true));
                } else if let Some(path) = w.value.strip_prefix("if=") {
                    known.push(operand(w, path, false, true));
                }
            }
        }
        "sed" | "gsed" | "perl" => {
            let in_place = args.iter().any(|w| {
                let v = w.value.as_str();
                v.starts_with("--in-place") || (v.starts_with('-') && !v.starts_with("--") && v.contains('i'))
            });
            let script_given = args.iter().any(|w| matches!(w.value.as_str(), "-e" | "-f" | "--expression" | "--file"))
                || (program == "perl" && args.iter().any(|w| w.value.starts_with('-') && w.value.contains('e')));
            let skip = usize::from(!script_given);
            let scripts = script_values(args);
            let files = positionals.iter().skip(skip).filter(|w| !scripts.contains(&(**w as *const Word)));
            known.extend(files.map(|w| operand(w, &w.value, in_place, in_place)));
        }
        "find" | "gfind" => {
            let deletes = args.iter().any(|w| w.value == "-delete");
            let roots = args.iter().take_while(|w| !w.value.starts_with('-') && w.value != "(" && w.value != "!");
            known.extend(roots.map(|w| operand(w, &w.value, deletes, deletes)));
        }
        "tar" | "bsdtar" | "gtar" => {
            let first = args.first().map(|w| w.value.trim_start_matches('-')).unwrap_or("");
            let extract = args.iter().any(|w| w.value == "--extract" || w.value == "--get")
                || (!first.is_empty() && first.chars().all(|c| c.is_ascii_alphabetic()) && first.contains('x'));
            let create = !extract && first.contains('c');
            for (w, path) in option_values(args, &["-C", "--directory"]) {
                known.push(operand(w, path, extract, true));
            }
            for (w, path) in option_values(args, &["-f", "--file"]) {
                known.push(operand(w, path, create, true));
            }
            let letters = args
                .first()
                .map(|w| w.value.as_str())
                .filter(|v| !v.starts_with("--") && v.trim_start_matches('-').chars().all(|c| c.is_ascii_alphabetic()));
            let archive = match letters {
                // `tar czf out.tgz dir`: the archive is the word after the letters.
                Some(l) if l.contains('f') => args.get(1),
                _ => None,
            };
            if let Some(archive) = archive {
                known.push(operand(archive, &archive.value, create, true));
            }
            let skip: HashSet<*const Word> = known.iter().map(|o| o.word as *const Word).collect();
            let rest = positionals.iter().filter(|w| !skip.contains(&(**w as *const Word)));
            known.extend(
                rest.skip(usize::from(letters.is_some_and(|l| !l.starts_with('-'))))
                    .map(|w| operand(w, &w.value, false, false)),
            );
        }
        "unzip" | "7z" => {
            for (w, path) in option_values(args, &["-d"]) {
                known.push(operand(w, path, true, true));
            }
        }
        "wget" => {
            for (w, path) in option_values(args, &["-O", "--output-document", "-P", "--directory-prefix", "-o"]) {
                known.push(operand(w, path, true, true));
            }
        }
        "git" => {
            let pos: Vec<&&Word> = positionals.iter().collect();
            match pos.first().map(|w| w.value.as_str()) {
                Some("clone") if pos.len() >= 3 => {
                    known.push(operand(pos[pos.len() - 1], &pos[pos.len() - 1].value, true, true))
                }
                Some("init") if pos.len() >= 2 => known.push(operand(pos[1], &pos[1].value, true, true)),
                _ => {}
            }
            for (w, path) in option_values(args, &["-C"]) {
                known.push(operand(w, path, false, true));
            }
        }
        p if PATTERN_FIRST.contains(&p) => {
            let pattern_given = args.iter().any(|w| matches!(w.value.as_str(), "-e" | "-f" | "--regexp" | "--file"));
            let skip = usize::from(!pattern_given);
            known.extend(positionals.iter().skip(skip).map(|w| operand(w, &w.value, false, false)));
        }
        _ => known.extend(positionals.iter().map(|w| operand(w, &w.value, false, false))),
    }
    if OUTPUT_FLAG.contains(&program) {
        for (w, path) in option_values(args, &["-o", "--output", "--output-dir", "--out-dir", "--outDir"]) {
            known.push(operand(w, path, true, true));
        }
    }
    if program == "curl" {
        for (w, path) in option_values(args, &["-T", "--upload-file", "-K", "--config"]) {
            known.push(operand(w, path, false, true));
        }
    }
    // `--manifest-path=/x`, `-d @file`, `file=@path`: values that name files are read. (Each
    // word is visited once, so what this loop adds never needs looking up again.)
    let judged: HashSet<*const Word> = known.iter().map(|o| o.word as *const Word).collect();
    for w in args {
        let v = w.value.as_str();
        if let Some(path) = v.strip_prefix('@').or_else(|| v.split_once("=@").map(|(_, p)| p)) {
            known.push(operand(w, path, false, true));
        } else if let Some((flag, path)) = v.split_once('=').filter(|(f, _)| f.starts_with('-')) {
            if !flag.is_empty() && !judged.contains(&(w as *const Word)) {
                known.push(operand(w, path, false, false));
            }
        }
    }
    known.extend(inline_code_operands(program, args));
    out.extend(known);
    out
}

/// Interpreters that take a program as an argument (`python3 -c CODE`, `node -e CODE`).
const INLINE_CODE: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("Rscript", &["-e"]),
];

/// Words in inline code that change files (a delete, a write, a move, a mode change).
const CODE_WRITES: &[&str] = &[
    "unlink",
    "remove",
    "rmtree",
    "rmdir",
    "rmSync",
    "rm_rf",
    "rm_r",
    "writeFile",
    "appendFile",
    "write_text",
    "write_bytes",
    "File.write",
    "FileUtils",
    "rename",
    "replace(",
    "chmod",
    "chown",
    "truncate",
    "copyfile",
    "shutil.",
    "move(",
    "'w'",
    "\"w\"",
    "'a'",
    "\"a\"",
    "'wb'",
    "\"wb\"",
    ">>",
    "'>",
    "\">",
    "file_put_contents",
    "symlink",
    "mkdir",
];

/// The paths inline interpreter code names in its string literals (`open('/etc/passwd')`,
/// `unlink "~/.ssh/id_rsa"`): the code runs out of the guard's sight, so the places it names
/// are judged as its operands — written when the code has a word that changes files.
fn inline_code_operands<'a>(program: &str, args: &'a [Word]) -> Vec<Operand<'a>> {
    let family = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let Some((_, flags)) = INLINE_CODE.iter().find(|(name, _)| *name == family) else { return Vec::new() };
    let mut out = Vec::new();
    for (i, w) in args.iter().enumerate() {
        let short = |f: &str| f.len() == 2 && w.value.starts_with(f) && w.value.len() > 2 && !w.value.starts_with("--");
        let code = if flags.contains(&w.value.as_str()) {
            args.get(i + 1)
        } else if flags.iter().any(|f| short(f)) {
            Some(w)
        } else {
            None
        };
        let Some(code) = code else { continue };
        let text = if std::ptr::eq(code, w) { &code.value[2..] } else { code.value.as_str() };
        let writes = CODE_WRITES.iter().any(|verb| text.contains(verb));
        // A literal may hold a command line (`` `cat ~/.ssh/id_rsa` ``, `system("rm -rf /")`).
        let literals = string_literals(text);
        let words = literals.iter().flat_map(|l| l.split_whitespace()).filter(|p| looks_like_a_place(p));
        for path in words {
            out.push(operand(code, path, writes, writes));
        }
    }
    out
}

/// The contents of `'...'`, `"..."` and `` `...` `` literals in program text.
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut literal = String::new();
        let mut escaped = false;
        for d in chars.by_ref() {
            if escaped {
                literal.push(d);
                escaped = false;
            } else if d == '\\' {
                escaped = true;
            } else if d == c {
                break;
            } else {
                literal.push(d);
            }
        }
        out.push(literal);
    }
    out
}

/// A literal that names a place outside the current folder: absolute, in a home, or above.
fn looks_like_a_place(text: &str) -> bool {
    !text.contains("://") && (text.starts_with('/') || text == "~" || text.starts_with("~/") || text.starts_with("../"))
}

fn operand<'a>(word: &'a Word, path: &str, writes: bool, certain: bool) -> Operand<'a> {
    Operand { word, path: path.to_string(), writes, redirect: false, certain }
}

/// The values given to any of `flags`, as `-o x`, `-ox` (short) or `--out=x`/`--out x`.
fn option_values<'a>(args: &'a [Word], flags: &[&str]) -> Vec<(&'a Word, &'a str)> {
    let mut out = Vec::new();
    for (i, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        for flag in flags {
            if v == *flag {
                if let Some(next) = args.get(i + 1) {
                    out.push((next, next.value.as_str()));
                }
            } else if flag.starts_with("--") {
                if let Some(value) = v.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                    out.push((w, value));
                }
            } else if let Some(value) = v.strip_prefix(flag).filter(|r| !r.is_empty() && flag.len() == 2) {
                out.push((w, value));
            }
        }
    }
    out
}

/// The words that are the value of a `-e` option (sed/perl script text, not a file).
fn script_values(args: &[Word]) -> HashSet<*const Word> {
    args.windows(2)
        .filter(|p| matches!(p[0].value.as_str(), "-e" | "--expression"))
        .map(|p| &p[1] as *const Word)
        .collect()
}
