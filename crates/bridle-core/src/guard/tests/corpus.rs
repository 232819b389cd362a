//! The guardian corpora: every dangerous command is not allowed in `auto` mode, every everyday
//! command is. Run with `--nocapture` to see the counts and the false-positive rate.

use bridle_protocol::{Decision, Mode};

use super::world;

pub(super) const DANGEROUS: &str = include_str!("../corpus/dangerous.txt");
pub(super) const DANGEROUS_MULTILINE: &str = include_str!("../corpus/dangerous-multiline.txt");
pub(super) const EVERYDAY: &str = include_str!("../corpus/everyday.txt");
pub(super) const EVERYDAY_MULTILINE: &str = include_str!("../corpus/everyday-multiline.txt");

/// One command per line; blank lines and `#` comment lines skipped.
pub(super) fn lines(text: &str) -> Vec<String> {
    text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(String::from).collect()
}

/// Commands separated by `%%` lines; leading `#` comment lines skipped.
pub(super) fn entries(text: &str) -> Vec<String> {
    let body: Vec<&str> = text.lines().skip_while(|l| l.starts_with('#')).collect();
    body.join("\n").split("\n%%\n").map(|e| e.trim_end_matches('\n').to_string()).filter(|e| !e.is_empty()).collect()
}

#[test]
fn dangerous_commands_are_never_allowed_and_everyday_ones_always_are() {
    let w = world();
    let guard = w.guard(Mode::Auto);
    let dangerous: Vec<String> = lines(DANGEROUS).into_iter().chain(entries(DANGEROUS_MULTILINE)).collect();
    let everyday: Vec<String> = lines(EVERYDAY).into_iter().chain(entries(EVERYDAY_MULTILINE)).collect();
    let mut missed = Vec::new();
    let mut denied = 0;
    for command in &dangerous {
        let v = w.bash(&guard, command);
        match v.decision {
            Decision::Allow => missed.push(command.clone()),
            Decision::Deny => denied += 1,
            Decision::Ask => {}
        }
    }
    let mut false_positives = Vec::new();
    for command in &everyday {
        let v = w.bash(&guard, command);
        if v.decision != Decision::Allow {
            let why: Vec<String> =
                v.findings.iter().map(|f| format!("{}/{}: {}", f.guardian, f.rule, f.message)).collect();
            false_positives.push(format!("{command:?} -> {:?} {why:?}", v.decision));
        }
    }
    let rate = 100.0 * false_positives.len() as f64 / everyday.len() as f64;
    println!(
        "corpus: {} dangerous ({} denied, {} asked, {} missed); {} everyday ({} false positives, {rate:.1}%)",
        dangerous.len(),
        denied,
        dangerous.len() - denied - missed.len(),
        missed.len(),
        everyday.len(),
        false_positives.len()
    );
    assert!(dangerous.len() >= 150 && everyday.len() >= 150);
    assert!(missed.is_empty(), "allowed in auto mode:\n{}", missed.join("\n"));
    assert!(false_positives.is_empty(), "not allowed in auto mode:\n{}", false_positives.join("\n"));
}

/// Every corpus line with its decision and findings, for reviewing why each is caught:
/// `cargo test -p bridle-core --lib corpus_report -- --ignored --nocapture`.
#[test]
#[ignore = "a report, not a check"]
fn corpus_report() {
    let w = world();
    let guard = w.guard(Mode::Auto);
    let all = [DANGEROUS, EVERYDAY]
        .into_iter()
        .flat_map(lines)
        .chain([DANGEROUS_MULTILINE, EVERYDAY_MULTILINE].into_iter().flat_map(entries));
    for command in all {
        let v = w.bash(&guard, &command);
        let why: Vec<String> = v.findings.iter().map(|f| format!("{}/{}", f.guardian, f.rule)).collect();
        println!("{:<5} {:<60} {}", format!("{:?}", v.decision), format!("{command:?}"), why.join(" "));
    }
}
