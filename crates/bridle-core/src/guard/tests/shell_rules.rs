//! The shipped shell rule file held to its word (every example matches, no counter-example
//! does), a broken file refused, its regexes compiled only when a command reaches them, and the
//! shell-rule guardian seeing through disguised commands but not into quoted text.
#![allow(clippy::unwrap_used)]

use bridle_protocol::{Decision, Mode};
use pretty_assertions::assert_eq;

use super::super::{guardians, places, validate_builtin_rules, BUILTIN_RULES};
use super::{rules_of, world};

#[test]
fn the_shipped_rule_file_parses_and_every_example_holds() {
    let count = validate_builtin_rules().unwrap();
    assert!(count >= 60, "{count} rules");
    let w = world();
    let guard = w.guard(Mode::Auto);
    let rules = guardians::shell_rules::builtin().unwrap();
    let mut checked = 0;
    for rule in &rules.rules {
        assert!(!rule.family.is_empty());
        assert!(!rule.examples.is_empty(), "rule `{}` has no example", rule.id);
        for example in &rule.examples {
            let v = w.bash(&guard, example);
            assert!(
                v.findings.iter().any(|f| f.guardian == "shell-rule" && f.rule == rule.id),
                "rule `{}` does not match its example `{example}`: {:?}",
                rule.id,
                rules_of(&v)
            );
            checked += 1;
        }
        for counter in &rule.counter_examples {
            let v = w.bash(&guard, counter);
            assert!(
                !v.findings.iter().any(|f| f.rule == rule.id),
                "rule `{}` matches its counter-example `{counter}`",
                rule.id
            );
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn a_broken_rule_file_is_an_error_naming_the_rule() {
    let bad =
        "version = 1\n[[rule]]\nid = \"x\"\nfamily = \"f\"\nseverity = \"high\"\nmessage = \"m\"\nargs = [\"(\"]\n";
    let err = guardians::shell_rules::ShellRules::parse(bad).unwrap_err();
    assert!(err.to_string().contains("`x`"), "{err}");
    let unknown =
        "version = 1\n[[rule]]\nid = \"x\"\nfamily = \"f\"\nseverity = \"high\"\nmessage = \"m\"\nprogram = [\"rm\"]\n";
    assert!(guardians::shell_rules::ShellRules::parse(unknown).is_err(), "unknown keys are refused");
    let everything = "version = 1\n[[rule]]\nid = \"x\"\nfamily = \"f\"\nseverity = \"high\"\nmessage = \"m\"\n";
    assert!(guardians::shell_rules::ShellRules::parse(everything).is_err(), "a rule matching everything");
}

#[test]
fn a_rules_regexes_are_compiled_when_a_command_reaches_them_and_one_that_cannot_be_fires() {
    let rules = guardians::shell_rules::ShellRules::parse(BUILTIN_RULES).unwrap();
    assert_eq!(rules.compiled(), 0, "nothing is compiled when the file is read");
    let view = |command: &str| guardians::ShellView::new(command, &places::Places::default());
    assert!(!rules.matches(&view("git push --force origin main")).is_empty());
    let compiled = rules.compiled();
    assert!(compiled > 0 && compiled < rules.rules.len(), "only the sets a command reached: {compiled}");
    // Past the syntax check, a set over the regex engine's size limit cannot be compiled: the
    // rule fires rather than let the command through unchecked.
    let huge = "version = 1\n[[rule]]\nid = \"x\"\nfamily = \"f\"\nseverity = \"high\"\nmessage = \"m\"\n\
        programs = [\"echo\"]\nargs = [\"\\\\w{1000}{1000}\"]\n";
    let rules = guardians::shell_rules::ShellRules::parse(huge).unwrap();
    let fired: Vec<&str> = rules.matches(&view("echo hello")).iter().map(|(r, _)| r.id.as_str()).collect();
    assert_eq!(fired, ["x"]);
}

#[test]
fn the_shell_rule_guardian_sees_through_disguises_but_not_into_text() {
    let w = world();
    let g = w.guard(Mode::Bypass);
    for line in [
        "rm -rf /",
        "/bin/rm -rf ~",
        "\\rm -rf /",
        "command rm -rf /",
        "env rm -rf /",
        "$(which rm) -rf /",
        "\"rm\" -rf /",
        "r''m -rf /",
        "sudo -u root rm -rf /",
        "xargs rm -rf / < /dev/null",
        "bash -c \"rm -rf $HOME\"",
        "find / -maxdepth 0 -exec rm -rf {} +",
        "cd ~ && rm -rf .",
        ":(){ :|:& };:",
        "dd if=/dev/zero of=/dev/sda",
        "mkfs.ext4 /dev/sdb1",
        "echo 'rm -rf ~' | bash",
        "bash <<'EOF'\nrm -rf /\nEOF",
    ] {
        assert_eq!(w.bash(&g, line).decision, Decision::Deny, "{line:?}: {:?}", rules_of(&w.bash(&g, line)));
    }
    for line in ["echo \"rm -rf /\"", "git commit -m 'rm -rf / is bad'", "grep -rn 'mkfs' docs", "rm -rf target"] {
        assert_eq!(w.bash(&g, line).decision, Decision::Allow, "{line:?}: {:?}", rules_of(&w.bash(&g, line)));
    }
}
