//! `Guard::judge` latency: the guard runs on every tool call, so it must cost microseconds.
//!
//! Criterion measures a typical shell command and an `edit_file` call against a realistic rule
//! set and a real workspace sandbox; then a plain loop of 100 000 calls each reports the median
//! and the 99th percentile, which criterion does not give.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use bridle_core::config::{Config, Rules};
use bridle_core::guard::{Guard, Policy};
use bridle_core::sandbox::PathSandbox;
use bridle_core::tools::{builtin_registry, PreparedCall};
use bridle_protocol::Mode;
use criterion::Criterion;

const SHELL: &str = "cargo test --workspace 2>&1 | tail -20";
const COMPOUND: &str =
    "cd crates/core && cargo build --release 2>&1 | grep -E 'error|warning' | head -50; git status -s && git diff --stat";

/// A program word only known at run time: judged as every program a critical rule names.
const UNKNOWN_PROGRAM: &str = "x=$(cat name.txt); $x -rf ~";
/// An array spliced into a command, and an unknown wrapper.
const ARRAY: &str = "arr=(rm -rf build); \"${arr[@]}\" && chronic cargo test -q";

struct Setup {
    _tmp: tempfile::TempDir,
    guard: Guard,
    calls: Vec<(&'static str, PreparedCall)>,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap().join("home");
    let root = home.join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    let sandbox = PathSandbox::new(&root, Some(home.clone()), &home.join(".local/share/bridle"), &[]).unwrap();
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let config = Config {
        rules: Rules {
            allow: strings(&[
                "read_file",
                "list_files",
                "grep_search",
                "bash(git status*)",
                "bash(git diff*)",
                "bash(git log*)",
                "bash(cargo test*)",
                "bash(cargo build*)",
                "bash(cargo clippy*)",
                "bash(npm run *)",
                "bash(tail *)",
                "bash(head *)",
                "edit_file(src/**)",
                "write_file(docs/**)",
            ]),
            ask: strings(&["bash(git push*)", "edit_file(Cargo.toml)"]),
            deny: strings(&["bash(rm -rf /*)", "edit_file(.env*)", "read_file(secrets/**)"]),
        },
        disabled_tools: strings(&["mcp__untrusted__*"]),
        ..Config::default()
    };
    let guard = Guard::new(Mode::Auto).with_policy(Policy::from_config(&config).unwrap()).with_sandbox(sandbox);
    let registry = builtin_registry().unwrap();
    let bash =
        |command: &str| registry.prepare("bash", &serde_json::json!({ "command": command }).to_string()).unwrap();
    let edit = registry
        .prepare("edit_file", r#"{"path":"src/lib.rs","old_text":"pub fn a() {}","new_text":"pub fn a() -> u8 { 1 }"}"#)
        .unwrap();
    let calls = vec![
        ("bash: typical", bash(SHELL)),
        ("edit_file", edit),
        ("bash: compound", bash(COMPOUND)),
        ("bash: unknown program", bash(UNKNOWN_PROGRAM)),
        ("bash: array", bash(ARRAY)),
    ];
    Setup { _tmp: tmp, guard, calls }
}

fn criterion_benches(c: &mut Criterion, s: &Setup) {
    let mut group = c.benchmark_group("judge");
    for (name, call) in &s.calls {
        group.bench_function(*name, |b| b.iter(|| black_box(s.guard.judge(black_box(call)))));
    }
    group.finish();
}

/// Median and 99th percentile over `n` single calls, each timed on its own.
fn percentiles(s: &Setup, n: usize) {
    for (name, call) in &s.calls {
        for _ in 0..1_000 {
            black_box(s.guard.judge(call));
        }
        let mut times: Vec<Duration> = (0..n)
            .map(|_| {
                let start = Instant::now();
                black_box(s.guard.judge(black_box(call)));
                start.elapsed()
            })
            .collect();
        times.sort_unstable();
        let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
        println!(
            "judge {name:<16} n={n}  median {:>8.2} µs  p99 {:>8.2} µs  max {:>8.2} µs",
            at(0.5).as_secs_f64() * 1e6,
            at(0.99).as_secs_f64() * 1e6,
            times[times.len() - 1].as_secs_f64() * 1e6
        );
    }
}

/// One judgement of `n` nested `{ ...; }` groups (a hostile input's size), timed once.
fn nested_groups(s: &Setup, n: usize) {
    let registry = builtin_registry().unwrap();
    let command = format!("{}rm -rf /{}", "{ ".repeat(n), "; }".repeat(n));
    let call = registry.prepare("bash", &serde_json::json!({ "command": command }).to_string()).unwrap();
    let start = Instant::now();
    let verdict = black_box(s.guard.judge(&call));
    println!("judge {n} nested groups: {:.1} ms ({:?})", start.elapsed().as_secs_f64() * 1e3, verdict.decision);
}

/// One judgement of the 210-byte line that doubles a variable 25 times, timed once.
fn doubling(s: &Setup) {
    let registry = builtin_registry().unwrap();
    let mut command = "a=x;".to_string();
    for _ in 0..25 {
        command.push_str(" a=$a$a;");
    }
    command.push_str(" echo $a");
    let call = registry.prepare("bash", &serde_json::json!({ "command": command }).to_string()).unwrap();
    let start = Instant::now();
    let verdict = black_box(s.guard.judge(&call));
    println!(
        "judge the {}-byte doubling line: {:.2} ms ({:?})",
        command.len(),
        start.elapsed().as_secs_f64() * 1e3,
        verdict.decision
    );
}

fn main() {
    let s = setup();
    let mut criterion = Criterion::default().configure_from_args();
    criterion_benches(&mut criterion, &s);
    criterion.final_summary();
    // `cargo test --benches` runs this binary in test mode: keep that quick.
    let quick = std::env::args().any(|a| a == "--test");
    percentiles(&s, if quick { 100 } else { 100_000 });
    nested_groups(&s, if quick { 1_000 } else { 100_000 });
    doubling(&s);
}
