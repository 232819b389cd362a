//! What a `bash` command changed in the workspace (DESIGN §4.3): captured on an overlay where
//! the sandbox can mount one, listed by a before/after scan where it cannot.
//!
//! Rules: a captured command's ignored output and git data land as soon as it ends; the rest is
//! handed to the call's owner as [`Held`] changes, never written here; a command that is not
//! captured says why in its result, and what it changed is listed as not undoable.

use std::sync::{Arc, Once};

use bridle_protocol::{IgnoredOutput, RefusedPath, ShellEffects};

use crate::changes::{read_layer, CommitScope, Held, Landing, Scan, ScannedChange};
use crate::shell_sandbox::Layer;
use crate::tools::ToolContext;

/// How one command's changes are followed.
pub(super) enum Capture {
    /// On an overlay: the layer, and the scratch folders written through.
    Layer { layer: Layer, scratch: Vec<String> },
    /// Straight to the workspace: the stamps before, and why it is not captured.
    Scan { before: Scan, why: String },
    /// Not followed: outside a session, or nothing can be written.
    Nothing,
}

impl Capture {
    /// How a command of this call is followed.
    pub(super) fn start(ctx: &ToolContext, escalated: bool) -> Capture {
        if ctx.session.is_none() {
            return Capture::Nothing;
        }
        let root = ctx.workspace.root();
        let scan = |why: String| Capture::Scan { before: Scan::take(root), why };
        if escalated {
            return scan("it ran outside the sandbox, as approved".into());
        }
        let scratch = match ctx.workspace.shell.capture() {
            Ok(scratch) => scratch.to_vec(),
            Err(_) if ctx.workspace.shell.read_only() => return Capture::Nothing,
            Err(why) => return scan(why),
        };
        let layers = ctx.workspace.shell.layers().to_path_buf();
        static SWEPT: Once = Once::new();
        SWEPT.call_once(|| {
            let removed = crate::shell_sandbox::sweep_layers(&layers);
            if removed > 0 {
                tracing::info!("removed {removed} command layer(s) left by an earlier process");
            }
        });
        let names: Vec<&str> = match ctx.workspace.shell.writes_through() {
            true => scratch.iter().map(String::as_str).collect(),
            false => Vec::new(),
        };
        match Layer::with_scratch(&layers, root, &names) {
            Ok(layer) => Capture::Layer { layer, scratch },
            Err(e) => scan(format!("no layer could be made for it: {e}")),
        }
    }

    /// The layer to launch on, if any.
    pub(super) fn layer(&self) -> Option<&Layer> {
        match self {
            Capture::Layer { layer, .. } => Some(layer),
            _ => None,
        }
    }

    /// After the command ended: lands what needs no question, and returns what it changed so
    /// far, a note for the model, and the held changes.
    pub(super) async fn finish(
        self,
        ctx: &ToolContext,
        started_ns: i128,
    ) -> (Option<ShellEffects>, String, Option<Held>) {
        match self {
            Capture::Nothing => (None, String::new(), None),
            Capture::Scan { before, why } => {
                let root = ctx.workspace.root().to_path_buf();
                let after = tokio::task::spawn_blocking(move || Scan::take(&root)).await.unwrap_or_default();
                let (changes, partial) = before.changes_until(&after);
                let listed: Vec<String> = changes.iter().map(ScannedChange::shown).collect();
                let note = if listed.is_empty() {
                    String::new()
                } else {
                    format!(
                        "\n[changed directly, not undoable ({why}): {}{}]",
                        listed.join(", "),
                        if partial { ", and maybe more" } else { "" }
                    )
                };
                let effects = ShellEffects { reason: Some(why), listed, partial, ..ShellEffects::default() };
                (Some(effects), note, None)
            }
            Capture::Layer { layer, scratch } => {
                let upper = layer.upper().to_path_buf();
                let workspace = ctx.workspace.clone();
                let sorted = tokio::task::spawn_blocking(move || {
                    let read = read_layer(&upper, workspace.root())?;
                    Ok::<_, std::io::Error>(Landing::sort(read, &upper, &workspace.fs, &scratch, started_ns))
                })
                .await;
                let landing = match sorted {
                    Ok(Ok(landing)) => Arc::new(landing),
                    Ok(Err(e)) => return unread(e.to_string()),
                    Err(e) => return unread(e.to_string()),
                };
                let free = landing.land_free(&CommitScope::from(ctx)).await;
                let mut note = String::new();
                if free.files > 0 {
                    note.push_str(&format!(
                        "\n[build output (ignored paths): {} file(s), {}, written without checkpoints]",
                        free.files,
                        bytes(free.bytes)
                    ));
                }
                for line in &free.git {
                    note.push_str(&format!("\n[git: {line}]"));
                }
                let refused: Vec<_> = landing.refused.iter().chain(&free.refused).collect();
                for (path, why) in &refused {
                    note.push_str(&format!("\n[not applied: {path}: {why}]"));
                }
                let effects = ShellEffects {
                    ignored: Some(IgnoredOutput { files: free.files as u64, bytes: free.bytes }),
                    git: free.git,
                    refused: refused.iter().map(|(path, why)| refused_path(path, why)).collect(),
                    ..captured()
                };
                let held = (!landing.held_paths().is_empty()).then(|| Held { landing, keep: Box::new(layer) });
                (Some(effects), note, held)
            }
        }
    }
}

/// The layer could not be read: nothing of it lands.
fn unread(why: String) -> (Option<ShellEffects>, String, Option<Held>) {
    let note = format!("\n[its changes could not be read back and were discarded: {why}]");
    (Some(ShellEffects { error: Some(why), ..captured() }), note, None)
}

/// The effects of a command captured on an overlay, before anything of it is listed.
fn captured() -> ShellEffects {
    ShellEffects { captured: true, undoable: true, ..ShellEffects::default() }
}

/// A path that did not land, and why.
fn refused_path(path: &str, why: &str) -> RefusedPath {
    RefusedPath { path: path.to_string(), why: why.to_string() }
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}
