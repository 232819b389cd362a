//! `apply_patch`: a patch over one or more files — a unified diff, or the `*** Begin Patch`
//! format — all or nothing.
//!
//! Rule: every file of the patch is resolved by the sandbox and every hunk applied in memory;
//! the result is one plan over all the files, which [`crate::changes::commit`] writes all or
//! nothing. Nothing is overwritten by surprise: creating a file that exists, or moving or copying
//! onto one, is refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use bridle_protocol::ClientKind;
use serde::Deserialize;

use super::files::{read_workspace_file, resolve, text_for_edit, workspace_path};
use super::text_edit::{apply_file_patch, parse_patch, PatchError, PatchResult};
use super::{quoted, Tool, ToolContext, ToolError, ToolKind};
use crate::changes::shown;
use crate::changes::{ChangePlan, PlannedFile};
use crate::sandbox::Access;

/// Changes files of the workspace with a patch, in either of two formats; one patch may change
/// several files. Either every change applies or nothing is changed. Context lines must match the
/// files (line endings, trailing spaces, indentation and typographic punctuation are forgiven).
/// A unified diff (as `git diff` prints it; `/dev/null` as the old file creates one, as the new
/// file deletes one; line numbers in `@@` headers are only hints):
/// ```text
/// --- a/src/app.py
/// +++ b/src/app.py
/// @@ -1,2 +1,2 @@
///  def greet():
/// -    print("hi")
/// +    print("hello")
/// ```
/// Or the same change in the `*** Begin Patch` format (`*** Add File: <path>` with '+' lines,
/// `*** Delete File: <path>`, `*** Update File: <path>` optionally followed by `*** Move to:
/// <path>`; `@@ <line>` names a line to find before the change, a bare `@@` separates changes):
/// ```text
/// *** Begin Patch
/// *** Update File: src/app.py
/// @@ def greet():
/// -    print("hi")
/// +    print("hello")
/// *** End Patch
/// ```
/// Creating a file that exists, or moving a file onto one, is refused: change that file instead.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch: a unified diff, or a `*** Begin Patch` ... `*** End Patch` patch.
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
impl Tool for ApplyPatch {
    type Args = ApplyPatchArgs;
    const NAME: &'static str = "apply_patch";
    const KIND: ToolKind = ToolKind::Write;
    const CLIENT_KIND: ClientKind = ClientKind::Edit;

    /// The files the patch names, read by the patch's own parser; an unreadable patch is named
    /// as such (its error comes when it runs).
    fn title(args: &Self::Args) -> String {
        let mut files: Vec<String> = Vec::new();
        for (path, _) in Self::paths(args) {
            if !files.contains(&path) {
                files.push(path);
            }
        }
        match files.as_slice() {
            [] => "Apply a patch".to_string(),
            files => format!("Patch {}", quoted(&files.join(", "))),
        }
    }

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

    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ChangePlan, ToolError> {
        let patches = parse_patch(&args.patch).map_err(|e| ToolError::new(format!("{e} Nothing was changed.")))?;
        let by_rel = |p: &str| -> Result<PathBuf, ToolError> { workspace_path(&resolve(ctx, p, Access::Write)?) };

        // Apply everything in memory, file by file, in patch order.
        let mut plan: BTreeMap<PathBuf, Planned> = BTreeMap::new();
        for patch in &patches {
            let source = patch.old_path.as_deref().map(by_rel).transpose()?;
            let target = patch.new_path.as_deref().map(by_rel).transpose()?;
            // A creation is given the file as it is, so one that exists is refused.
            let current = match source.as_ref().or(target.as_ref()) {
                Some(rel) => current_text(ctx, &mut plan, rel).await?,
                None => None,
            };
            let refused = |e: PatchError| ToolError::new(format!("{e} Nothing was changed."));
            if let (Some(src), Some(dst)) = (&source, &target) {
                if src != dst && current_text(ctx, &mut plan, dst).await?.is_some() {
                    let (from, to) = (shown(src), shown(dst));
                    return Err(refused(PatchError::TargetExists { from, to }));
                }
            }
            let result = apply_file_patch(current.as_deref(), patch).map_err(refused)?;
            match (result, &source, &target) {
                (PatchResult::Delete, Some(src), _) => set_result(&mut plan, src, None),
                (PatchResult::Write { content, .. }, src, Some(dst)) => {
                    if let Some(src) = src.as_ref().filter(|s| *s != dst && !patch.copy) {
                        // A rename: the old name goes away.
                        set_result(&mut plan, src, None);
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
        let files = plan
            .into_values()
            .map(|p| PlannedFile {
                rel: p.rel,
                before: p.original.map(String::into_bytes),
                after: p.result.map(String::into_bytes),
            })
            .collect();
        Ok(ChangePlan { files, note: None })
    }
}

/// The text of `rel` as the patch has left it so far (loaded from disk on first use).
async fn current_text(
    ctx: &ToolContext,
    plan: &mut BTreeMap<PathBuf, Planned>,
    rel: &PathBuf,
) -> Result<Option<String>, ToolError> {
    if let Some(planned) = plan.get(rel) {
        return Ok(planned.result.clone());
    }
    let original = match read_workspace_file(ctx, rel).await? {
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
