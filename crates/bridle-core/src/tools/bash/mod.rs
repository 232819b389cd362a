//! `bash`: one shell command in the workspace, with every process it starts accounted for.
//!
//! Rules: the command runs in its own process group, its output goes through a pipe Bridle drains
//! into a file that never grows past the cap (the call never waits on the pipe's end: a
//! backgrounded child cannot hang it); on timeout, interrupt or a full output
//! file the group gets SIGTERM, then SIGKILL after a grace period, and a sweep kills descendants
//! that left the group (found by a marker in their environment; Bridle is their subreaper so
//! they cannot be lost to init); nothing the command started outlives the call. A non-zero exit
//! is a result, not an error of the harness. A call with `background` hands the command to the
//! session's processes instead ([`crate::processes`]) and answers within two seconds. The command's environment comes from an allow-list
//! ([`crate::shell_sandbox::child_environment`]). It runs inside the workspace's OS sandbox
//! ([`crate::shell_sandbox`]) unless the call escalates (which the guard always has a human
//! approve, but in `bypass`); every result's details say how it ran ([`ShellDetails`]). What it changes is
//! captured on an overlay where the sandbox can mount one, and handed to the call's owner as held
//! changes; elsewhere it is listed afterwards, not undoable, and the result says why
//! ([`effects`]).

mod capture;
mod effects;

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{BackgroundDetails, ClientKind, ShellDetails, ToolDetails};
use serde::Deserialize;

use super::output;
use super::{quoted, Covers, ShellLine, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::processes::{self, ProcessGroup};
use crate::shell_sandbox::{Launch, SandboxKind};

/// Longest timeout a call may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// Output beyond this stops the command.
pub const OUTPUT_CAP_BYTES: u64 = 64 * 1024 * 1024;
/// Time between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Runs a command with `bash -c` in the workspace folder and returns its exit code and output
/// (stdout and stderr together). Long output keeps its start and end; the whole of it is saved
/// to a file you can read with read_file. The command is stopped after `timeout_secs` (default:
/// the session's tool timeout, at most 600). Processes it leaves running in the background are
/// stopped when it ends. Secret environment variables are not available to it. It runs in a
/// sandbox: the workspace and /tmp are writable, the rest of the machine is read-only,
/// credentials are hidden, and only the hosts the user allows are reachable, through a proxy (the
/// result says which were refused). If a command fails only because it needs
/// more (network, a write outside the workspace), call bash again with `escalate: true` and a
/// `justification`: a human decides whether it runs once outside the sandbox. What the command
/// changes in the workspace is captured: the result lists it with its diff, the user may review
/// it before it is applied, and an undo restores it (build output in ignored paths is written
/// without checkpoints). For a server, watcher or long build, set `background: true`: it answers
/// within 2 s with a process id and runs on (see process_output, process_stop).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line, run with `bash -c`.
    pub command: String,
    /// Seconds before the command is stopped (at most 600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Run outside the sandbox (always asks a human first).
    #[serde(default)]
    pub escalate: bool,
    /// Why the command needs to run outside the sandbox (shown to the human who decides).
    #[serde(default)]
    pub justification: Option<String>,
    /// Run on after answering, until stopped or the session ends.
    #[serde(default)]
    pub background: bool,
}

/// The `bash` tool.
pub struct Bash;

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Exited(Option<i32>),
    TimedOut,
    OutputTooLarge,
}

fn effective_timeout(args: &BashArgs, default: Duration) -> Duration {
    args.timeout_secs.map(Duration::from_secs).unwrap_or(default).min(Duration::from_secs(MAX_TIMEOUT_SECS))
}

#[async_trait]
impl Tool for Bash {
    type Args = BashArgs;
    const NAME: &'static str = "bash";
    const KIND: ToolKind = ToolKind::Exec;
    const CLIENT_KIND: ClientKind = ClientKind::Execute;

    fn title(args: &Self::Args) -> String {
        let command = quoted(&args.command);
        match (args.background, args.escalate) {
            (true, _) => format!("Start `{command}` in the background"),
            (false, true) => format!("Run `{command}` outside the sandbox"),
            (false, false) => format!("Run `{command}`"),
        }
    }

    /// The pipeline's timeout is a backstop: the tool stops the command itself, gracefully, first.
    fn timeout(args: &Self::Args, default: Duration) -> Duration {
        effective_timeout(args, default) + GRACE + Duration::from_secs(5)
    }

    fn shell(args: &Self::Args) -> Option<ShellLine<'_>> {
        let why = args.justification.as_deref().map(str::trim).filter(|j| !j.is_empty());
        let escalate = args.escalate.then_some(why.unwrap_or("no justification given"));
        Some(ShellLine { command: &args.command, escalate, background: args.background })
    }

    /// The exact command; nothing for an escalation, which is approved once each time, so a
    /// session approval of the confined command never lets it out.
    fn covers(args: &Self::Args) -> Covers {
        match args.escalate {
            true => Covers::Nothing,
            false => Covers::Command(args.command.clone()),
        }
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::new("the command is empty"));
        }
        if args.timeout_secs == Some(0) {
            return Err(ToolError::new("timeout_secs must be at least 1"));
        }
        if args.background {
            return background(args, ctx).await;
        }
        let timeout = effective_timeout(args, ctx.tool_timeout);
        let out_dir = ctx.workspace.sandbox.tool_output_dir(&ctx.session_id);
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| ToolError::new(format!("cannot create {}: {e}", out_dir.display())))?;
        let out_path = output::offload_path(&out_dir, &ctx.call_id);
        let out_file = std::fs::File::create(&out_path)
            .map_err(|e| ToolError::new(format!("cannot create the output file: {e}")))?;

        processes::become_subreaper();
        let shell = &ctx.workspace.shell;
        let mut env = shell.inherited_environment();
        env.push((processes::MARKER.into(), ctx.call_id.clone().into()));
        let (writer, mut drain) = capture::start(out_file, OUTPUT_CAP_BYTES)
            .map_err(|e| ToolError::new(format!("cannot set up the command's output: {e}")))?;
        let capture = effects::Capture::start(ctx, args.escalate);
        let started = std::time::Instant::now();
        let started_ns =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        let first = shell.spawn(launch(args, ctx, &env, &writer, capture.layer())?, args.escalate).await;
        let spawned = match first {
            // The overlay this command was to run on could not be mounted (a scratch folder
            // swapped for a link meanwhile, ...): it never runs uncaptured in its place.
            Err(e) if capture.layer().is_some() => {
                return Err(ToolError::new(format!(
                    "not run: the overlay it was to run on could not be mounted ({e}); nothing was written"
                )));
            }
            spawned => spawned,
        }
        .map_err(|e| ToolError::new(format!("cannot start bash: {e}")))?;
        drop(writer);
        let (mut child, sandbox, cgroup) = (spawned.child, spawned.kind, spawned.cgroup);
        // The command's way out, served for this call while it runs.
        let network = processes::network::open(
            spawned.listener,
            spawned.host_ports,
            ctx.network.as_ref(),
            &ctx.call_id,
            &args.command,
        )
        .map_err(ToolError::new)?;
        // Owns the group from here: dropped (interrupt, timeout of the pipeline), it kills it.
        let mut group = ProcessGroup::new(child.id(), ctx.call_id.clone());

        let ending = tokio::select! {
            status = child.wait() => Ending::Exited(status.ok().and_then(|s| s.code())),
            _ = tokio::time::sleep(timeout) => Ending::TimedOut,
            _ = drain.full() => Ending::OutputTooLarge,
        };
        let mut left_running = 0;
        let code = match ending {
            Ending::Exited(code) => {
                left_running = group.stop(Duration::from_millis(200)).await;
                code
            }
            Ending::TimedOut | Ending::OutputTooLarge => {
                group.terminate();
                let status =
                    tokio::time::timeout(GRACE, child.wait()).await.ok().and_then(|s| s.ok()).and_then(|s| s.code());
                group.stop(Duration::ZERO).await;
                let _ = child.wait().await;
                status
            }
        };
        drop(group);
        // What it detached (a new session, a cleared environment) is still in its cgroup: it
        // ends with the call too.
        if let Some(cgroup) = cgroup {
            // What wraps the command leaves its cgroup a moment after it ends.
            let settle = std::time::Instant::now() + Duration::from_millis(150);
            while cgroup.count() > 0 && std::time::Instant::now() < settle {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            left_running += cgroup.count();
        }
        let hosts = match network.serving {
            Some(serving) => serving.finish().await,
            None => Vec::new(),
        };
        if let Some(forwarding) = network.forwarding {
            forwarding.finish().await;
        }
        drain.finish(GRACE).await;
        let elapsed = started.elapsed();
        let (shown, cut) = output::head_and_tail_of_file(&out_path, output::DEFAULT_MAX_CHARS)
            .map_err(|e| ToolError::new(format!("cannot read the command's output: {e}")))?;
        let saved: Option<PathBuf> = if cut {
            Some(out_path.clone())
        } else {
            let _ = std::fs::remove_file(&out_path);
            None
        };
        let mut text = String::new();
        match ending {
            Ending::Exited(Some(c)) => text.push_str(&format!("exit code {c}")),
            Ending::Exited(None) => text.push_str("killed by a signal"),
            Ending::TimedOut => {
                text.push_str(&format!("timed out after {} s and was stopped; output so far", timeout.as_secs()))
            }
            Ending::OutputTooLarge => {
                text.push_str(&format!("stopped: its output passed {} MB", OUTPUT_CAP_BYTES / (1024 * 1024)))
            }
        }
        if left_running > 0 {
            text.push_str(&format!("; {left_running} background process(es) it left running were stopped"));
        }
        text.push('\n');
        text.push_str(&shown);
        if let Some(path) = &saved {
            text.push('\n');
            text.push_str(&output::saved_note(path));
        }
        if let Some(note) = hosts_note(&hosts) {
            text.push_str(&note);
        }
        let gaps = sandbox_note(&mut text, ctx, sandbox, args.escalate);
        let (effects, note, held) = capture.finish(ctx, started_ns).await;
        text.push_str(&note);
        let details = ShellDetails {
            exit_code: code,
            timed_out: ending == Ending::TimedOut,
            output_too_large: ending == Ending::OutputTooLarge,
            duration_ms: elapsed.as_millis() as u64,
            output_file: saved.map(|p| p.display().to_string()),
            stopped_background: left_running,
            sandbox,
            sandbox_gaps: gaps,
            sandbox_home: (sandbox != SandboxKind::None).then(|| shell.home_shown()).flatten(),
            escalated: args.escalate,
            network: sandbox == SandboxKind::None
                || (shell.network() && ctx.network.as_ref().is_some_and(|n| n.proxy.is_some())),
            hosts,
            checkpointed: effects.as_ref().is_some_and(|e| e.captured),
            effects,
        };
        Ok(ToolOutput {
            output: text,
            details: Some(ToolDetails::Shell(Box::new(details))),
            held: held.map(super::HeldSlot::new).unwrap_or_default(),
            ..ToolOutput::default()
        })
    }
}

/// The launch of `args`' command, its output to `writer`, on `layer` when given.
fn launch<'a>(
    args: &'a BashArgs,
    ctx: &'a ToolContext,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    writer: &std::io::PipeWriter,
    layer: Option<&'a crate::shell_sandbox::Layer>,
) -> Result<Launch<'a>, ToolError> {
    let output = || writer.try_clone().map_err(|e| ToolError::new(format!("cannot set up the command's output: {e}")));
    Ok(Launch {
        script: &args.command,
        cwd: ctx.workspace.root(),
        env: env.to_vec(),
        stdin: std::process::Stdio::null(),
        stdout: output()?.into(),
        stderr: output()?.into(),
        network: ctx.network.as_ref().is_some_and(|n| n.proxy.is_some()),
        loopback: ctx.processes().and_then(|p| p.loopback(&ctx.workspace.shell)),
        layer,
    })
}

/// Appends what the model should know of how the command ran (outside the sandbox, or what a
/// confining sandbox does not hold); returns the sandbox's gaps.
fn sandbox_note(text: &mut String, ctx: &ToolContext, sandbox: SandboxKind, escalated: bool) -> Option<String> {
    let shell = &ctx.workspace.shell;
    // None for an unconfined run: its note says more.
    let gaps = if sandbox == SandboxKind::None { None } else { shell.gaps() };
    match (sandbox, escalated, &gaps) {
        (SandboxKind::None, true, _) => text.push_str("\n[note: ran outside the sandbox, as approved]"),
        (SandboxKind::None, false, _) => text.push_str(&format!(
            "\n[note: ran without an OS sandbox: {}]",
            shell.unsandboxed_because().unwrap_or("no sandbox")
        )),
        (kind, _, Some(gaps)) => {
            text.push_str(&format!("\n[note: the {} sandbox does not hold everything: {gaps}]", kind.as_str()))
        }
        (_, _, None) => {}
    }
    gaps
}

/// Starts the command as a background process of the session and answers once it has run for
/// [`processes::START_WAIT`] or ended, with its id and its output so far.
async fn background(args: &BashArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let Some(table) = ctx.processes() else {
        return Err(ToolError::new(
            "a background process needs a session (the app or `bridle run`); run the command without `background`",
        ));
    };
    let shell = &ctx.workspace.shell;
    let started = std::time::Instant::now();
    let start = processes::Start {
        call_id: &ctx.call_id,
        command: &args.command,
        shell,
        root: ctx.workspace.root(),
        env: shell.inherited_environment(),
        escalated: args.escalate,
        network: ctx.network.clone(),
    };
    let id = table.start(start).await.map_err(ToolError::new)?;
    table.wait_end(&id, processes::START_WAIT).await;
    let read = table.output(&id, std::time::Duration::ZERO).await.map_err(ToolError::new)?;
    let process = &read.process;
    let mut text = match process.state {
        bridle_protocol::ProcessState::Running => format!(
            "started in the background as {id}; it runs on. Read its output with process_output (process_id \"{id}\"), stop it with process_stop. Output so far:\n"
        ),
        _ => format!("{id} ended at once ({}). Its output:\n", processes::state_words(process, ctx.clock.now_ms())),
    };
    text.push_str(&if read.text.is_empty() {
        "(none yet)".into()
    } else {
        super::process_output::bounded(ctx, &read.text)?
    });
    let gaps = sandbox_note(&mut text, ctx, read.sandbox, args.escalate);
    Ok(ToolOutput {
        output: text,
        details: Some(ToolDetails::Background(BackgroundDetails {
            process_id: id,
            duration_ms: started.elapsed().as_millis() as u64,
            state: process.state,
            exit_code: process.exit_code,
            sandbox: read.sandbox,
            sandbox_gaps: gaps,
            sandbox_home: (read.sandbox != SandboxKind::None).then(|| ctx.workspace.shell.home_shown()).flatten(),
            escalated: args.escalate,
        })),
        ..ToolOutput::default()
    })
}

/// The hosts a command reached and was refused, for the model (each refused one with why).
fn hosts_note(hosts: &[crate::network::HostUse]) -> Option<String> {
    if hosts.is_empty() {
        return None;
    }
    let reached: Vec<String> = hosts.iter().filter(|h| h.allowed).map(|h| format!("{}:{}", h.host, h.port)).collect();
    let mut note = String::from("\n[network:");
    if !reached.is_empty() {
        note.push_str(&format!(" reached {}", reached.join(", ")));
    }
    for h in hosts.iter().filter(|h| !h.allowed) {
        let why = h.reason.as_deref().unwrap_or("refused");
        note.push_str(&format!("{} refused {}:{} ({why})", if note.ends_with(':') { "" } else { ";" }, h.host, h.port));
    }
    note.push(']');
    Some(note)
}

#[cfg(test)]
mod tests;
