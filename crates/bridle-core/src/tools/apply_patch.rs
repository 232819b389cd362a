//! `apply_patch`: a unified diff over one or more files, all or nothing.
//!
//! Rules: every file of the patch is resolved by the sandbox and locked (in path order, so two
//! patches never deadlock); all hunks are applied in memory first and nothing is written unless
//! every one applies; if writing fails half-way, the files already written are restored.

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::files::{diff_stat, fs_error, resolve, shown, text_for_edit, unified_diff, workspace_path};
use super::text_edit::{apply_file_patch, parse_patch, PatchResult};
use super::{ToolContext, ToolError, ToolKind, ToolOutput, TypedTool};
use crate::sandbox::Access;

/// Applies a unified diff (as `git diff` or `diff -u` print it) to files of the workspace. Several
/// files may be in one patch; `a/` and `b/` prefixes are accepted; `/dev/null` as the old file
/// creates a file and as the new file deletes one. Context lines must match the files (line
/// endings, trailing spaces, indentation and typographic punctuation are forgiven). Either every
/// hunk applies or nothing is changed.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The unified diff.
    pub patch: String,
}

/// The `apply_patch` tool.
pub struct ApplyPatch;

/// The final state of one file after the whole patch.
struct Planned {
    rel: PathBuf,
    original: Option<String>,
    result: Option<String>,
}

#[async_trait]
impl TypedTool for ApplyPatch {
    type Args = ApplyPatchArgs;
    const NAME: &'static str = "apply_patch";
    const KIND: ToolKind = ToolKind::Write;

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        parse_patch(&args.patch)
            .map(|files| {
                files
                    .iter()
                    .flat_map(|f| [f.old_path.clone(), f.new_path.clone()])
                    .flatten()
                    .map(|p| (p, Access::Write))
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let patches = parse_patch(&args.patch).map_err(|e| ToolError::new(format!("{e} Nothing was changed.")))?;
        // Resolve every path once; lock them all in a stable order.
        let mut files: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
        for patch in &patches {
            for path in [&patch.old_path, &patch.new_path].into_iter().flatten() {
                let resolved = resolve(ctx, path, Access::Write)?;
                files.insert(resolved.absolute.clone(), workspace_path(&resolved)?);
            }
        }
        let mut guards = Vec::with_capacity(files.len());
        for absolute in files.keys() {
            guards.push(ctx.workspace.locks.write(absolute).await);
        }
        let by_rel = |p: &str| -> Result<PathBuf, ToolError> { workspace_path(&resolve(ctx, p, Access::Write)?) };

        // Apply everything in memory, file by file, in patch order.
        let mut plan: BTreeMap<PathBuf, Planned> = BTreeMap::new();
        for patch in &patches {
            let source = patch.old_path.as_deref().map(by_rel).transpose()?;
            let target = patch.new_path.as_deref().map(by_rel).transpose()?;
            let current = match &source {
                Some(rel) => current_text(ctx, &mut plan, rel)?,
                None => {
                    if let Some(rel) = &target {
                        current_text(ctx, &mut plan, rel)?;
                    }
                    None
                }
            };
            let result = apply_file_patch(current.as_deref(), patch)
                .map_err(|e| ToolError::new(format!("{e} Nothing was changed.")))?;
            match (result, &source, &target) {
                (PatchResult::Delete, Some(src), _) => set_result(&mut plan, src, None),
                (PatchResult::Write { content, .. }, src, Some(dst)) => {
                    if let Some(src) = src.as_ref().filter(|s| *s != dst) {
                        // A rename: the old name goes away.
                        set_result(&mut plan, src, None);
                    }
                    if !plan.contains_key(dst) {
                        current_text(ctx, &mut plan, dst)?;
                    }
                    set_result(&mut plan, dst, Some(content));
                }
                _ => {
                    return Err(ToolError::new(format!(
                        "`{}`: the patch neither writes nor deletes it. Nothing was changed.",
                        patch.path()
                    )))
                }
            }
        }

        if !ctx.dry_run {
            write_all(ctx, &plan)?;
        }
        let mut changes = Vec::new();
        let mut diff = String::new();
        for p in plan.values().filter(|p| p.original != p.result) {
            let d = unified_diff(&p.rel, p.original.as_deref(), p.result.as_deref());
            let (added, removed) = diff_stat(&d);
            changes.push(json!({"path": shown(&p.rel), "diff": d, "added": added, "removed": removed}));
            diff.push_str(&d);
        }
        let summary: Vec<String> = changes
            .iter()
            .map(|c| format!("{} (+{} -{})", c["path"].as_str().unwrap_or(""), c["added"], c["removed"]))
            .collect();
        drop(guards);
        Ok(ToolOutput {
            output: if summary.is_empty() {
                "The patch changes nothing.".into()
            } else {
                format!("Patched {}.", summary.join(", "))
            },
            data: Some(json!({"changes": changes})),
            diff: (!diff.is_empty()).then_some(diff),
        })
    }
}

/// The text of `rel` as the patch has left it so far (loaded from disk on first use).
fn current_text(
    ctx: &ToolContext,
    plan: &mut BTreeMap<PathBuf, Planned>,
    rel: &PathBuf,
) -> Result<Option<String>, ToolError> {
    if let Some(planned) = plan.get(rel) {
        return Ok(planned.result.clone());
    }
    let original = match ctx.workspace.fs.read_if_exists(rel).map_err(fs_error)? {
        Some(bytes) => Some(text_for_edit(bytes, &shown(rel))?),
        None => None,
    };
    plan.insert(rel.clone(), Planned { rel: rel.clone(), original: original.clone(), result: original.clone() });
    Ok(original)
}

fn set_result(plan: &mut BTreeMap<PathBuf, Planned>, rel: &PathBuf, result: Option<String>) {
    if let Some(planned) = plan.get_mut(rel) {
        planned.result = result;
    }
}

/// Writes the plan; on a failure, puts back what was already changed.
fn write_all(ctx: &ToolContext, plan: &BTreeMap<PathBuf, Planned>) -> Result<(), ToolError> {
    let fs = &ctx.workspace.fs;
    let apply = |p: &Planned, state: &Option<String>| match state {
        Some(text) => fs.write_atomic(&p.rel, text.as_bytes()).map(|_| ()),
        None => match fs.remove_file(&p.rel) {
            Err(e) if e.is_not_found() => Ok(()),
            other => other,
        },
    };
    let mut done: Vec<&Planned> = Vec::new();
    for p in plan.values().filter(|p| p.original != p.result) {
        if let Err(e) = apply(p, &p.result) {
            let restored = done.iter().all(|d| apply(d, &d.original).is_ok());
            let state = if restored {
                "the files already written were restored"
            } else {
                "restoring the files already written failed too"
            };
            return Err(ToolError::new(format!("{}; {state}.", fs_error(e))));
        }
        done.push(p);
    }
    Ok(())
}
