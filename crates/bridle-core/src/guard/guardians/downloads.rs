//! Running what the same line downloaded (`git clone URL d && bash d/x.sh`, `curl -o i.sh URL;
//! sh i.sh`, `cd d && make install`): where each fetcher writes, followed through the line.
//!
//! Rule: destinations are located like every other path (after `cd`), and a later command that
//! runs a file below one, or builds in a folder below one, is marked; at most
//! [`Downloads::MAX`] destinations are followed (the fetch itself has its own finding).

use std::path::{Path, PathBuf};

use super::{Cwd, Lookup, PathOperand};
use crate::guard::shell::{self, SimpleCommand};

/// Where the line downloaded to so far (`git clone URL dir`, `curl -o f`, `wget -P dir`), for
/// telling when a later command runs what was downloaded. Bounded: past
/// [`Downloads::MAX`] destinations the rest are not followed (the first fetch already has
/// its own finding).
#[derive(Default)]
pub(super) struct Downloads {
    into: Vec<PathBuf>,
}

impl Downloads {
    const MAX: usize = 16;

    /// Notes where `cmd` downloads to, if it is a fetcher.
    pub(super) fn note(&mut self, cmd: &SimpleCommand, here: &Cwd, lookup: &mut Lookup<'_>) {
        if self.into.len() >= Self::MAX {
            return;
        }
        for target in download_targets(cmd) {
            if let Some(l) = lookup.locate(&target, here, true) {
                self.into.push(l.absolute);
            }
        }
    }

    /// Whether `cmd` runs a file below a download, or builds in a folder below one.
    pub(super) fn runs(&self, cmd: &SimpleCommand, paths: &[PathOperand], here: &Cwd, lookup: &mut Lookup<'_>) -> bool {
        if self.into.is_empty() {
            return false;
        }
        let under = |p: &Path| self.into.iter().any(|d| p.starts_with(d));
        let Some(program) = cmd.program.as_deref() else { return false };
        let first = cmd.words.first().map(|w| w.value.as_str()).unwrap_or_default();
        let script = match program {
            _ if first.contains('/') => Some(first.to_string()),
            "source" | "." => cmd.positionals().first().map(|w| w.value.clone()),
            p if shell::is_shell_or_interpreter(p) => cmd.positionals().first().map(|w| w.value.clone()),
            _ => None,
        };
        if let Some(script) = script {
            return lookup.locate(&script, here, true).is_some_and(|l| under(&l.absolute));
        }
        // `cd dir && make install`: a build run inside what was downloaded.
        let builds = matches!(program, "make" | "cmake" | "ninja" | "meson" | "npm" | "yarn" | "pnpm" | "pip" | "pip3")
            || program.starts_with("configure");
        let cwd = match here {
            Cwd::At(dir) => Some(dir.to_path_buf()),
            Cwd::Workspace => lookup.places.sandbox().map(|s| s.root().to_path_buf()),
            Cwd::Unknown => None,
        };
        builds && (cwd.is_some_and(|c| under(&c)) || paths.iter().any(|p| !p.writes && under(&p.located.absolute)))
    }
}

/// Where a fetcher writes: `git clone URL [DIR]`, `curl -o F`, `wget -O F` / `-P DIR` (else the
/// working directory), `scp`/`rsync` from a remote to the last operand.
fn download_targets(cmd: &SimpleCommand) -> Vec<String> {
    let Some(program) = cmd.program.as_deref() else { return Vec::new() };
    // Read only by the fetchers' arms: every other command costs the match alone.
    let args = || cmd.args().iter().map(|w| w.value.as_str());
    let value_of = |names: &[&str]| {
        let given: Vec<&str> = args().collect();
        given.windows(2).find(|p| names.contains(&p[0])).map(|p| p[1].to_string()).or_else(|| {
            given.iter().find_map(|a| names.iter().find_map(|n| a.strip_prefix(&format!("{n}=")).map(str::to_string)))
        })
    };
    let positionals = || cmd.positionals().iter().map(|w| w.value.clone()).collect::<Vec<String>>();
    match program {
        "git" | "hg" | "svn" | "gh" => {
            let positionals = positionals();
            let sub = positionals.iter().position(|p| matches!(p.as_str(), "clone" | "checkout" | "co"));
            let Some(sub) = sub else { return Vec::new() };
            let rest: Vec<&String> = positionals[sub + 1..].iter().filter(|p| p.as_str() != "repo").collect();
            match rest.as_slice() {
                [_, dir, ..] => vec![(*dir).clone()],
                [url] => vec![url
                    .trim_end_matches('/')
                    .trim_end_matches(".git")
                    .rsplit(['/', ':'])
                    .next()
                    .unwrap_or(".")
                    .to_string()],
                [] => Vec::new(),
            }
        }
        "curl" => match value_of(&["-o", "--output"]) {
            Some(file) => vec![file],
            None if args().any(|a| a == "--remote-name" || a.starts_with("-O")) => {
                vec![value_of(&["--output-dir"]).unwrap_or_else(|| ".".into())]
            }
            None => Vec::new(),
        },
        "wget" | "aria2c" => {
            let file = value_of(&["-O", "--output-document", "-o", "--out"]).filter(|f| f != "-");
            let dir = value_of(&["-P", "--directory-prefix", "-d", "--dir"]);
            vec![file.or(dir).unwrap_or_else(|| ".".into())]
        }
        "scp" | "rsync" => match positionals().split_last() {
            Some((last, sources)) if sources.iter().any(|p| p.contains(':')) => vec![last.clone()],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}
