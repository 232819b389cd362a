#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::*;

fn edit(old: &str, new: &str) -> Edit {
    Edit { old_text: old.into(), new_text: new.into(), replace_all: false }
}

fn all(old: &str, new: &str) -> Edit {
    Edit { replace_all: true, ..edit(old, new) }
}

fn one(content: &str, old: &str, new: &str) -> Result<EditOutcome, EditError> {
    apply_edits(content, &[edit(old, new)], None)
}

fn outcome(content: &str, replacements: usize, levels: &[MatchLevel]) -> EditOutcome {
    EditOutcome {
        content: content.into(),
        replacements,
        levels: levels.to_vec(),
        readings: vec![Reading::default(); levels.len()],
    }
}

#[test]
fn exact_match_replaces_inside_a_line() {
    let result = one("fn main() {\n    let x = 1;\n}\n", "x = 1", "x = 2").unwrap();
    assert_eq!(result, outcome("fn main() {\n    let x = 2;\n}\n", 1, &[MatchLevel::Exact]));
}

#[test]
fn crlf_file_edited_with_lf_text_stays_crlf_byte_for_byte() {
    let file = "a\r\nb\r\nc\r\nd\r\n";
    let result = one(file, "b\nc\n", "B\nX\nC\n").unwrap();
    assert_eq!(result, outcome("a\r\nB\r\nX\r\nC\r\nd\r\n", 1, &[MatchLevel::LineEndings]));
}

#[test]
fn crlf_file_single_line_exact_match_gets_crlf_new_lines() {
    let result = one("one\r\ntwo\r\n", "two", "2\nand 3").unwrap();
    assert_eq!(result, outcome("one\r\n2\r\nand 3\r\n", 1, &[MatchLevel::Exact]));
}

#[test]
fn crlf_old_text_matches_an_lf_file_at_level_two() {
    let result = one("a\nb\nc\n", "a\r\nb", "x\r\ny").unwrap();
    assert_eq!(result, outcome("x\ny\nc\n", 1, &[MatchLevel::LineEndings]));
}

#[test]
fn mixed_endings_keep_untouched_lines_byte_for_byte() {
    let result = one("a\r\nb\nc\r\n", "  c", "  C\n  D").unwrap();
    assert_eq!(result, outcome("a\r\nb\nC\r\nD\r\n", 1, &[MatchLevel::Indentation]));
}

#[test]
fn trailing_whitespace_is_ignored_at_level_three() {
    let file = "if a {  \n    go();\t\n}\n";
    let result = one(file, "if a {\n    go();\n}", "if a {\n    stop();\n}").unwrap();
    assert_eq!(result, outcome("if a {\n    stop();\n}\n", 1, &[MatchLevel::TrailingWhitespace]));
}

#[test]
fn indentation_drift_reindents_a_multi_line_replacement_deeper() {
    let file = "impl A {\n    fn f(&self) {\n        if x {\n            y();\n        }\n    }\n}\n";
    let old = "if x {\n    y();\n}\n";
    let new = "if x {\n    y();\n    if z {\n        w();\n    }\n}\n";
    let result = one(file, old, new).unwrap();
    let expected = "impl A {\n    fn f(&self) {\n        if x {\n            y();\n            if z {\n                w();\n            }\n        }\n    }\n}\n";
    assert_eq!(result, outcome(expected, 1, &[MatchLevel::Indentation]));
}

#[test]
fn tab_indented_file_edited_with_spaces_keeps_tabs_and_relative_depth() {
    let file = "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n";
    let old = "    if ok {\n        run()\n    }";
    let new = "    if ok {\n        run()\n        if again {\n            run()\n        }\n    }";
    let result = one(file, old, new).unwrap();
    let expected = "func main() {\n\tif ok {\n\t\trun()\n\t\tif again {\n\t\t\trun()\n\t\t}\n\t}\n}\n";
    assert_eq!(result, outcome(expected, 1, &[MatchLevel::Indentation]));
}

#[test]
fn crlf_file_with_indentation_drift_gets_crlf_reindented_lines() {
    let file = "a {\r\n  b;\r\n}\r\n";
    let result = one(file, "    b;\n", "    b;\n    c;\n").unwrap();
    assert_eq!(result, outcome("a {\r\n  b;\r\n  c;\r\n}\r\n", 1, &[MatchLevel::Indentation]));
}

#[test]
fn unicode_punctuation_matches_at_level_five_and_new_text_is_written_as_given() {
    let file =
        "say(\u{201c}it\u{2019}s fine\u{201d});\nrange = 1\u{2013}2;\n\u{a0}\u{a0}x = a\u{2014}b\u{2026}\u{200b}\n";
    let old = "say(\"it's fine\");\nrange = 1-2;\nx = a-b...";
    let new = "say(\"it's great\");\nrange = 1-3;\nx = a-b...";
    let result = one(file, old, new).unwrap();
    assert_eq!(result, outcome("say(\"it's great\");\nrange = 1-3;\nx = a-b...\n", 1, &[MatchLevel::Punctuation]));
}

#[test]
fn nbsp_indentation_matches_at_level_five() {
    let result = one("a\n\u{a0}\u{a0}b \u{2212} c\n", "b - c", "b + c").unwrap();
    assert_eq!(result, outcome("a\nb + c\n", 1, &[MatchLevel::Punctuation]));
}

#[test]
fn overlapping_occurrences_are_ambiguous() {
    let error = one("aaa\n", "aa", "b").unwrap_err();
    assert_eq!(
        error,
        EditError::Ambiguous { edit: None, count: 2, lines: vec![1, 1], level: MatchLevel::Exact, hint: None }
    );
    assert!(error.to_string().contains("old_text matches 2 places, at line 1 (2 overlapping matches)"), "{error}");
}

#[test]
fn a_block_that_appears_twice_is_ambiguous_with_both_lines() {
    let file = "x\nfoo()\nbar()\ny\nfoo()\nbar()\n";
    let error = one(file, "foo()\nbar()", "baz()").unwrap_err();
    assert_eq!(
        error,
        EditError::Ambiguous { edit: None, count: 2, lines: vec![2, 5], level: MatchLevel::Exact, hint: None }
    );
    assert!(error.to_string().contains("at lines 2 and 5. Add surrounding lines"), "{error}");
}

#[test]
fn a_block_that_appears_twice_at_different_depths_is_ambiguous_ignoring_indentation() {
    let file = "  foo()\n  bar()\n\tfoo()\n\tbar()\n";
    let error = one(file, "foo()\nbar()", "baz()").unwrap_err();
    assert_eq!(
        error,
        EditError::Ambiguous { edit: None, count: 2, lines: vec![1, 3], level: MatchLevel::Indentation, hint: None }
    );
    assert!(error.to_string().contains("2 places (ignoring indentation), at lines 1 and 3"), "{error}");
}

#[test]
fn line_hint_picks_the_nearest_match() {
    let file = "v = 1\nv = 1\nother\nv = 1\n";
    let result = apply_edits(file, &[edit("v = 1", "v = 2")], Some(4)).unwrap();
    assert_eq!(result.content, "v = 1\nv = 1\nother\nv = 2\n");
    let result = apply_edits(file, &[edit("v = 1", "v = 2")], Some(2)).unwrap();
    assert_eq!(result.content, "v = 1\nv = 2\nother\nv = 1\n");
}

#[test]
fn line_hint_inside_a_multi_line_match_counts_as_distance_zero() {
    let file = "a\nb\nc\nx\na\nb\nc\n";
    let result = apply_edits(file, &[edit("a\nb\nc", "z")], Some(6)).unwrap();
    assert_eq!(result.content, "a\nb\nc\nx\nz\n");
}

#[test]
fn line_hint_equally_near_two_matches_is_still_ambiguous() {
    let error = apply_edits("k\nm\nk\n", &[edit("k", "j")], Some(2)).unwrap_err();
    assert_eq!(
        error,
        EditError::Ambiguous { edit: None, count: 2, lines: vec![1, 3], level: MatchLevel::Exact, hint: Some(2) }
    );
    assert!(error.to_string().contains("line_hint 2 is as near to more than one of them"), "{error}");
}

#[test]
fn replace_all_replaces_non_overlapping_matches_left_to_right() {
    let result = apply_edits("aaaa aaa\n", &[all("aa", "b")], None).unwrap();
    assert_eq!(result, outcome("bb ba\n", 3, &[MatchLevel::Exact]));
}

#[test]
fn replace_all_at_a_line_level_reindents_each_match() {
    let file = "  old();\nkeep\n\t\told();\n";
    let result = apply_edits(file, &[all("    old();", "    new();\n    more();")], None).unwrap();
    assert_eq!(result, outcome("  new();\n  more();\nkeep\n\t\tnew();\n\t\tmore();\n", 2, &[MatchLevel::Indentation]));
}

#[test]
fn batch_edits_apply_in_order_to_the_previous_result() {
    let edits = [edit("alpha", "beta"), edit("beta\ngamma", "delta")];
    let result = apply_edits("alpha\ngamma\n", &edits, None).unwrap();
    assert_eq!(result, outcome("delta\n", 2, &[MatchLevel::Exact, MatchLevel::Exact]));
}

#[test]
fn a_failing_edit_in_a_batch_is_named_and_nothing_is_produced() {
    let edits = [edit("alpha", "beta"), edit("missing_thing", "x")];
    let error = apply_edits("alpha\ngamma\n", &edits, None).unwrap_err();
    assert_eq!(error.edit_index(), Some(1));
    assert_eq!(error, EditError::NotFound { edit: Some(1), closest: None });
    let message = error.to_string();
    assert!(message.starts_with("edits[1] failed, so no edit was applied: old_text was not found"), "{message}");
    assert!(
        message.contains("Edits apply in order, so edits[1] must match the file as the edits before it left it."),
        "{message}"
    );
}

#[test]
fn validation_errors_in_a_batch_name_the_edit() {
    let error = apply_edits("a\n", &[edit("a", "b"), edit(" \n\t", "x")], None).unwrap_err();
    assert_eq!(error, EditError::EmptyOldText { edit: Some(1) });
    let error = apply_edits("a\n", &[edit("a", "a")], None).unwrap_err();
    assert_eq!(error, EditError::NoChange { edit: None });
    assert_eq!(apply_edits("a\n", &[], None).unwrap_err(), EditError::NoEdits);
    assert_eq!(one("a\n", "", "b").unwrap_err(), EditError::EmptyOldText { edit: None });
}

#[test]
fn not_found_shows_the_closest_region_with_line_numbers() {
    let file: String = (1..=40).map(|n| format!("fn handler_{n}() -> u32 {{ {n} }}\n")).collect();
    let error = one(&file, "fn handler_20() -> u64 { 20 }\nfn handler_21() -> u32 { 21 }", "x").unwrap_err();
    let expected = "old_text was not found in the file, not even ignoring line endings, trailing \
        whitespace, indentation or Unicode punctuation.\n\
        The closest region of the file is lines 18-23:\n\
        \x20 18 | fn handler_18() -> u32 { 18 }\n\
        \x20 19 | fn handler_19() -> u32 { 19 }\n\
        \x20 20 | fn handler_20() -> u32 { 20 }\n\
        \x20 21 | fn handler_21() -> u32 { 21 }\n\
        \x20 22 | fn handler_22() -> u32 { 22 }\n\
        \x20 23 | fn handler_23() -> u32 { 23 }\n\
        Line 1 of old_text differs from line 20 of the file.\n\
        Copy the lines exactly as the file has them, without the `  N | ` line numbers, and retry.";
    assert_eq!(error.to_string(), expected);
}

#[test]
fn bom_is_kept() {
    let result = one("\u{feff}name = \"x\"\n", "name = \"x\"", "name = \"y\"").unwrap();
    assert_eq!(result.content, "\u{feff}name = \"y\"\n");
}

#[test]
fn missing_final_newline_is_kept_even_when_new_text_ends_with_one() {
    let result = one("a\nlast", "last", "final\n").unwrap();
    assert_eq!(result.content, "a\nfinal");
    let result = one("a\n  last", "last\n", "final\nmore\n").unwrap();
    assert_eq!(result, outcome("a\n  final\n  more", 1, &[MatchLevel::Indentation]));
}

#[test]
fn final_newline_is_kept_when_new_text_drops_it() {
    let result = one("a\r\nb\r\n", "b\r\n", "c").unwrap();
    assert_eq!(result.content, "a\r\nc\r\n");
}

#[test]
fn exact_level_is_a_plain_substring_replacement() {
    // Level 1 is literal: old_text may start mid-line, and new_text is not re-indented.
    let result = one("keep\n    drop_me();\nkeep too\n", "drop_me();\n", "").unwrap();
    assert_eq!(result, outcome("keep\n    keep too\n", 1, &[MatchLevel::Exact]));
}

#[test]
fn old_text_ending_in_a_newline_removes_whole_lines_at_line_levels() {
    let result = one("keep\n\tdrop_me();\nkeep too\n", "    drop_me();\n", "").unwrap();
    assert_eq!(result, outcome("keep\nkeep too\n", 1, &[MatchLevel::Indentation]));
}

#[test]
fn level_descriptions_are_sentences_for_the_model() {
    assert_eq!(MatchLevel::Exact.describe(), "matched exactly");
    assert!(MatchLevel::Indentation.describe().contains("re-indented"));
}

/// Median of `runs` timings of `f`.
fn median_time(runs: usize, mut f: impl FnMut()) -> std::time::Duration {
    let mut times: Vec<_> = (0..runs)
        .map(|_| {
            let start = std::time::Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Run with `cargo test --release -- --ignored --nocapture --test-threads=1`.
#[test]
#[ignore = "timing; run in release"]
fn level_four_on_a_large_file() {
    let file: String =
        (0..100_000).map(|n| format!("    let value_{n} = compute({n}, \"some text here\");\n")).collect();
    let old = "let value_99990 = compute(99990, \"some text here\");\n\
               let value_99991 = compute(99991, \"some text here\");";
    let result = one(&file, old, "changed();").unwrap();
    assert_eq!(result.levels, vec![MatchLevel::Indentation]);
    assert!(result.content.contains("\n    changed();\n    let value_99992"));
    let elapsed = median_time(9, || {
        one(&file, old, "changed();").unwrap();
    });
    println!("level-4 edit on 100k lines: median {elapsed:?}");

    let missing = "let value_99990 = compute(99990, \"other\");";
    assert!(one(&file, missing, "x").unwrap_err().to_string().contains("99990 |"));
    let elapsed = median_time(5, || {
        one(&file, missing, "x").unwrap_err();
    });
    println!("not found (closest region) on 100k lines: median {elapsed:?}");
}
