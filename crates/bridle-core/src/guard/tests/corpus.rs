//! The guardian corpora: every dangerous command is not allowed in `auto` mode, every everyday
//! command is, and every command whose effect is critical is denied in every mode, `bypass`
//! included. Run with `--nocapture` to see the counts.

use bridle_protocol::{Decision, Mode};

use super::world;

pub(super) const DANGEROUS: &str = include_str!("../corpus/dangerous.txt");
pub(super) const DANGEROUS_MULTILINE: &str = include_str!("../corpus/dangerous-multiline.txt");
pub(super) const EVERYDAY: &str = include_str!("../corpus/everyday.txt");
pub(super) const EVERYDAY_MULTILINE: &str = include_str!("../corpus/everyday-multiline.txt");
pub(super) const DANGEROUS_UNKNOWN: &str = include_str!("../corpus/dangerous-unknown.txt");
pub(super) const EVERYDAY_UNKNOWN: &str = include_str!("../corpus/everyday-unknown.txt");
pub(super) const CRITICAL: &str = include_str!("../corpus/critical.txt");

/// One command per line; blank lines and `#` comment lines skipped.
pub(super) fn lines(text: &str) -> Vec<String> {
    text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(String::from).collect()
}

/// Commands separated by `%%` lines; leading `#` comment lines skipped.
pub(super) fn entries(text: &str) -> Vec<String> {
    let body: Vec<&str> = text.lines().skip_while(|l| l.starts_with('#')).collect();
    body.join("\n").split("\n%%\n").map(|e| e.trim_end_matches('\n').to_string()).filter(|e| !e.is_empty()).collect()
}

/// The whole hostile side: one command per entry.
pub(super) fn dangerous() -> Vec<String> {
    [DANGEROUS, DANGEROUS_UNKNOWN].into_iter().flat_map(lines).chain(entries(DANGEROUS_MULTILINE)).collect()
}

/// The whole everyday side.
pub(super) fn everyday() -> Vec<String> {
    [EVERYDAY, EVERYDAY_UNKNOWN].into_iter().flat_map(lines).chain(entries(EVERYDAY_MULTILINE)).collect()
}

/// How many of `commands` each decision got, and the ones that got `worst_allowed` or laxer.
fn count(
    w: &super::World,
    mode: Mode,
    commands: &[String],
    failing: impl Fn(Decision) -> bool,
) -> ([usize; 3], Vec<String>) {
    let guard = w.guard(mode);
    let mut counts = [0; 3];
    let mut failed = Vec::new();
    for command in commands {
        let v = w.bash(&guard, command);
        counts[match v.decision {
            Decision::Deny => 0,
            Decision::Ask => 1,
            Decision::Allow => 2,
        }] += 1;
        if failing(v.decision) {
            let why: Vec<String> = v.findings.iter().map(|f| format!("{}/{}", f.guardian, f.rule)).collect();
            failed.push(format!("{command:?} -> {:?} {why:?}", v.decision));
        }
    }
    (counts, failed)
}

#[test]
fn dangerous_commands_are_never_allowed_and_everyday_ones_always_are() {
    let w = world();
    let (dangerous, everyday) = (dangerous(), everyday());
    let (auto, missed) = count(&w, Mode::Auto, &dangerous, |d| d == Decision::Allow);
    let (bypass, _) = count(&w, Mode::Bypass, &dangerous, |_| false);
    let (daily, nags) = count(&w, Mode::Auto, &everyday, |d| d != Decision::Allow);
    println!(
        "dangerous: {} (auto: {} denied, {} asked, {} allowed; bypass: {} denied, {} asked, {} allowed); \
         everyday: {} ({} allowed, {} nagged)",
        dangerous.len(),
        auto[0],
        auto[1],
        auto[2],
        bypass[0],
        bypass[1],
        bypass[2],
        everyday.len(),
        daily[2],
        nags.len()
    );
    assert!(dangerous.len() >= 300 && everyday.len() >= 200);
    assert!(
        missed.is_empty() && nags.is_empty(),
        "dangerous, allowed in auto mode:\n{}\n\neveryday, not allowed in auto mode:\n{}",
        missed.join("\n"),
        nags.join("\n")
    );
}

/// What a command does, not how it is spelled: a critical effect is denied in every mode.
#[test]
fn critical_effects_are_denied_however_spelled_even_in_bypass() {
    let w = world();
    let critical = lines(CRITICAL);
    let (auto, in_auto) = count(&w, Mode::Auto, &critical, |d| d != Decision::Deny);
    let (bypass, in_bypass) = count(&w, Mode::Bypass, &critical, |d| d != Decision::Deny);
    println!(
        "critical: {} (auto: {} denied, {} asked, {} allowed; bypass: {} denied, {} asked, {} allowed)",
        critical.len(),
        auto[0],
        auto[1],
        auto[2],
        bypass[0],
        bypass[1],
        bypass[2]
    );
    assert!(critical.len() >= 100);
    assert!(in_auto.is_empty(), "not denied in auto mode:\n{}", in_auto.join("\n"));
    assert!(in_bypass.is_empty(), "not denied in bypass mode:\n{}", in_bypass.join("\n"));
}

/// Every corpus line with its decision and findings, for reviewing why each is caught:
/// `cargo test -p bridle-core --lib corpus_report -- --ignored --nocapture`.
#[test]
#[ignore = "a report, not a check"]
fn corpus_report() {
    let w = world();
    let guard = w.guard(Mode::Auto);
    for command in dangerous().into_iter().chain(lines(CRITICAL)).chain(everyday()) {
        let v = w.bash(&guard, &command);
        let why: Vec<String> = v.findings.iter().map(|f| format!("{}/{}", f.guardian, f.rule)).collect();
        println!("{:<5} {:<60} {}", format!("{:?}", v.decision), format!("{command:?}"), why.join(" "));
    }
}
