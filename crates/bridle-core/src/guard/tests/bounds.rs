//! The shell reader stays bounded on hostile lines: whatever a line of N bytes asks for
//! (a variable doubled again and again, brace products, deep nesting, long chains of values,
//! `eval` and `bash -c` inside each other, replays, heredocs), what the reader makes, what it
//! returns and the memory it holds stay under a fixed multiple of N, it ends, and a line it
//! stopped following asks — it is never allowed. The guardians that judge the reading end too
//! on long lines of many commands, stages, redirections and paths, and decide as on short ones.
//!
//! Memory is measured by a counting allocator that counts the allocations of the thread that
//! asks (the tests of this binary run on other threads at the same time).
#![allow(clippy::unwrap_used, unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::mpsc;
use std::time::Duration;

use bridle_protocol::{Decision, Mode};
use rand::{Rng, SeedableRng};

use super::world;
use crate::guard::shell::budget::{FLOOR, GROWTH};
use crate::guard::shell::{parse_measured, Script, Signal};

/// Counts the bytes live on each thread, and the most they reached.
struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn grew(by: usize) {
    // `try_with`: allocations still happen while a thread's locals are torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add(by);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrank(by: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(by)));
}

// SAFETY: every call is handed unchanged to the system allocator, which keeps the contract;
// the counting touches only const-initialised thread locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: same layout, same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: same layout, same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size);
        shrank(layout.size());
        // SAFETY: `ptr` came from `System` with this layout; the caller keeps realloc's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What one reading cost.
#[derive(Debug)]
struct Cost {
    /// Bytes the reader made (charged to its budget).
    made: usize,
    /// Bytes of text in what it returned.
    returned: usize,
    /// The most bytes this thread held above what it held before, reading and result included.
    peak: usize,
    script: Script,
}

/// Reads `line` on this thread, measuring it.
fn measure(line: &str) -> Cost {
    let before = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let (script, made) = parse_measured(line);
    let peak = PEAK.with(Cell::get).saturating_sub(before);
    Cost { made, returned: size(&script), peak, script }
}

/// Bytes of text in a reading: every string it holds.
fn size(script: &Script) -> usize {
    let word = |w: &crate::guard::shell::Word| {
        w.raw.len() + w.value.len() + w.nested.iter().map(|n| n.text.len()).sum::<usize>()
    };
    script
        .commands
        .iter()
        .map(|c| {
            c.words.iter().chain(&c.assignments).map(word).sum::<usize>()
                + c.redirects.iter().map(|r| word(&r.target) + r.body.as_ref().map_or(0, String::len)).sum::<usize>()
                + c.stdin_text.iter().map(String::len).sum::<usize>()
                + c.wrappers.iter().map(String::len).sum::<usize>()
                + c.program.as_ref().map_or(0, String::len)
                + c.raw.len()
        })
        .sum::<usize>()
        + script.functions.iter().map(String::len).sum::<usize>()
}

/// What a line of `n` bytes may make: its budget.
fn allowance(n: usize) -> usize {
    (GROWTH * n).max(FLOOR)
}

/// Bytes of text a reading of `n` bytes may return. A word is kept as written and as read, a
/// command keeps its text, and each level of nesting keeps the text it nests once more (up to
/// `MAX_DEPTH` levels): `$($($(...)))` returns about 45 bytes per byte, the most measured.
fn returned(n: usize) -> usize {
    128 * n + 2 * FLOOR
}

/// Bytes a reading of `n` bytes may hold at its peak. Most of it is the reader's structures,
/// not text: `a; a; a; ...` holds about 425 bytes per byte (a command for every three), the
/// most measured; `eval eval ...` about 160 (its rest once per level of nesting).
fn held(n: usize) -> usize {
    1_024 * n + 8 * FLOOR
}

/// Runs `f` on a thread of its own and fails if it has not ended after `limit` (a hang
/// detector: the bounds themselves are checked by counting, not by the clock).
fn ends_within<T: Send + 'static>(limit: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(2 << 20) // a test thread's and a tokio worker's stack: no more than the app has
        .spawn(move || {
            let _ = tx.send(f());
        })
        .unwrap();
    rx.recv_timeout(limit).unwrap_or_else(|e| panic!("{what}: did not end within {limit:?} ({e})"))
}

fn doubling(times: usize) -> String {
    let mut line = "a=x;".to_string();
    for _ in 0..times {
        line.push_str(" a=$a$a;");
    }
    line
}

#[test]
fn the_doubling_line_is_read_at_once_and_asks() {
    // Before the bound: 26 doublings (212 bytes) took 283 MB, 40 (324 bytes) grew to 24 GB
    // until the OOM killer ended the process.
    for times in [25, 40, 1_000] {
        let line = doubling(times);
        let n = line.len();
        let cost = ends_within(Duration::from_secs(10), &format!("{times} doublings"), move || measure(&line));
        assert!(cost.script.signals.contains(&Signal::TooLarge), "{times}: {:?}", cost.script.signals);
        assert!(cost.made <= allowance(n), "{times}: made {}", cost.made);
        assert!(cost.peak <= held(n), "{times}: held {} bytes", cost.peak);
    }
    let line = doubling(25);
    assert!(line.len() >= 200 && line.len() <= 210, "{}", line.len());
    let w = world();
    for mode in [Mode::Plan, Mode::Ask, Mode::AutoEdit, Mode::Auto] {
        let verdict = w.bash(&w.guard(mode), &format!("{line} echo $a"));
        assert_eq!(verdict.decision, Decision::Ask, "{mode:?}: {:?}", verdict.findings);
        assert!(verdict.findings.iter().any(|f| f.rule == "too-large"), "{:?}", verdict.findings);
    }
    // An allow rule never lifts it (the finding is high).
    let guard = w.guard_with(Mode::Auto, &["bash"], &[], &[]);
    assert_eq!(w.bash(&guard, &line).decision, Decision::Ask);
    // What the line says after the bound is still read and judged, as written.
    let guard = w.guard(Mode::Auto);
    assert_eq!(w.bash(&guard, &format!("{line} rm -rf /")).decision, Decision::Deny);
    let later = format!("f(){{ rm -rf \"$@\"; }}; {line} for d in / ~; do rm -rf $d; done; f ~");
    let script = crate::guard::shell::parse(&later);
    let rms: Vec<String> =
        script.commands.iter().filter(|c| c.program.as_deref() == Some("rm")).map(|c| c.text()).collect();
    assert_eq!(rms, ["rm -rf $@", "rm -rf $d"], "the loop body and the function body, as written");
    assert_ne!(w.bash(&guard, &later).decision, Decision::Allow);
}

#[test]
fn a_huge_brace_product_asks_instead_of_hiding_a_command() {
    // `{rm,-rf,~}{,}...` runs `rm ... -rf ... ~ ...`; past the bound it was left as written
    // and allowed.
    let w = world();
    let guard = w.guard(Mode::Auto);
    for line in ["{rm,-rf,~}{,}", "{rm,-rf,~}{,}{,}{,}{,}{,}{,}{,}{,}", "{rm,-rf,~}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}"] {
        let verdict = w.bash(&guard, line);
        assert_ne!(verdict.decision, Decision::Allow, "{line}: {:?}", verdict.findings);
    }
    for line in ["touch {a,b,c,d,e,f,g,h}{1,2,3,4,5,6,7,8}.txt", "mkdir -p src/{a,b,c}/{x,y,z}", "x=1; x=$x$x; echo $x"]
    {
        let verdict = w.bash(&guard, line);
        assert_eq!(verdict.decision, Decision::Allow, "{line}: {:?}", verdict.findings);
    }
}

/// Hostile shapes, each built from a seed and a size: doubling, brace products, deep
/// nesting, long chains of values, `eval` and `bash -c` inside each other, replays,
/// heredocs, long lines.
fn hostile(rng: &mut rand::rngs::StdRng) -> String {
    let k = rng.random_range(1..=400usize);
    let pick = |rng: &mut rand::rngs::StdRng, items: &[&str]| items[rng.random_range(0..items.len())].to_string();
    match rng.random_range(0..16) {
        0 => {
            let refs = pick(rng, &["$a$a", "${a}${a}", "$a$a$a", "\"$a\"$a", "$a-$a"]);
            let set = pick(rng, &["a=", "export a=", "a+=", "local a=", "declare a="]);
            format!("a=x;{}", format!(" {set}{refs};").repeat(k))
        }
        1 => format!("echo {}", pick(rng, &["{a,b}", "{a,b,c}", "{,}", "{x,{y,z}}", "{aa,bb}c"]).repeat(k)),
        2 => format!("{}{}", pick(rng, &["{rm,-rf,~}", "{sh,-c,x}", "x"]), "{,}".repeat(k.min(60))),
        3 => {
            let (open, close) =
                [("$(", ")"), ("((", "))"), ("${x:-", "}"), ("<(", ")"), ("{ ", "; }"), ("( ", " )"), ("\"$(", ")\"")]
                    [rng.random_range(0..7)];
            format!("{}rm -rf /{}", open.repeat(k * 25), close.repeat(k * 25))
        }
        4 => {
            let mut line = "a0=xyz;".to_string();
            for i in 1..=k {
                line.push_str(&format!(" a{i}=$a{}$a{}$a{};", i - 1, i - 1, i - 1));
            }
            line + " $a400 /"
        }
        5 => {
            let wide = "$a".repeat(k * 10);
            format!("a={}; b={wide}; c=$b$b; echo $c $c $c", "x".repeat(k * 10))
        }
        6 => format!("{}rm -rf /", pick(rng, &["eval ", "bash -c ", "sh -c eval ", "sudo ", "env "]).repeat(k * 25)),
        7 => {
            let mut line = "rm -rf /".to_string();
            for _ in 0..k.min(20) {
                let quote = if rng.random_bool(0.5) { "'" } else { "\"" };
                line = format!("{} {quote}{}{quote}", pick(rng, &["eval", "bash -c", "sh -c"]), line);
            }
            line
        }
        8 => {
            let values = "a b c d e f g h ".repeat(k.min(8));
            let mut line = String::new();
            for i in 0..k.min(12) {
                line.push_str(&format!("for v{i} in {values}; do "));
            }
            let uses: String = (0..k.min(12)).map(|i| format!("$v{i}")).collect();
            line + &format!("echo {uses} {}; ", "x".repeat(k)) + &"done; ".repeat(k.min(12))
        }
        9 => {
            let mut line = "f0(){ echo \"$@\" \"$@\"; };".to_string();
            for i in 1..k.min(16) {
                line.push_str(&format!(" f{i}(){{ f{} \"$@\" \"$@\" \"$*$*\"; }};", i - 1));
            }
            line + &format!(" f{} {}", k.min(16) - 1, "arg ".repeat(k))
        }
        10 => {
            let roots = "/ ~ . a b c d e f g ".repeat(k.min(40) / 10 + 1);
            format!("{}rm -rf {{}}{}", format!("find {roots} -exec ").repeat(k.min(30)), " \\;".repeat(k.min(30)))
        }
        11 => {
            let mut line = "rm -rf /".to_string();
            for _ in 0..k.min(10) {
                line = format!("printf '%s\\n' '{}' {} | sh", line.replace('\'', "'\\''"), "x ".repeat(k));
            }
            line
        }
        12 => {
            let mut line = "rm -rf /\n".to_string();
            for i in 0..k.min(30) {
                line = format!("bash <<E{i}\n{line}E{i}\n");
            }
            line + &"cat <<X\n$(ls)\nX\n".repeat(k)
        }
        13 => {
            let alias = "alias a='a; a'; ".repeat(k);
            alias + &"a ".repeat(k)
        }
        14 => format!(
            "{}{}",
            "for d in / ~; do f(){ rm -rf \"$@\" $d; }; f $d; done; ".repeat(k),
            "a=/; rm $a{b,c}; ".repeat(k)
        ),
        _ => {
            const PIECES: &[&str] = &[
                "$(",
                ")",
                "{a,b}",
                "$a$a",
                "a=$a$a;",
                "eval ",
                "bash -c '",
                "'",
                "\"",
                "`",
                "${x:-",
                "}",
                "((",
                "))",
                "<<E\n",
                "E\n",
                "| sh",
                "f(){ f $@ $@; }; f x;",
                "for i in 1 2 3; do ",
                "done;",
                "\\",
                " ",
                ";",
                "\n",
            ];
            (0..k * 10).map(|_| PIECES[rng.random_range(0..PIECES.len())]).collect()
        }
    }
}

/// For every hostile line of N bytes: what the reader makes stays within its budget, what it
/// returns and the memory it holds within a fixed multiple of N (plus a constant), and it
/// ends. A line the reader stopped following carries a signal that asks.
#[test]
fn hostile_lines_stay_within_a_fixed_multiple_of_their_length() {
    ends_within(Duration::from_secs(120), "the hostile lines", || {
        let w = world();
        let guard = w.guard(Mode::Auto);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_b0d5);
        for case in 0..600 {
            let line = hostile(&mut rng);
            let n = line.len();
            let cost = measure(&line);
            let what = || format!("case {case} ({n} bytes): {}", line.chars().take(120).collect::<String>());
            assert!(cost.made <= allowance(n), "{}: made {}", what(), cost.made);
            assert!(cost.returned <= returned(n), "{}: returned {}", what(), cost.returned);
            assert!(cost.peak <= held(n), "{}: held {}", what(), cost.peak);
            // A line the reader stopped following asks, even in `auto` (the short ones are
            // judged whole: the guardians' own cost is not what is measured here).
            let stopped = cost.script.signals.iter().any(|s| matches!(s, Signal::TooLarge | Signal::TooDeep));
            if stopped && n < 4_096 {
                assert_ne!(w.bash(&guard, &line).decision, Decision::Allow, "{}", what());
            }
        }
    });
}

/// Long lines of one shape each, sized so a reading that is quadratic, or holds a copy per
/// level or per repeat, would show: each stays within the bounds and ends.
#[test]
fn long_lines_of_every_shape_stay_within_the_bounds() {
    let shapes: Vec<(&str, String)> = vec![
        ("eval chain", "eval ".repeat(10_000) + "rm -rf /"),
        ("bash -c chain", "sh -c ".repeat(10_000) + "rm -rf /"),
        ("wrapper chain", "sudo env nice ".repeat(4_000) + "rm -rf /"),
        ("many words", "echo ".to_string() + &"ab ".repeat(20_000)),
        ("many commands", "a; ".repeat(20_000)),
        ("open groups", "( ".repeat(20_000)),
        ("nested substitutions", "$(".repeat(20_000) + &")".repeat(20_000)),
        ("nested arithmetic", "$((".repeat(20_000)),
        ("nested parentheses", "(".repeat(20_000) + "rm -rf /" + &")".repeat(20_000)),
        (
            "nested backticks",
            (0..12).fold("rm -rf /".to_string(), |inner, _| {
                format!("echo `{}`", inner.replace('\\', "\\\\").replace('`', "\\`"))
            }),
        ),
        ("nested eval of substitutions", (0..2_000).fold("ls".to_string(), |inner, _| format!("eval \"$({inner})\""))),
        ("nested defaults", "${x:-".repeat(20_000) + &"}".repeat(20_000)),
        ("unclosed braces", "echo ".to_string() + &"{".repeat(100_000)),
        ("brace product", "echo ".to_string() + &"{a,b}".repeat(20_000)),
        ("brace with many parts", "echo {".to_string() + &"a,".repeat(50_000) + "}" + &"x".repeat(100_000)),
        ("heredoc", "cat <<E\n".to_string() + &"line of text\n".repeat(5_000) + "E\n"),
        ("many heredocs", "cat ".to_string() + &"<<E ".repeat(10_000) + "\n" + &"x\n".repeat(10_000)),
        ("backticks", "echo ".to_string() + &"`".repeat(50_000)),
        (
            "many loops",
            (0..5_000).map(|i| format!("for a{i} in x; do :; done; ")).collect::<String>()
                + &"echo $x; ".repeat(10_000),
        ),
        ("many variables", (0..10_000).map(|i| format!("v{i}=x; ")).collect::<String>() + &"$v1 ".repeat(10_000)),
        ("long chain of values", (1..=2_000).map(|i| format!("a{i}=$a{}$a{}; ", i - 1, i - 1)).collect::<String>()),
        ("wide value", format!("a={}; b={}", "x".repeat(1_000), "$a".repeat(50_000))),
        (
            "many calls",
            (0..3_000).map(|i| format!("f{i}(){{ f{} \"$@\" \"$@\"; }}; ", i + 1)).collect::<String>() + "f0 x",
        ),
        ("many start paths", "find ".to_string() + &"a ".repeat(30_000) + "-exec rm {} \\;"),
        ("many -exec", "find a ".to_string() + &"-exec rm {} \\; ".repeat(10_000)),
        ("nested -exec", "find a b c ".repeat(5_000) + "-exec rm {} \\;"),
        ("printf into sh", "printf '%s' 'printf x | sh' | sh; ".repeat(5_000)),
    ];
    for (name, line) in shapes {
        let n = line.len();
        let cost = ends_within(Duration::from_secs(10), name, move || measure(&line));
        assert!(cost.made <= allowance(n), "{name}: made {}", cost.made);
        assert!(cost.returned <= returned(n), "{name}: returned {} from {n}", cost.returned);
        assert!(cost.peak <= held(n), "{name}: held {} from {n}", cost.peak);
    }
}

/// A shape of line, built for a number of repeats.
type Shape = fn(usize) -> String;

/// `each(0) + each(1) + ... + each(n - 1)`.
fn numbered(n: usize, each: fn(usize) -> String) -> String {
    (0..n).map(each).collect()
}

/// Judges each shape whole (auto mode) at 20 and at 20,000 repeats, each within a generous hang
/// detector (the slowest takes a few seconds in a debug build; before, minutes): the decision at
/// 20 is `short`, at 20,000 `long`, and a decision that changed carries the `too-large` finding.
fn each_keeps_its_decision(shapes: Vec<(&'static str, Shape, Decision, Decision)>) {
    for (name, shape, short, long) in shapes {
        let judge = move |n: usize| {
            ends_within(Duration::from_secs(30), &format!("{name} x {n}"), move || {
                let w = world();
                w.bash(&w.guard(Mode::Auto), &shape(n))
            })
        };
        let verdict = judge(20);
        assert_eq!(verdict.decision, short, "{name} x 20: {:?}", verdict.findings);
        let verdict = judge(20_000);
        assert_eq!(verdict.decision, long, "{name} x 20,000: {:?}", verdict.findings);
        if long != short {
            assert!(verdict.findings.iter().any(|f| f.rule == "too-large"), "{name}: {:?}", verdict.findings);
        }
    }
}

/// Long lines that stress the guardians rather than the reader — many `cd`s, pipeline stages,
/// redirections, `export` assignments, paths — each judged whole (auto mode) at 20,000
/// repeats. Before the guardians were made linear, `cd a; ` said 20,000 times took about 159 s
/// in a debug build and `echo '\x41' | ` 57 s. Each must end within a generous hang detector
/// and decide as the same shape said 20 times does; the one change allowed is that a line whose
/// working directory grows past its allowance asks (`too-large`) — never the other way.
#[test]
fn long_lines_the_guardians_judge_end_and_keep_their_decision() {
    use Decision::{Allow, Ask, Deny};
    let shapes: Vec<(&str, Shape, Decision, Decision)> = vec![
        ("cd deeper", |n| "cd a; ".repeat(n), Allow, Ask),
        ("cd deeper, then a secret", |n| "cd a; ".repeat(n) + "cat ~/.ssh/id_rsa", Deny, Deny),
        ("cd deeper outside", |n| "cd /tmp; ".to_string() + &"cd a; ".repeat(n), Allow, Ask),
        ("pushd deeper", |n| "pushd a; ".repeat(n) + "popd", Allow, Ask),
        ("cd in and out", |n| "cd src; cd ..; ".repeat(n / 2) + "rm -rf build", Allow, Allow),
        ("cd -", |n| "cd src; cd -; ".repeat(n / 2) + "touch x", Allow, Allow),
        ("escapes piped", |n| "echo '\\x41' | ".repeat(n) + "cat", Allow, Allow),
        ("escapes piped to a shell", |n| "echo '\\x41' | ".repeat(n) + "sh", Ask, Ask),
        ("pipeline stages", |n| "cat a | ".repeat(n) + "wc -l", Allow, Allow),
        ("pipeline into a shell", |n| "cat a | ".repeat(n) + "sh", Ask, Ask),
        ("redirections inside", |n| "echo x ".to_string() + &"> a ".repeat(n), Allow, Allow),
        ("redirections outside", |n| "echo x ".to_string() + &"> /etc/a ".repeat(n), Ask, Ask),
        ("redirections to a secret", |n| "echo x ".to_string() + &"> ~/.ssh/a ".repeat(n), Deny, Deny),
        ("redirections after cd", |n| "cd src; echo x ".to_string() + &"> a ".repeat(n), Allow, Allow),
        ("export assignments", |n| "export ".to_string() + &numbered(n, |i| format!("v{i}=x ")), Allow, Allow),
        ("export commands, then IFS", |n| numbered(n, |i| format!("export v{i}=x; ")) + "export IFS=/", Ask, Ask),
        ("paths outside", |n| "cat ".to_string() + &numbered(n, |i| format!("/etc/f{i} ")), Allow, Allow),
        ("writes outside", |n| "touch ".to_string() + &numbered(n, |i| format!("/etc/f{i} ")), Ask, Ask),
        ("sed -e values", |n| "sed -i s/a/b/ ".to_string() + &"-e x ".repeat(n) + "f", Allow, Allow),
        ("flags naming files", |n| "cc ".to_string() + &"--a=b ".repeat(n), Allow, Allow),
    ];
    each_keeps_its_decision(shapes);
}

/// Long lines of globs outside the workspace, each judged whole (auto mode) at 20,000 repeats.
/// Each globbed path outside compiled a matcher of its own to see whether it could reach a
/// secret, about 1 ms in a debug build: `cat /etc/*/x; ` said 20,000 times took about 22 s.
/// Each must end within a generous hang detector and decide as the same shape said 20 times
/// does; a line of more distinct globs than its budget pays matchers for asks (`too-large`), and
/// a glob that reaches a secret is still found — ask and deny never become allow.
#[test]
fn long_lines_of_globs_end_and_keep_their_decision() {
    use Decision::{Allow, Ask, Deny};
    let shapes: Vec<(&str, Shape, Decision, Decision)> = vec![
        ("one glob outside", |n| "cat /etc/*/x; ".repeat(n), Allow, Allow),
        ("distinct globs outside", |n| numbered(n, |i| format!("cat /etc/*/x{i}; ")), Allow, Allow),
        ("one glob by the secrets", |n| "cat ~/*1*; ".repeat(n), Allow, Allow),
        ("distinct globs by the secrets", |n| numbered(n, |i| format!("cat ~/*{i}*; ")), Allow, Ask),
        ("one glob inside", |n| "cat src/*.rs; ".repeat(n), Allow, Allow),
        ("distinct globs inside", |n| numbered(n, |i| format!("cat src/*{i}.rs; ")), Allow, Allow),
        ("one glob reaching a secret", |n| "cat ~/.ss*/id_*; ".repeat(n), Deny, Deny),
        ("a secret after one glob", |n| "cat /etc/*/x; ".repeat(n) + "cat ~/.ss*/id_*", Deny, Deny),
        (
            "a secret after distinct globs",
            |n| numbered(n, |i| format!("cat /etc/*/x{i}; ")) + "cat ~/.ss*/id_*",
            Deny,
            Deny,
        ),
        (
            "a secret after distinct globs by the secrets",
            |n| numbered(n, |i| format!("cat ~/*{i}*; ")) + "cat ~/.ss*/id_*",
            Deny,
            Ask,
        ),
        ("writes through a glob to a secret", |n| "cp x /etc/*/x; ".repeat(n) + "cp k ~/.ss?/", Deny, Deny),
    ];
    each_keeps_its_decision(shapes);
}
