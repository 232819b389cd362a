//! The user's hooks (DESIGN §13), in the shape Claude Code users already write:
//! `[[hooks.pre_tool_use]]` and `[[hooks.post_tool_use]]` with a `matcher` (a regex over the
//! tool's name), a `command` (run with `bash -c` in the workspace) and `timeout_secs`.
//!
//! A hook gets the call as JSON on stdin (`session_id`, `cwd`, `hook_event_name`, `tool_name`,
//! `tool_input`, and `tool_response` after the call). Before a call: exit 0 lets it go on — a
//! JSON `{"decision": "deny"|"ask"|"allow", "reason"}` on stdout decides instead; exit 2 blocks
//! it with stderr as the reason the model sees. After a call: exit 2 hands its stderr to the
//! model with the result.
//!
//! Rules: fail closed — a hook that cannot start, exits otherwise, prints an unknown decision or
//! runs past its timeout makes the call ask; a hook never loosens the guard — `allow` lifts only
//! an ask that the mode or a rule made, never a deny nor a guardian's finding; hooks run inside the
//! session's shell sandbox (a hook opts out with `sandbox = false`: a module a command planted in
//! the workspace is not run outside it), with the environment `bash` gets (an allow-list), in
//! their own process group, killed whole at the timeout. Every hook run is reported ([`HookRun`])
//! for the audit log.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use bridle_protocol::{Decision, DecisionSource, Finding, Severity};
use regex::Regex;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

// The hooks' config is plain data in `config`; it is named here too, beside what runs it.
use crate::config::{HookConfig, HooksConfig};
use crate::guard::Verdict;
use crate::shell_sandbox::{Launch, ShellSandbox};

/// Most bytes of a hook's stdout or stderr kept.
const OUTPUT_LIMIT: usize = 16 * 1024;

/// Why the hooks in the config cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid hook matcher `{matcher}`: {reason}")]
pub struct HookError {
    /// The matcher as written.
    pub matcher: String,
    /// What is wrong.
    pub reason: String,
}

#[derive(Debug, Clone)]
struct Hook {
    matcher: Option<Regex>,
    command: String,
    timeout: Duration,
    sandboxed: bool,
}

/// The compiled hooks of a session.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pre: Vec<Hook>,
    post: Vec<Hook>,
    /// The environment hooks run with (already reduced to the allow-list).
    env: Vec<(OsString, OsString)>,
    /// Where they run (none: no hook can run, and one that would asks).
    shell: Option<ShellSandbox>,
}

/// What one hook said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutcome {
    /// Exit 0 with no decision: no opinion.
    Continue,
    /// A decision (from JSON on stdout; exit 2 is a deny).
    Decided {
        /// The decision.
        decision: Decision,
        /// Why, for the model and the audit log.
        reason: String,
    },
    /// It failed or timed out: the call asks (fail closed).
    Failed(String),
}

/// One hook run, for the audit log (kind `guard_decision`, source `hook`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// `pre_tool_use` or `post_tool_use`.
    pub event: &'static str,
    /// The command.
    pub command: String,
    /// What it said.
    pub outcome: HookOutcome,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// How long it ran.
    pub duration: Duration,
}

impl HookRun {
    /// The decision this run stands for: deny, ask (also when it failed) or allow; `None` for
    /// no opinion.
    pub fn decision(&self) -> Option<Decision> {
        match &self.outcome {
            HookOutcome::Continue => None,
            HookOutcome::Decided { decision, .. } => Some(*decision),
            HookOutcome::Failed(_) => Some(Decision::Ask),
        }
    }

    /// Its reason, or what went wrong.
    pub fn reason(&self) -> Option<&str> {
        match &self.outcome {
            HookOutcome::Continue => None,
            HookOutcome::Decided { reason, .. } | HookOutcome::Failed(reason) => Some(reason),
        }
    }
}

/// What a call's hooks are told about it.
#[derive(Debug, Clone, Serialize)]
pub struct HookInput<'a> {
    /// The session.
    pub session_id: &'a str,
    /// The workspace folder (the hook's working directory).
    pub cwd: &'a Path,
    /// `PreToolUse` or `PostToolUse`.
    pub hook_event_name: &'static str,
    /// The tool.
    pub tool_name: &'a str,
    /// Its arguments.
    pub tool_input: &'a serde_json::Value,
    /// After the call: what the model receives (`output`, `isError`), with the typed `details` and
    /// an MCP server's `data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<serde_json::Value>,
}

fn compile(list: &[HookConfig]) -> Result<Vec<Hook>, HookError> {
    list.iter()
        .map(|h| {
            let pattern = h.matcher.trim();
            let matcher = match pattern {
                "" | "*" => None,
                p => Some(
                    Regex::new(&format!("^(?:{p})$"))
                        .map_err(|e| HookError { matcher: h.matcher.clone(), reason: e.to_string() })?,
                ),
            };
            Ok(Hook {
                matcher,
                command: h.command.clone(),
                timeout: Duration::from_secs(h.timeout_secs.max(1)),
                sandboxed: h.sandbox,
            })
        })
        .collect()
}

impl Hooks {
    /// The hooks of `config`, run in `shell` with `env` (the launch's environment, reduced here
    /// as for `bash`).
    pub fn new(
        config: &HooksConfig,
        shell: ShellSandbox,
        env: impl Iterator<Item = (OsString, OsString)>,
    ) -> Result<Hooks, HookError> {
        Ok(Hooks {
            pre: compile(&config.pre_tool_use)?,
            post: compile(&config.post_tool_use)?,
            env: shell.environment(env),
            shell: Some(shell),
        })
    }

    /// Whether there is no hook at all.
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty()
    }

    /// Runs the pre-call hooks matching the tool, in order, and folds what they said into
    /// the guard's `verdict`: the strictest wins; a deny stops the others.
    pub async fn before(&self, input: &HookInput<'_>, verdict: &mut Verdict) -> Vec<HookRun> {
        let mut runs = Vec::new();
        for hook in self.pre.iter().filter(|h| h.matches(input.tool_name)) {
            let run = self.run(hook, "pre_tool_use", input).await;
            apply(&run, verdict);
            let denied = verdict.decision == Decision::Deny;
            runs.push(run);
            if denied {
                break;
            }
        }
        runs
    }

    /// Runs the post-call hooks matching the tool; returns their runs and what hooks that
    /// exited 2 want the model to read.
    pub async fn after(&self, input: &HookInput<'_>) -> (Vec<HookRun>, Vec<String>) {
        let mut runs = Vec::new();
        let mut feedback = Vec::new();
        for hook in self.post.iter().filter(|h| h.matches(input.tool_name)) {
            let run = self.run(hook, "post_tool_use", input).await;
            if let HookOutcome::Decided { decision: Decision::Deny, reason } = &run.outcome {
                feedback.push(reason.clone());
            }
            runs.push(run);
        }
        (runs, feedback)
    }

    async fn run(&self, hook: &Hook, event: &'static str, input: &HookInput<'_>) -> HookRun {
        let started = Instant::now();
        let (outcome, exit_code) = match self.spawn(hook, input).await {
            Ok((code, stdout, stderr)) => (judge(code, &stdout, &stderr), code),
            Err(why) => (HookOutcome::Failed(why), None),
        };
        HookRun { event, command: hook.command.clone(), outcome, exit_code, duration: started.elapsed() }
    }

    /// Starts the hook, writes the input, waits at most its timeout (then kills its group).
    async fn spawn(&self, hook: &Hook, input: &HookInput<'_>) -> Result<(Option<i32>, String, String), String> {
        let body = serde_json::to_vec(input).map_err(|e| e.to_string())?;
        let shell =
            self.shell.as_ref().ok_or_else(|| format!("no sandbox is set up to run the hook `{}`", hook.command))?;
        let launch = Launch {
            script: &hook.command,
            cwd: input.cwd,
            env: self.env.clone(),
            stdin: Stdio::piped(),
            stdout: Stdio::piped(),
            stderr: Stdio::piped(),
            network: false,
            loopback: None,
            layer: None,
        };
        let spawned = shell
            .spawn(launch, !hook.sandboxed)
            .await
            .map_err(|e| format!("the hook `{}` could not start: {e}", hook.command))?;
        // Its cgroup is kept until it ends: dropped, it kills what the hook started.
        let (mut child, _cgroup) = (spawned.child, spawned.cgroup);
        let pid = child.id();
        let mut stdin = child.stdin.take();
        let waited = tokio::time::timeout(hook.timeout, async {
            if let Some(stdin) = stdin.as_mut() {
                // A hook that does not read its input is not an error.
                let _ = stdin.write_all(&body).await;
            }
            drop(stdin);
            child.wait_with_output().await
        })
        .await;
        match waited {
            Ok(Ok(out)) => Ok((out.status.code(), text(&out.stdout), text(&out.stderr))),
            Ok(Err(e)) => Err(format!("the hook `{}` failed: {e}", hook.command)),
            Err(_) => {
                crate::processes::kill_group(pid);
                Err(format!("the hook `{}` did not finish within {} s", hook.command, hook.timeout.as_secs()))
            }
        }
    }
}

impl Hook {
    fn matches(&self, tool: &str) -> bool {
        self.matcher.as_ref().is_none_or(|m| m.is_match(tool))
    }
}

fn text(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(OUTPUT_LIMIT)];
    String::from_utf8_lossy(cut).trim().to_string()
}

/// Exit 2: deny with stderr. Exit 0: a JSON decision on stdout, or no opinion. Else: failed.
fn judge(code: Option<i32>, stdout: &str, stderr: &str) -> HookOutcome {
    match code {
        Some(2) => HookOutcome::Decided {
            decision: Decision::Deny,
            reason: if stderr.is_empty() { "blocked by a hook".into() } else { stderr.to_string() },
        },
        Some(0) => {
            #[derive(Deserialize)]
            struct Said {
                decision: Option<String>,
                reason: Option<String>,
            }
            let Some(said) = stdout.trim_start().starts_with('{').then(|| serde_json::from_str::<Said>(stdout)) else {
                return HookOutcome::Continue;
            };
            let Ok(said) = said else {
                return HookOutcome::Failed(format!("the hook printed JSON that is not a decision: {stdout}"));
            };
            let reason = said.reason.unwrap_or_default();
            match said.decision.as_deref() {
                None => HookOutcome::Continue,
                Some("deny" | "block") => HookOutcome::Decided { decision: Decision::Deny, reason },
                Some("ask") => HookOutcome::Decided { decision: Decision::Ask, reason },
                Some("allow" | "approve") => HookOutcome::Decided { decision: Decision::Allow, reason },
                Some(other) => HookOutcome::Failed(format!("the hook answered an unknown decision `{other}`")),
            }
        }
        Some(code) => HookOutcome::Failed(format!("the hook exited with {code}: {stderr}")),
        None => HookOutcome::Failed("the hook was killed by a signal".into()),
    }
}

/// Folds one run into the verdict, never looser than the guard: deny always wins; ask (also a
/// failure) raises an allow; allow lifts only an ask the mode or a rule made, with no finding.
fn apply(run: &HookRun, verdict: &mut Verdict) {
    let Some(decision) = run.decision() else { return };
    let reason = run.reason().filter(|r| !r.is_empty()).unwrap_or("a hook decided").to_string();
    let finding = |severity| Finding {
        guardian: "hook".into(),
        rule: run.event.into(),
        severity,
        message: reason.clone(),
        contained: false,
    };
    match decision {
        Decision::Deny => {
            verdict.decision = Decision::Deny;
            verdict.source = DecisionSource::Hook;
            verdict.findings.push(finding(Severity::High));
        }
        Decision::Ask if verdict.decision == Decision::Allow => {
            verdict.decision = Decision::Ask;
            verdict.source = DecisionSource::Hook;
            verdict.findings.push(finding(Severity::Medium));
        }
        Decision::Ask => verdict.findings.push(finding(Severity::Medium)),
        Decision::Allow => {
            // No finding at all: neither a guardian's nor an earlier hook's failure.
            let liftable =
                matches!(verdict.source, DecisionSource::Mode | DecisionSource::Rule) && verdict.findings.is_empty();
            if verdict.decision == Decision::Ask && liftable {
                verdict.decision = Decision::Allow;
                verdict.source = DecisionSource::Hook;
            }
        }
    }
}

#[cfg(test)]
mod tests;
