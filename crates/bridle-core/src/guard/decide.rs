//! The decision table of DESIGN §6 step 5: the mode, the tool's kind, the findings and the
//! user's rule give one decision and what decided it.
//!
//! Rule: the strictest entry wins. A deny rule or a disabled tool denies before this table is
//! consulted. An allow rule turns the mode's `ask`, and the `ask` of a low or medium finding,
//! into `allow`; it never lifts a high or critical finding, and never a `deny`. An ask rule
//! makes anything short of `deny` ask. The source is `rule` when the rule changed the outcome,
//! `guard` when a finding made it stricter than the mode alone, and `mode` otherwise.
//!
//! A finding the call's sandbox contains (`Finding::contained`) does not ask in `auto-edit`,
//! `auto` and `bypass`; it is recorded and shown. Critical findings deny whatever holds them.
//!
//! `plan`, `auto` and `bypass` allow `bash` only because the OS sandbox contains it (DESIGN
//! §5.1): a shell call that would run unconfined (no sandbox works here, or the call escalates)
//! is denied in `plan` and asks in `auto` and `bypass`. The user's own `[sandbox] enabled =
//! false` is the one unconfined run `bypass` takes without a question (the guard passes it as
//! confined there).

use bridle_protocol::{Decision, DecisionSource, Finding, Mode, Severity};

use crate::tools::ToolKind;

/// What a matching user rule asks of the table (deny never gets here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleEffect {
    /// No rule matched.
    None,
    /// An allow rule covers the call.
    Allow,
    /// An ask rule matched.
    Ask,
}

fn strictness(d: Decision) -> u8 {
    match d {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
    }
}

fn strictest(a: Decision, b: Decision) -> Decision {
    if strictness(b) > strictness(a) {
        b
    } else {
        a
    }
}

/// The mode's column for the tool's kind; `confined` says whether a shell call would run
/// inside the OS sandbox.
pub(crate) fn for_kind(mode: Mode, kind: ToolKind, confined: bool) -> Decision {
    use Decision::{Allow, Ask, Deny};
    match (mode, kind) {
        (_, ToolKind::Read) => Allow,
        (Mode::ReadOnly, _) => Deny,
        (Mode::Plan, ToolKind::Write) => Deny,
        (Mode::Plan, ToolKind::Exec) if confined => Allow,
        (Mode::Plan, ToolKind::Exec) => Deny,
        (Mode::Plan, ToolKind::Mcp) => Ask,
        (Mode::Ask, _) => Ask,
        (Mode::Review, ToolKind::Exec) if confined => Allow,
        (Mode::Review, _) => Ask,
        (Mode::Auto | Mode::Bypass, ToolKind::Exec) if !confined => Ask,
        (Mode::AutoEdit, ToolKind::Write) => Allow,
        (Mode::AutoEdit, _) => Ask,
        (Mode::Auto | Mode::Bypass, _) => Allow,
    }
}

/// The mode's column for a finding's severity; `None` where the table says "—".
pub(crate) fn for_severity(mode: Mode, severity: Severity) -> Option<Decision> {
    use Decision::{Allow, Ask, Deny};
    Some(match (mode, severity) {
        (_, Severity::Critical) => Deny,
        (Mode::ReadOnly, Severity::Low) => return None,
        (Mode::ReadOnly, _) => Deny,
        (Mode::Ask | Mode::Review, _) => Ask,
        (Mode::Plan | Mode::AutoEdit | Mode::Auto, Severity::Low) => Allow,
        (Mode::Plan, _) => Ask,
        (Mode::AutoEdit | Mode::Auto, _) => Ask,
        (Mode::Bypass, _) => Allow,
    })
}

/// The decision for a call of `kind` in `mode` with `findings`, given what the rules said and
/// whether a shell call would run confined.
pub(crate) fn decide(
    mode: Mode,
    kind: ToolKind,
    findings: &[Finding],
    rule: RuleEffect,
    confined: bool,
) -> (Decision, DecisionSource) {
    let lift = |d: Decision| if rule == RuleEffect::Allow && d == Decision::Ask { Decision::Allow } else { d };
    let by_mode = for_kind(mode, kind, confined);
    let mut by_findings = Decision::Allow;
    let mut by_findings_lifted = Decision::Allow;
    for f in findings {
        // What the call's sandbox holds is recorded and shown, not asked about, where the mode
        // trusts the sandbox (a critical finding is never lifted).
        if f.contained && f.severity < Severity::Critical && matches!(mode, Mode::AutoEdit | Mode::Auto | Mode::Bypass)
        {
            continue;
        }
        let Some(d) = for_severity(mode, f.severity) else { continue };
        by_findings = strictest(by_findings, d);
        let lifted = if f.severity <= Severity::Medium { lift(d) } else { d };
        by_findings_lifted = strictest(by_findings_lifted, lifted);
    }
    let by_mode_lifted = lift(by_mode);
    let without_rule = strictest(by_mode, by_findings);
    let mut decision = strictest(by_mode_lifted, by_findings_lifted);
    if rule == RuleEffect::Ask {
        decision = strictest(decision, Decision::Ask);
    }
    let source = if decision != without_rule {
        DecisionSource::Rule
    } else if strictness(decision) > strictness(by_mode_lifted) {
        DecisionSource::Guard
    } else {
        DecisionSource::Mode
    };
    (decision, source)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;
    use Decision::{Allow as A, Ask as Q, Deny as D};

    const MODES: [Mode; 7] = Mode::ALL;

    fn decide(mode: Mode, kind: ToolKind, findings: &[Finding], rule: RuleEffect) -> (Decision, DecisionSource) {
        super::decide(mode, kind, findings, rule, true)
    }
    const KINDS: [ToolKind; 4] = [ToolKind::Read, ToolKind::Write, ToolKind::Exec, ToolKind::Mcp];

    fn finding(severity: Severity) -> Finding {
        Finding { guardian: "test".into(), rule: "r".into(), severity, message: String::new(), contained: false }
    }

    /// DESIGN §6's table, row by row: read, write, bash, mcp | low, medium, high, critical
    /// (`None` is the table's "—").
    fn table(mode: Mode) -> ([Decision; 4], [Option<Decision>; 4]) {
        match mode {
            Mode::ReadOnly => ([A, D, D, D], [None, Some(D), Some(D), Some(D)]),
            Mode::Plan => ([A, D, A, Q], [Some(A), Some(Q), Some(Q), Some(D)]),
            Mode::Ask => ([A, Q, Q, Q], [Some(Q), Some(Q), Some(Q), Some(D)]),
            Mode::Review => ([A, Q, A, Q], [Some(Q), Some(Q), Some(Q), Some(D)]),
            Mode::AutoEdit => ([A, A, Q, Q], [Some(A), Some(Q), Some(Q), Some(D)]),
            Mode::Auto => ([A, A, A, A], [Some(A), Some(Q), Some(Q), Some(D)]),
            Mode::Bypass => ([A, A, A, A], [Some(A), Some(A), Some(A), Some(D)]),
        }
    }

    const SEVERITIES: [Severity; 4] = [Severity::Low, Severity::Medium, Severity::High, Severity::Critical];

    #[test]
    fn every_mode_kind_and_severity_follows_the_table() {
        for mode in MODES {
            let (kinds, severities) = table(mode);
            for (k, kind) in KINDS.into_iter().enumerate() {
                assert_eq!(
                    decide(mode, kind, &[], RuleEffect::None),
                    (kinds[k], DecisionSource::Mode),
                    "{mode:?} {kind:?}"
                );
                for (s, severity) in SEVERITIES.into_iter().enumerate() {
                    let expected = strictest(kinds[k], severities[s].unwrap_or(A));
                    let (decision, source) = decide(mode, kind, &[finding(severity)], RuleEffect::None);
                    assert_eq!(decision, expected, "{mode:?} {kind:?} {severity:?}");
                    let want_source = if strictness(expected) > strictness(kinds[k]) {
                        DecisionSource::Guard
                    } else {
                        DecisionSource::Mode
                    };
                    assert_eq!(source, want_source, "{mode:?} {kind:?} {severity:?}");
                }
            }
        }
    }

    #[test]
    fn the_strictest_finding_wins() {
        let findings = [finding(Severity::Low), finding(Severity::Critical), finding(Severity::Medium)];
        assert_eq!(decide(Mode::Bypass, ToolKind::Exec, &findings, RuleEffect::None), (D, DecisionSource::Guard));
        let findings = [finding(Severity::Low), finding(Severity::High)];
        assert_eq!(decide(Mode::Auto, ToolKind::Exec, &findings, RuleEffect::None), (Q, DecisionSource::Guard));
    }

    #[test]
    fn a_read_tool_with_a_low_finding_stays_allowed_in_read_only() {
        assert_eq!(
            decide(Mode::ReadOnly, ToolKind::Read, &[finding(Severity::Low)], RuleEffect::None),
            (A, DecisionSource::Mode)
        );
    }

    #[test]
    fn an_allow_rule_lifts_the_modes_ask_and_medium_findings_but_never_high_or_critical() {
        for mode in MODES {
            for kind in KINDS {
                let (base, _) = decide(mode, kind, &[], RuleEffect::None);
                let (lifted, source) = decide(mode, kind, &[], RuleEffect::Allow);
                match base {
                    Q => assert_eq!((lifted, source), (A, DecisionSource::Rule), "{mode:?} {kind:?}"),
                    other => assert_eq!((lifted, source), (other, DecisionSource::Mode), "{mode:?} {kind:?}"),
                }
                for severity in [Severity::Low, Severity::Medium] {
                    let (d, _) = decide(mode, kind, &[finding(severity)], RuleEffect::Allow);
                    let (without, _) = decide(mode, kind, &[finding(severity)], RuleEffect::None);
                    let expected = if without == Q { A } else { without };
                    assert_eq!(d, expected, "{mode:?} {kind:?} {severity:?}");
                }
                for severity in [Severity::High, Severity::Critical] {
                    let with = decide(mode, kind, &[finding(severity)], RuleEffect::Allow).0;
                    let without = decide(mode, kind, &[finding(severity)], RuleEffect::None).0;
                    assert_eq!(with, without, "{mode:?} {kind:?} {severity:?}");
                }
            }
        }
        assert_eq!(
            decide(Mode::Auto, ToolKind::Exec, &[finding(Severity::High)], RuleEffect::Allow),
            (Q, DecisionSource::Guard)
        );
        assert_eq!(
            decide(Mode::Auto, ToolKind::Exec, &[finding(Severity::Medium)], RuleEffect::Allow),
            (A, DecisionSource::Rule)
        );
    }

    #[test]
    fn an_ask_rule_asks_even_in_bypass_but_never_softens_a_deny() {
        assert_eq!(decide(Mode::Bypass, ToolKind::Exec, &[], RuleEffect::Ask), (Q, DecisionSource::Rule));
        assert_eq!(decide(Mode::Ask, ToolKind::Exec, &[], RuleEffect::Ask), (Q, DecisionSource::Mode));
        assert_eq!(decide(Mode::ReadOnly, ToolKind::Exec, &[], RuleEffect::Ask), (D, DecisionSource::Mode));
        assert_eq!(
            decide(Mode::Auto, ToolKind::Exec, &[finding(Severity::Critical)], RuleEffect::Ask),
            (D, DecisionSource::Guard)
        );
    }

    #[test]
    fn a_contained_finding_does_not_ask_where_the_mode_trusts_the_sandbox_but_a_critical_one_denies() {
        let contained = |severity| Finding { contained: true, ..finding(severity) };
        for severity in [Severity::Medium, Severity::High] {
            for mode in [Mode::AutoEdit, Mode::Auto, Mode::Bypass] {
                let kind = if mode == Mode::AutoEdit { ToolKind::Write } else { ToolKind::Exec };
                assert_eq!(decide(mode, kind, &[contained(severity)], RuleEffect::None).0, A, "{mode:?} {severity:?}");
            }
            for mode in [Mode::Ask, Mode::Review, Mode::Plan] {
                assert_eq!(decide(mode, ToolKind::Read, &[contained(severity)], RuleEffect::None).0, Q, "{mode:?}");
            }
        }
        assert_eq!(decide(Mode::Auto, ToolKind::Exec, &[contained(Severity::Critical)], RuleEffect::None).0, D);
    }

    #[test]
    fn an_unconfined_shell_call_is_denied_in_plan_and_asks_in_auto() {
        let unconfined = |mode| super::decide(mode, ToolKind::Exec, &[], RuleEffect::None, false);
        assert_eq!(unconfined(Mode::Plan), (D, DecisionSource::Mode));
        assert_eq!(unconfined(Mode::Auto), (Q, DecisionSource::Mode));
        // An escalation is the one question `bypass` asks.
        assert_eq!(unconfined(Mode::Bypass), (Q, DecisionSource::Mode));
        assert_eq!(unconfined(Mode::AutoEdit), (Q, DecisionSource::Mode));
        assert_eq!(unconfined(Mode::Review), (Q, DecisionSource::Mode));
        // The user's allow rule still lifts the ask of an unsandboxed command in auto.
        assert_eq!(super::decide(Mode::Auto, ToolKind::Exec, &[], RuleEffect::Allow, false), (A, DecisionSource::Rule));
        // Confinement only concerns shell calls.
        assert_eq!(super::decide(Mode::Plan, ToolKind::Read, &[], RuleEffect::None, false), (A, DecisionSource::Mode));
    }
}
