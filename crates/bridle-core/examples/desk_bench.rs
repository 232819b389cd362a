//! Figures for many sessions at one desk (DESIGN §16), printed as a table; measured, never
//! asserted (`scripts/bench-desk.sh` runs it):
//! - making a session's worktree of a 10,000-file repository (with `.worktreeinclude` files),
//!   side by side with a bare `git worktree add` of the same repository;
//! - archiving and restoring a worktree with 1,000 changed files (staged, unstaged, untracked);
//! - the memory of the window's host (its Rust side: engines, MCP hubs, stores; no WebKit) with
//!   1, 4 and 8 idle sessions live.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridle_core::session_host::{Reload, SessionHost};
use bridle_core::wiring::{Flags, Wiring};

const FILES: usize = 10_000;
const CHANGED: usize = 1_000;
const RUNS: usize = 5;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git").args(args).current_dir(dir).status().expect("git runs");
    assert!(ok.success(), "git {args:?}");
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// A repository of `FILES` files in 100 folders, and 50 ignored files `.worktreeinclude` names.
fn repository(root: &Path) -> std::path::PathBuf {
    let repo = root.join("repo");
    for i in 0..FILES {
        let dir = repo.join(format!("src/m{:03}", i % 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.rs")), format!("pub fn f{i}() -> usize {{ {i} }}\n").repeat(20)).unwrap();
    }
    std::fs::write(repo.join(".gitignore"), "*.local\n").unwrap();
    std::fs::write(repo.join(".worktreeinclude"), "*.local\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["-c", "user.name=B", "-c", "user.email=b@e", "commit", "-qm", "start"]);
    for i in 0..50 {
        std::fs::write(repo.join(format!("secret{i}.local")), "TOKEN=x\n").unwrap();
    }
    repo
}

/// Resident and proportional set sizes of this process, in MiB.
fn memory() -> (f64, f64) {
    let read = |file: &str, key: &str| -> f64 {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let kb = text.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1));
        kb.and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / 1024.0
    };
    (read("/proc/self/status", "VmRSS:"), read("/proc/self/smaps_rollup", "Pss:"))
}

fn main() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let data = root.path().join("data");

    // Making a worktree: a bare `git worktree add` against Bridle's (branch, lock, include copy).
    let mut bare = Vec::new();
    let mut bridle = Vec::new();
    for run in 0..RUNS {
        let at = root.path().join(format!("bare{run}"));
        let start = Instant::now();
        git(&repo, &["worktree", "add", "-q", "-b", &format!("bare{run}"), at.to_str().unwrap()]);
        bare.push(start.elapsed());
        let at = data.join(format!("worktrees/s{run}"));
        let start = Instant::now();
        bridle_core::worktrees::create(&repo, &at, &format!("s{run}"), None).unwrap();
        bridle.push(start.elapsed());
    }
    println!("| measure | Bridle | reference |");
    println!("|---|---|---|");
    println!(
        "| make a worktree of {FILES} files (median of {RUNS}) | {} | {} (`git worktree add`) |",
        ms(median(bridle)),
        ms(median(bare))
    );

    // Archive and restore a worktree with CHANGED changed files.
    let made = bridle_core::worktrees::create(&repo, &data.join("worktrees/big"), "big", None).unwrap();
    for i in 0..CHANGED {
        let file = made.path.join(format!("src/m{:03}/f{i}.rs", i % 100));
        std::fs::write(&file, format!("// changed {i}\n")).unwrap();
        if i % 3 == 0 {
            git(&made.path, &["add", file.to_str().unwrap()]);
        }
    }
    for i in 0..CHANGED / 10 {
        std::fs::write(made.path.join(format!("new{i}.txt")), "untracked\n").unwrap();
    }
    let start = Instant::now();
    let archived = bridle_core::worktrees::archive(&made, "big").unwrap();
    let archive = start.elapsed();
    let start = Instant::now();
    bridle_core::worktrees::restore(&made, &archived).unwrap();
    let restore = start.elapsed();
    println!("| archive a worktree with {CHANGED} changed files | {} | — |", ms(archive));
    println!("| restore it | {} | — |", ms(restore));

    // The window's host with 1, 4 and 8 idle sessions.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let flags = Flags {
            workspace: Some(repo.clone()),
            data_dir: Some(root.path().join("host")),
            config: Some(root.path().join("host/config.toml")),
        };
        let wiring = Wiring::load(flags.clone(), |_| None, || unreachable!()).unwrap();
        let reload: Reload = Arc::new(move || Wiring::load(flags.clone(), |_| None, || unreachable!()));
        let (before, _) = memory();
        let host = SessionHost::start(wiring, reload, Arc::new(|_| {})).await.unwrap();
        let mut live = 1;
        for want in [1, 4, 8] {
            while live < want {
                host.session_new().await.unwrap();
                live += 1;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let (rss, pss) = memory();
            println!(
                "| the host with {want} idle session(s): RSS / PSS | {rss:.1} / {pss:.1} MiB ({:.1} MiB over the process before) | — |",
                rss - before
            );
        }
        host.close().await;
    });
}
