//! Held: what a captured command changed (DESIGN §4.3), settled by the call's owner after the
//! command ended and outside its timeout — landed at once, or after a person approved it as a
//! diff, or discarded.
//!
//! Rules: in `review` every held change asks; in the other modes a finding on what changed
//! decides as it would for a file tool's write (a config file is a medium finding, git's
//! code-running files a high one), and nothing else asks, since the command was approved
//! already; where nobody can be asked (outside a session, approvals deferred to another
//! process) a change that would ask is discarded and the model told; a denied change is
//! discarded and the model is told which files; a landed one is the call's [`FileChange`]s,
//! shown and undone like a file tool's.
//!
//! [`FileChange`]: crate::changes::FileChange

use bridle_protocol::{Decision, Finding, Mode, RefusedPath, Severity, ShellEffects, ToolDetails};

use super::stream::{CallStream, Question, Settled};
use crate::changes::{CommitScope, Held, Landing, Step};
use crate::guard::severity_decision;
use crate::tools::{ToolContext, ToolOutput};

/// Settles `held` for the call whose output is `out`, under `mode`, asking through the call's
/// `stream`.
pub(super) async fn settle(
    held: Held,
    out: &mut ToolOutput,
    command: &str,
    mode: Mode,
    ctx: &ToolContext,
    stream: &CallStream,
) {
    let landing = held.landing.clone();
    let files = landing.held_paths();
    if files.is_empty() {
        return;
    }
    let findings = findings(&landing);
    let asks = mode == Mode::Review
        || findings.iter().any(|f| severity_decision(mode, f.severity).is_some_and(|d| d != Decision::Allow));
    let answer = if !asks {
        Ok(())
    } else {
        let question = Question::changes(&ctx.call_id, command, files.clone(), findings, landing.diff());
        match stream.ask(question).await {
            Settled::Approved { .. } => Ok(()),
            Settled::Refused(refusal) => Err(refusal.to_string()),
        }
    };
    let effects = effects_of(&mut out.details);
    match answer {
        Ok(()) => match landing.land_held(&CommitScope::from(ctx)).await {
            Ok(landed) => {
                let listed: Vec<String> = landed.changes.iter().map(|c| c.path.clone()).collect();
                if !listed.is_empty() {
                    out.output.push_str(&format!("\n[changed: {}]", listed.join(", ")));
                }
                for (path, why) in &landed.refused {
                    out.output.push_str(&format!("\n[not applied: {path}: {why}]"));
                }
                if let Some(effects) = effects {
                    effects.changes = landed.changes.iter().map(crate::changes::FileChange::landed).collect();
                    let refused =
                        landed.refused.iter().map(|(path, why)| RefusedPath { path: path.clone(), why: why.clone() });
                    effects.refused.extend(refused);
                }
                out.changes = landed.changes;
            }
            Err(e) => {
                out.output.push_str(&format!("\n[its changes were not applied: {e}]"));
                if let Some(effects) = effects {
                    effects.discarded = files;
                    effects.error = Some(e.to_string());
                }
            }
        },
        Err(why) => {
            out.output.push_str(&format!(
                "\n[its changes to {} were discarded ({why}); the workspace holds what it held before the command]",
                files.join(", ")
            ));
            if let Some(effects) = effects {
                effects.discarded = files;
                effects.discarded_because = Some(why);
            }
        }
    }
    drop(held);
}

/// The effects in a command's details (a held change only comes from a captured command, whose
/// details always carry them).
fn effects_of(details: &mut Option<ToolDetails>) -> Option<&mut ShellEffects> {
    match details {
        Some(ToolDetails::Shell(shell)) => Some(shell.effects.get_or_insert_with(ShellEffects::default)),
        _ => None,
    }
}

/// What a person approving is shown: a medium finding for the config guardian's files among the
/// changes (as for a file tool's write), a high one for git's code-running files.
fn findings(landing: &Landing) -> Vec<Finding> {
    let mut findings = Vec::new();
    let config: Vec<String> =
        landing.steps.iter().map(Step::shown).filter(|p| crate::guard::is_exec_config(p)).collect();
    if !config.is_empty() {
        findings.push(Finding {
            guardian: "config".into(),
            rule: "exec-config-write".into(),
            severity: Severity::Medium,
            message: format!("the command changed files that make code run later: {}", config.join(", ")),
            contained: false,
        });
    }
    if !landing.ignored_code.is_empty() {
        let paths: Vec<String> = landing.ignored_code.iter().map(Step::shown).collect();
        // Build output is expected to hold such files (an install writes `node_modules/.bin/`):
        // recorded and shown (and asked in `review` and `ask`), checkpointed, not asked in `auto`.
        findings.push(Finding {
            guardian: "config".into(),
            rule: "ignored-runs-code".into(),
            severity: Severity::Low,
            message: format!("the command wrote files that run code in ignored paths: {}", paths.join(", ")),
            contained: false,
        });
    }
    if !landing.git_config.is_empty() {
        let paths: Vec<String> = landing.git_config.iter().map(Step::shown).collect();
        findings.push(Finding {
            guardian: "config".into(),
            rule: "git-runs-code".into(),
            severity: Severity::High,
            message: format!("the command changed git files that make git run code: {}", paths.join(", ")),
            contained: false,
        });
    }
    findings
}
