//! The pure text logic behind `edit_file` and `apply_patch`: finding `old_text` (or a hunk's
//! context) with the five matching levels of DESIGN 4.1, replacing it, and parsing and applying
//! unified diffs. Strings in, strings out: no file I/O, no paths resolved, no clock.
//!
//! The rule this module keeps: nothing is produced on failure. An error comes back alone, with
//! words the model can act on (how many matches and where, or the closest region of the file
//! with line numbers); a batch of edits fails as a whole, naming the failing edit; a patch
//! hands back each file's new content without writing any, so the caller can write all or
//! none. On success, the file's UTF-8 BOM, its line endings (CRLF or LF, line by line for the
//! lines not touched) and its final newline, present or absent, are kept.
//!
//! - [`apply_edits`] — one edit or a batch, with `replace_all` and `line_hint`.
//! - [`parse_patch`] and [`apply_file_patch`] — unified diffs, one or more files, `/dev/null`
//!   for creation and deletion, line numbers as hints only.

mod closest;
mod edit;
mod matcher;
mod patch;
mod reindent;
mod text;

pub use closest::{ClosestRegion, LineDifference};
pub use edit::{apply_edits, Edit, EditError, EditOutcome};
pub use matcher::MatchLevel;
pub use patch::{apply_file_patch, parse_patch, FilePatch, Format, Hunk, HunkLine, HunkRange, PatchError, PatchResult};
