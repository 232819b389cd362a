#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::*;

fn context(text: &str) -> HunkLine {
    HunkLine::Context(text.into())
}
fn remove(text: &str) -> HunkLine {
    HunkLine::Remove(text.into())
}
fn add(text: &str) -> HunkLine {
    HunkLine::Add(text.into())
}
fn range(start: usize, len: usize) -> Option<HunkRange> {
    Some(HunkRange { start, len })
}
fn hunk(old: Option<HunkRange>, new: Option<HunkRange>, lines: Vec<HunkLine>) -> Hunk {
    Hunk { old, new, ..Hunk::of(lines) }
}

/// Parses a one-file patch and applies it.
fn patch(original: Option<&str>, text: &str) -> Result<PatchResult, PatchError> {
    let files = parse_patch(text).unwrap();
    assert_eq!(files.len(), 1);
    apply_file_patch(original, &files[0])
}

fn written(content: &str, levels: &[MatchLevel]) -> PatchResult {
    PatchResult::Write { content: content.into(), levels: levels.to_vec() }
}

#[test]
fn parses_several_files_with_git_headers_prefixes_and_timestamps() {
    let text = "diff --git a/src/a.rs b/src/a.rs\n\
                index 83db48f..bf269f4 100644\n\
                --- a/src/a.rs\t2024-01-01 10:00:00.000000000 +0100\n\
                +++ b/src/a.rs\t2024-01-02 10:00:00.000000000 +0100\n\
                @@ -1,2 +1,2 @@ fn main\n\
                \x20keep\n\
                -old\n\
                +new\n\
                diff --git a/gone.txt b/gone.txt\n\
                deleted file mode 100644\n\
                --- a/gone.txt\n\
                +++ /dev/null\n\
                @@ -1 +0,0 @@\n\
                -bye\n\
                --- /dev/null\n\
                +++ b/new.txt\n\
                @@ -0,0 +1,2 @@\n\
                +hello\n\
                +world\n";
    let expected = vec![
        FilePatch {
            old_path: Some("src/a.rs".into()),
            new_path: Some("src/a.rs".into()),
            hunks: vec![hunk(range(1, 2), range(1, 2), vec![context("keep"), remove("old"), add("new")])],
            copy: false,
        },
        FilePatch {
            old_path: Some("gone.txt".into()),
            new_path: None,
            hunks: vec![hunk(range(1, 1), range(0, 0), vec![remove("bye")])],
            copy: false,
        },
        FilePatch {
            old_path: None,
            new_path: Some("new.txt".into()),
            hunks: vec![hunk(range(0, 0), range(1, 2), vec![add("hello"), add("world")])],
            copy: false,
        },
    ];
    assert_eq!(parse_patch(text).unwrap(), expected);
    assert_eq!(expected[1].path(), "gone.txt");
}

#[test]
fn parses_bare_hunk_headers_crlf_text_quoted_paths_and_spaced_timestamps() {
    let text = "--- \"a/caf\\303\\251 x.txt\"\r\n+++ b/caf\u{e9} x.txt 2024-03-01 12:00:00\r\n@@\r\n a\r\n\r\n-b\r\n+c\r\n\r\n\r\n";
    let expected = FilePatch {
        old_path: Some("caf\u{e9} x.txt".into()),
        new_path: Some("caf\u{e9} x.txt".into()),
        hunks: vec![hunk(None, None, vec![context("a"), context(""), remove("b"), add("c")])],
        copy: false,
    };
    assert_eq!(parse_patch(text).unwrap(), vec![expected]);
}

#[test]
fn trailing_blank_lines_are_context_only_within_the_header_counts() {
    let text = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n\n\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n";
    let files = parse_patch(text).unwrap();
    assert_eq!(files[0].hunks[0].lines, vec![context("a"), remove("b"), add("c"), context("")]);
    assert_eq!(files[1].hunks[0].lines, vec![remove("x"), add("y")]);
}

#[test]
fn no_newline_markers_are_recorded_per_side() {
    let text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n";
    let files = parse_patch(text).unwrap();
    let hunk = &files[0].hunks[0];
    assert_eq!((hunk.old_missing_newline, hunk.new_missing_newline), (true, false));
}

#[test]
fn parse_errors_say_where_and_what() {
    assert_eq!(parse_patch("just words\n").unwrap_err(), PatchError::NoFiles);
    let error = parse_patch("@@ -1 +1 @@\n-a\n+b\n").unwrap_err();
    assert!(matches!(error, PatchError::Malformed { line: 1, .. }), "{error}");
    let error = parse_patch("--- a/f\n+++ b/f\n@@ -x +1 @@\n-a\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unified diff, line 3: the hunk header `@@ -x +1 @@` should look like `@@ -12,5 +12,6 @@`"
    );
    let error = parse_patch("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\nb\n-c\n+d\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unified diff, line 5: `b` is inside a hunk but does not start with ' ' (context), '-' (removed) or '+' (added)"
    );
    let error = parse_patch("--- a/f\n+++ b/f\n@@\n a\nb\n-c\n").unwrap_err();
    assert!(matches!(error, PatchError::Malformed { line: 5, .. }), "{error}");
    assert!(matches!(
        parse_patch("--- /dev/null\n+++ /dev/null\n").unwrap_err(),
        PatchError::Malformed { line: 1, .. }
    ));
}

#[test]
fn prose_after_the_last_hunk_is_ignored() {
    let files = parse_patch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nThat is all.\n").unwrap();
    assert_eq!(files[0].hunks[0].lines, vec![remove("a"), add("b")]);
}

#[test]
fn applies_a_hunk_exactly() {
    let result =
        patch(Some("one\ntwo\nthree\n"), "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n").unwrap();
    assert_eq!(result, written("one\n2\nthree\n", &[MatchLevel::Exact]));
}

#[test]
fn line_numbers_are_hints_and_offsets_carry_to_the_next_hunk() {
    let file = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let text = "--- a/f\n+++ b/f\n@@ -20,2 +20,2 @@\n b\n-c\n+C\n@@ -24,2 +24,2 @@\n f\n-g\n+G\n";
    assert_eq!(
        patch(Some(file), text).unwrap(),
        written("a\nb\nC\nd\ne\nf\nG\nh\n", &[MatchLevel::Exact, MatchLevel::Exact])
    );
}

#[test]
fn the_match_nearest_the_stated_line_wins() {
    let file = "x = 1\ny\nx = 1\ny\nx = 1\n";
    let text = "--- a/f\n+++ b/f\n@@ -3,1 +3,1 @@\n-x = 1\n+x = 2\n";
    assert_eq!(patch(Some(file), text).unwrap(), written("x = 1\ny\nx = 2\ny\nx = 1\n", &[MatchLevel::Exact]));
}

#[test]
fn fuzzy_context_keeps_the_files_context_lines_and_reindents_added_ones() {
    let file = "fn f() {\n\tlet a = \u{201c}x\u{201d};  \n\tgo();\n}\n";
    let text = "--- a/f\n+++ b/f\n@@ -1,4 +1,5 @@\n fn f() {\n     let a = \"x\";\n-    go();\n+    go_faster();\n+    stop();\n }\n";
    let expected = "fn f() {\n\tlet a = \u{201c}x\u{201d};  \n\tgo_faster();\n\tstop();\n}\n";
    assert_eq!(patch(Some(file), text).unwrap(), written(expected, &[MatchLevel::Punctuation]));
}

#[test]
fn trailing_whitespace_in_the_patch_matches_at_level_three() {
    let file = "a\nb\nc\n";
    let text = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a \n-b\t\n+B\n";
    assert_eq!(patch(Some(file), text).unwrap(), written("a\nB\nc\n", &[MatchLevel::TrailingWhitespace]));
}

#[test]
fn wrong_context_names_the_file_and_hunk_and_shows_the_closest_region() {
    let file: String = (1..=12).map(|n| format!("line number {n}\n")).collect();
    let text = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -2,1 +2,1 @@\n-line number 2\n+line two\n\
                @@ -9,2 +9,2 @@\n line number 9\n-line number ten\n+line 10\n";
    let error = patch(Some(&file), text).unwrap_err();
    let expected = "file src/a.rs, hunk 2 (@@ -9,2 +9,2 @@): its context and removed lines (those \
        starting with ' ' and '-') were not found in the file, not even ignoring line endings, \
        whitespace, indentation or Unicode punctuation. Hunks apply in order, so it was sought \
        after the lines of hunk 1.\n\
        The closest region of the file is lines 7-12:\n\
        \x20  7 | line number 7\n\
        \x20  8 | line number 8\n\
        \x20  9 | line number 9\n\
        \x20 10 | line number 10\n\
        \x20 11 | line number 11\n\
        \x20 12 | line number 12\n\
        Line 2 of the hunk's old side differs from line 10 of the file.\n\
        Make the ' ' and '-' lines match the file exactly and send the whole patch again.";
    assert_eq!(error.to_string(), expected);
    assert!(matches!(error, PatchError::HunkNotFound { hunk: 2, .. }));
}

#[test]
fn creates_a_file_from_dev_null_only_when_it_does_not_exist() {
    let text = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n";
    assert_eq!(patch(None, text).unwrap(), written("hello\nworld\n", &[MatchLevel::Exact]));
    assert_eq!(patch(Some(""), text).unwrap_err(), PatchError::AlreadyExists { path: "new.txt".into() });
    let no_newline = "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n";
    assert_eq!(patch(None, no_newline).unwrap(), written("x", &[MatchLevel::Exact]));
    let with_context = "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n a\n+x\n";
    assert_eq!(patch(None, with_context).unwrap_err(), PatchError::CreateWithContext { path: "n".into(), hunk: 1 });
}

#[test]
fn deletes_a_file_when_every_line_is_removed() {
    let text = "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n";
    assert_eq!(patch(Some("one\ntwo\n"), text).unwrap(), PatchResult::Delete);
    assert_eq!(
        patch(Some("one\ntwo\nthree\n"), text).unwrap_err(),
        PatchError::DeleteIncomplete { path: "old.txt".into(), remaining: 1 }
    );
    assert_eq!(patch(None, text).unwrap_err(), PatchError::Missing { path: "old.txt".into() });
    assert_eq!(patch(Some("x\n"), "--- a/old.txt\n+++ /dev/null\n").unwrap(), PatchResult::Delete);
}

#[test]
fn a_change_without_hunks_is_an_error() {
    let files = parse_patch("--- a/f\n+++ b/f\n").unwrap();
    assert_eq!(apply_file_patch(Some("x\n"), &files[0]).unwrap_err(), PatchError::NoHunks { path: "f".into() });
}

#[test]
fn missing_final_newline_is_kept_unless_the_marker_changes_it() {
    let change_last = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
    assert_eq!(patch(Some("a\nb"), change_last).unwrap(), written("a\nc", &[MatchLevel::Exact]));
    let add_newline = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
    assert_eq!(patch(Some("a\nb"), add_newline).unwrap(), written("a\nb\n", &[MatchLevel::Exact]));
    let drop_newline = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n";
    assert_eq!(patch(Some("a\nb\n"), drop_newline).unwrap(), written("a\nb", &[MatchLevel::Exact]));
    let append = "--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+c\n";
    assert_eq!(patch(Some("a\nb"), append).unwrap(), written("a\nb\nc", &[MatchLevel::Exact]));
}

#[test]
fn crlf_and_bom_are_kept() {
    let text = "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n-b\n+B\n+C\n";
    let result = patch(Some("\u{feff}a\r\nb\r\nz\r\n"), text).unwrap();
    assert_eq!(result, written("\u{feff}a\r\nB\r\nC\r\nz\r\n", &[MatchLevel::Exact]));
}

#[test]
fn a_multi_file_patch_applies_file_by_file_without_writing() {
    let text = "--- a/one\n+++ b/one\n@@ -1 +1 @@\n-1\n+uno\n--- a/two\n+++ b/two\n@@ -1 +1,2 @@\n 2\n+dos\n";
    let files = parse_patch(text).unwrap();
    let results: Vec<_> = [Some("1\n"), Some("2\n")]
        .into_iter()
        .zip(&files)
        .map(|(content, file)| apply_file_patch(content, file).unwrap())
        .collect();
    assert_eq!(results, vec![written("uno\n", &[MatchLevel::Exact]), written("2\ndos\n", &[MatchLevel::Exact])]);
}

/// Run with `cargo test --release -- --ignored --nocapture --test-threads=1`.
#[test]
#[ignore = "timing; run in release"]
fn fuzzy_hunk_on_a_large_file() {
    let file: String = (0..100_000).map(|n| format!("    let value_{n} = compute({n});\n")).collect();
    let text = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n let value_99990 = compute(99990);\n-let value_99991 = compute(99991);\n+changed();\n";
    let files = parse_patch(text).unwrap();
    let result = apply_file_patch(Some(&file), &files[0]).unwrap();
    let mut times: Vec<_> = (0..9)
        .map(|_| {
            let start = std::time::Instant::now();
            apply_file_patch(Some(&file), &files[0]).unwrap();
            start.elapsed()
        })
        .collect();
    times.sort();
    println!("level-4 hunk on 100k lines: median {:?}", times[4]);
    let PatchResult::Write { content, levels } = result else { panic!("expected a write") };
    assert_eq!(levels, vec![MatchLevel::Indentation]);
    assert!(content.contains("    let value_99990 = compute(99990);\n    changed();\n    let value_99992"));
}

// The `*** Begin Patch` format.

/// Parses a patch and applies its only file's part to `original`.
fn codex(original: Option<&str>, text: &str) -> Result<PatchResult, PatchError> {
    let files = parse_patch(text)?;
    assert_eq!(files.len(), 1, "{files:?}");
    apply_file_patch(original, &files[0])
}

#[test]
fn codex_patches_add_delete_update_and_move_files() {
    let text = "*** Begin Patch\n\
                *** Add File: docs/new.md\n\
                +# New\n\
                +\n\
                +text\n\
                *** Delete File: old.txt\n\
                *** Update File: src/app.py\n\
                *** Move to: src/main.py\n\
                @@ def greet():\n\
                -    print(\"hi\")\n\
                +    print(\"hello\")\n\
                *** End Patch\n";
    let files = parse_patch(text).unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!((files[0].old_path.as_deref(), files[0].new_path.as_deref()), (None, Some("docs/new.md")));
    assert_eq!(files[0].hunks[0].lines, vec![add("# New"), add(""), add("text")]);
    assert_eq!((files[1].old_path.as_deref(), files[1].new_path.as_deref()), (Some("old.txt"), None));
    assert!(files[1].hunks.is_empty());
    assert_eq!((files[2].old_path.as_deref(), files[2].new_path.as_deref()), (Some("src/app.py"), Some("src/main.py")));
    assert_eq!(files[2].hunks[0].anchors, vec!["def greet():".to_string()]);
    assert_eq!(apply_file_patch(None, &files[0]).unwrap(), written("# New\n\ntext\n", &[MatchLevel::Exact]));
    assert_eq!(apply_file_patch(Some("bye\n"), &files[1]).unwrap(), PatchResult::Delete);
    let app = "import sys\n\ndef greet():\n    print(\"hi\")\n";
    let PatchResult::Write { content, .. } = apply_file_patch(Some(app), &files[2]).unwrap() else { panic!() };
    assert_eq!(content, "import sys\n\ndef greet():\n    print(\"hello\")\n");
}

#[test]
fn codex_anchors_pick_the_occurrence_after_them() {
    let file = "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 1\n";
    // Without the anchor the first `return 1` would be taken; with it, B's.
    let text = "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n@@     def run(self):\n-        return 1\n+        return 2\n*** End Patch";
    let PatchResult::Write { content, .. } = codex(Some(file), text).unwrap() else { panic!() };
    assert_eq!(
        content,
        file.replacen("return 1\n", "#", 1).replace("return 1", "return 2").replacen('#', "return 1\n", 1)
    );
    // Bare `@@` lines only separate changes; the first change may have none.
    let text = "*** Begin Patch\n*** Update File: m.py\n class A:\n-    def run(self):\n+    def go(self):\n@@\n class B:\n-    def run(self):\n+    def stop(self):\n*** End Patch";
    let PatchResult::Write { content, .. } = codex(Some(file), text).unwrap() else { panic!() };
    assert!(
        content.contains("class A:\n    def go(self):") && content.contains("class B:\n    def stop(self):"),
        "{content}"
    );
    // An anchor the file does not hold is named, with the closest line.
    let text =
        "*** Begin Patch\n*** Update File: m.py\n@@ class C:\n-        return 1\n+        return 3\n*** End Patch";
    let error = codex(Some(file), text).unwrap_err().to_string();
    assert!(error.contains("`@@ class C:`") && error.contains("closest"), "{error}");
}

#[test]
fn codex_end_of_file_takes_the_last_occurrence() {
    let file = "x = 1\nprint(x)\nx = 1\nprint(x)\n";
    let text =
        "*** Begin Patch\n*** Update File: f.py\n x = 1\n-print(x)\n+print(x + 1)\n*** End of File\n*** End Patch\n";
    let PatchResult::Write { content, .. } = codex(Some(file), text).unwrap() else { panic!() };
    assert_eq!(content, "x = 1\nprint(x)\nx = 1\nprint(x + 1)\n");
}

#[test]
fn codex_markers_may_be_padded_end_patch_missing_and_a_heredoc_around_it() {
    let file = "a\nb\n";
    for text in [
        "  *** Begin Patch  \n*** Update File:   f.txt  \n@@\n a\n-b\n+c\n   *** End Patch\n",
        "*** Begin Patch\n*** Update File: f.txt\n a\n-b\n+c\n",
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: f.txt\n a\n-b\n+c\n*** End Patch\nEOF\n",
        "apply_patch <<\"PATCH\"\r\n*** Begin Patch\r\n*** Update File: f.txt\r\n a\r\n-b\r\n+c\r\n*** End Patch\r\nPATCH",
        "*** Update File: f.txt\n a\n-b\n+c\n",
    ] {
        let result = codex(Some(file), text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(result, written("a\nc\n", &[MatchLevel::Exact]), "{text:?}");
    }
    // A unified diff in a heredoc too.
    let text = "cat <<EOF | git apply\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\nEOF\n";
    assert_eq!(patch(Some(file), text).unwrap(), written("a\nc\n", &[MatchLevel::Exact]));
}

#[test]
fn malformed_codex_patches_are_refused_naming_the_format_and_the_line() {
    let cases = [
        ("*** Begin Patch\n*** Update File: f.txt\n a\nb\n-c\n*** End Patch", 4, "is in a change"),
        ("*** Begin Patch\n*** Add File: n.txt\nhello\n*** End Patch", 3, "every line starts with '+'"),
        ("*** Begin Patch\nchange f.txt please\n*** End Patch", 2, "outside any file"),
        ("*** Begin Patch\n*** Update File: f.txt\n*** End Patch", 2, "no change under it"),
        ("*** Begin Patch\n*** Delete File:\n*** End Patch", 2, "names no file"),
        ("*** Begin Patch\n*** Update File: f.txt\n*** End of File\n*** End Patch", 3, "ends no hunk"),
    ];
    for (text, line, words) in cases {
        let error = parse_patch(text).unwrap_err();
        let PatchError::Malformed { format, line: at, .. } = &error else { panic!("{text:?}: {error:?}") };
        assert_eq!((*format, *at), (Format::Codex, line), "{text:?}: {error}");
        let message = error.to_string();
        assert!(message.starts_with(&format!("`*** Begin Patch` patch, line {line}: ")), "{message}");
        assert!(message.contains(words), "{message}");
    }
    // Neither format: both examples are shown.
    let message = parse_patch("please change b to c in f.txt").unwrap_err().to_string();
    assert!(message.contains("--- a/src/app.py") && message.contains("*** Begin Patch"), "{message}");
}

#[test]
fn unified_headers_without_numbers_and_git_renames_and_copies() {
    for header in ["@@", "@@ ... @@", "@@ ... @@ fn main", "@@ fn main"] {
        let text = format!("--- a/f\n+++ b/f\n{header}\n a\n-b\n+c\n");
        assert_eq!(patch(Some("a\nb\n"), &text).unwrap(), written("a\nc\n", &[MatchLevel::Exact]), "{header}");
    }
    let text = "diff --git a/old.rs b/new.rs\nsimilarity index 100%\nrename from old.rs\nrename to new.rs\n\
                diff --git a/x.rs b/y.rs\nsimilarity index 100%\ncopy from x.rs\ncopy to y.rs\n";
    let files = parse_patch(text).unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(
        (files[0].old_path.as_deref(), files[0].new_path.as_deref(), files[0].copy),
        (Some("old.rs"), Some("new.rs"), false)
    );
    assert_eq!(
        (files[1].old_path.as_deref(), files[1].new_path.as_deref(), files[1].copy),
        (Some("x.rs"), Some("y.rs"), true)
    );
    assert_eq!(apply_file_patch(Some("fn f() {}\n"), &files[0]).unwrap(), written("fn f() {}\n", &[]));
    // A rename with changes keeps its hunks.
    let text = "diff --git a/a.txt b/b.txt\nsimilarity index 80%\nrename from a.txt\nrename to b.txt\n--- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+y\n";
    let files = parse_patch(text).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].hunks.len(), 1);
}

#[test]
fn a_creation_of_a_file_that_exists_is_refused_in_both_formats() {
    let unified = "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+new\n";
    let codex_add = "*** Begin Patch\n*** Add File: f.txt\n+new\n*** End Patch";
    for text in [unified, codex_add] {
        let error = codex(Some("old\n"), text).unwrap_err();
        assert!(matches!(error, PatchError::AlreadyExists { .. }), "{error:?}");
        assert!(error.to_string().contains("*** Update File: f.txt"), "{error}");
    }
}

#[test]
fn a_codex_context_line_that_reads_like_an_anchor_is_context() {
    // The file's own line `@@ x` is context (' ' first), never an anchor.
    let file = "head\n@@ x\nold\n";
    let text = "*** Begin Patch\n*** Update File: f\n @@ x\n-old\n+new\n*** End Patch";
    assert_eq!(codex(Some(file), text).unwrap(), written("head\n@@ x\nnew\n", &[MatchLevel::Exact]));
}
