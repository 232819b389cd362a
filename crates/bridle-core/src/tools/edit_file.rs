//! `edit_file`: replace text in a file, found with the five matching levels of `text_edit`.
//!
//! Rule: one edit or a batch, all-or-nothing; on any failure nothing is written and the error
//! tells the model what to fix (how many matches and where, or the closest region).

use async_trait::async_trait;
use bridle_protocol::ClientKind;
use serde::Deserialize;

use super::files::plan_file;
use super::text_edit::{apply_edits, Edit, MatchLevel};
use super::{quoted, Tool, ToolContext, ToolError, ToolKind};
use crate::changes::ChangePlan;
use crate::sandbox::Access;

/// Replaces text in an existing file. Give `old_text` and `new_text` for one edit, or `edits` for
/// several applied in order (all or none). `old_text` must match one place in the file: exactly,
/// or ignoring line endings, trailing spaces, indentation, or typographic punctuation, tried in
/// that order; include enough surrounding lines to make it unique, set `replace_all` to change
/// every occurrence, or give `line_hint` to pick the match nearest that line. The replacement is
/// re-indented to the matched place. Read the file first if you are not sure of its content.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The text to find (one edit).
    #[serde(default)]
    pub old_text: Option<String>,
    /// The text to put in its place (one edit).
    #[serde(default)]
    pub new_text: Option<String>,
    /// Replace every occurrence instead of requiring one.
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// A 1-based line number near the intended match, to choose among several.
    #[serde(default)]
    pub line_hint: Option<u64>,
    /// Several edits, applied in order to the result of the previous one; all or none.
    #[serde(default)]
    pub edits: Option<Vec<EditSpec>>,
}

/// One edit of a batch.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditSpec {
    /// The text to find.
    pub old_text: String,
    /// The text to put in its place.
    pub new_text: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// The `edit_file` tool.
pub struct EditFile;

fn edits_of(args: &EditFileArgs) -> Result<(Vec<Edit>, Option<usize>), ToolError> {
    let hint = args.line_hint.map(|h| h as usize);
    match (args.old_text.clone(), args.new_text.clone(), args.edits.clone()) {
        (Some(old_text), Some(new_text), None) => {
            Ok((vec![Edit { old_text, new_text, replace_all: args.replace_all.unwrap_or(false) }], hint))
        }
        (None, None, Some(edits)) if !edits.is_empty() => Ok((
            edits
                .into_iter()
                .map(|e| Edit {
                    old_text: e.old_text,
                    new_text: e.new_text,
                    replace_all: e.replace_all.unwrap_or(false),
                })
                .collect(),
            hint,
        )),
        (None, None, Some(_)) => Err(ToolError::new("`edits` is empty; give at least one edit")),
        (Some(_), None, None) | (None, Some(_), None) => {
            Err(ToolError::new("give both `old_text` and `new_text` (or use `edits` for several edits)"))
        }
        (_, _, Some(_)) => Err(ToolError::new("give either `old_text`/`new_text` or `edits`, not both")),
        (None, None, None) => Err(ToolError::new("nothing to do: give `old_text` and `new_text`, or `edits`")),
    }
}

#[async_trait]
impl Tool for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";
    const KIND: ToolKind = ToolKind::Write;
    const CLIENT_KIND: ClientKind = ClientKind::Edit;

    fn title(args: &Self::Args) -> String {
        format!("Edit {}", quoted(&args.path))
    }

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        vec![(args.path.clone(), Access::Write)]
    }

    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ChangePlan, ToolError> {
        let path = args.path.clone();
        let (edits, hint) = edits_of(args)?;
        let mut levels = Vec::new();
        let mut readings = Vec::new();
        let mut plan = plan_file(ctx, &path, |old| {
            let Some(old) = old else {
                return Err(ToolError::new(format!("`{path}` does not exist; create it with write_file")));
            };
            let outcome =
                apply_edits(old, &edits, hint).map_err(|e| ToolError::new(format!("{e} The file was not changed.")))?;
            levels = outcome.levels;
            readings = outcome.readings;
            Ok(outcome.content)
        })
        .await?;
        let batch = levels.len() > 1;
        let fuzzy: Vec<String> = levels
            .iter()
            .zip(readings.iter().map(|r| r.describe()).chain(std::iter::repeat(None)))
            .enumerate()
            .filter(|(_, (level, reading))| **level != MatchLevel::Exact || reading.is_some())
            .map(|(i, (level, reading))| {
                let how = match reading {
                    Some(reading) => format!("{reading}; then {}", level.describe()),
                    None => level.describe().to_string(),
                };
                if batch {
                    format!("edits[{i}] {how}")
                } else {
                    how
                }
            })
            .collect();
        if !fuzzy.is_empty() {
            plan.note = Some(format!("Note: {}.", fuzzy.join("; ")));
        }
        Ok(plan)
    }
}
