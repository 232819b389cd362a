//! Edits read again when not found as sent: copied line-number prefixes and blank ends.

#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::*;

fn edit(old: &str, new: &str) -> Edit {
    Edit { old_text: old.into(), new_text: new.into(), replace_all: false }
}

fn one(content: &str, old: &str, new: &str) -> Result<EditOutcome, EditError> {
    apply_edits(content, &[edit(old, new)], None)
}

const FILE: &str = "fn main() {\n    let total = add(1, 2);\n\n    println!(\"{total}\");\n}\n\nfn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n";

/// The excerpt lines of a "not found" error, as the model saw them.
fn excerpt_of(error: &EditError) -> Vec<String> {
    let EditError::NotFound { closest: Some(region), .. } = error else { panic!("{error:?}") };
    region.excerpt.lines().map(str::to_string).collect()
}

#[test]
fn the_closest_region_copied_with_its_numbers_is_applied() {
    let error = one(FILE, "let total = add(1, 3);\nprintln!(\"{total}\");", "x").unwrap_err();
    let excerpt = excerpt_of(&error);
    assert_eq!(excerpt[1], "   2 |     let total = add(1, 2);");
    // Lines 2-4 as copied, in several spellings a model sends.
    let copied = excerpt[1..4].join("\n");
    let trimmed_ends: String = excerpt[1..4].iter().map(|l| l.trim_end().to_string() + "\n").collect();
    let unpadded = excerpt[1..4].iter().map(|l| l.trim_start()).collect::<Vec<_>>().join("\n");
    let crlf = excerpt[1..4].join("\r\n") + "\r\n";
    let expected = FILE.replace("add(1, 2);\n\n    println", "add(1, 2) * 2;\n\n    println");
    for old in [copied, trimmed_ends, unpadded, crlf] {
        // new_text without numbers, and with them on every line.
        for new in [
            "    let total = add(1, 2) * 2;\n\n    println!(\"{total}\");".to_string(),
            "   2 |     let total = add(1, 2) * 2;\n   3 | \n   4 |     println!(\"{total}\");".to_string(),
        ] {
            // The model keeps new_text's ending in step with old_text's.
            let new = if old.ends_with('\n') { new + "\n" } else { new };
            let result = one(FILE, &old, &new).unwrap_or_else(|e| panic!("{old:?}: {e}"));
            assert_eq!(result.content, expected, "{old:?} / {new:?}");
            assert!(result.readings[0].line_numbers_removed, "{old:?}");
            assert_eq!(result.readings[0].new_text_line_numbers_removed, new.starts_with("   2 |"));
        }
    }
}

#[test]
fn new_text_numbered_on_some_lines_only_is_refused_with_what_to_fix() {
    let old = "   7 | fn add(a: u32, b: u32) -> u32 {\n   8 |     a + b\n   9 | }";
    let new = "   7 | fn add(a: u32, b: u32) -> u32 {\n    a.saturating_add(b)\n   9 | }";
    let error = one(FILE, old, new).unwrap_err();
    assert_eq!(error, EditError::PartlyNumberedNewText { edit: None });
    assert!(error.to_string().contains("Send new_text without the prefixes"), "{error}");
    // In a batch, the failing edit is named and nothing is produced.
    let batch = [edit("add(1, 2)", "add(2, 1)"), edit(old, new)];
    assert_eq!(apply_edits(FILE, &batch, None).unwrap_err(), EditError::PartlyNumberedNewText { edit: Some(1) });
}

#[test]
fn numbers_are_not_stripped_unless_every_line_carries_one_in_order() {
    // The file itself holds text shaped like an excerpt: found as sent, left as it is.
    let table = "| n | square |\n|---|--------|\n  10 | 100\n  11 | 121\n";
    let result = one(table, "  10 | 100\n  11 | 121", "  10 | 100\n  11 | 121\n  12 | 144").unwrap();
    assert_eq!(result.content, "| n | square |\n|---|--------|\n  10 | 100\n  11 | 121\n  12 | 144\n");
    assert_eq!(result.readings[0], Reading::default());
    // One line without a number, numbers out of order, or numbers that are data: not found.
    for old in [
        "   7 | fn add(a: u32, b: u32) -> u32 {\n    a + b\n   9 | }",
        "   7 | fn add(a: u32, b: u32) -> u32 {\n   9 |     a + b",
        "   8 | fn add(a: u32, b: u32) -> u32 {\n   7 |     a + b",
        "7 |fn add(a: u32, b: u32) -> u32 {\n8 |    a + b",
    ] {
        let error = one(FILE, old, "x").unwrap_err();
        assert!(matches!(error, EditError::NotFound { closest: Some(_), .. }), "{old:?}: {error:?}");
    }
}

#[test]
fn the_numbers_pick_among_several_matches() {
    let file = "if ok {\n    go();\n}\nif ok {\n    go();\n}\n";
    let result = one(file, "   4 | if ok {\n   5 |     go();", "if ok {\n    stop();").unwrap();
    assert_eq!(result.content, "if ok {\n    go();\n}\nif ok {\n    stop();\n}\n");
    // Numbers as near to two matches: ambiguous, and no line_hint is named that was not given.
    let error = one(file, "   3 | if ok {\n   4 |     go();", "x").unwrap_err();
    assert!(matches!(&error, EditError::Ambiguous { hint: None, lines, .. } if lines == &[1, 4]), "{error:?}");
    // A line_hint the model gives still wins.
    let result =
        apply_edits(file, &[edit("   4 | if ok {\n   5 |     go();", "if ok {\n    stop();")], Some(1)).unwrap();
    assert_eq!(result.content, "if ok {\n    stop();\n}\nif ok {\n    go();\n}\n");
}

#[test]
fn blank_lines_at_the_ends_of_old_text_never_stop_a_match() {
    let file = "fn main() {\n    run();\n    stop();\n}\n";
    let expected = "fn main() {\n    run(1);\n    stop();\n}\n";
    for (old, new) in [
        ("\nfn main() {\n    run();", "\nfn main() {\n    run(1);"),
        ("\n\n  fn main() {\n      run();\n", "  fn main() {\n      run(1);\n"),
        ("    run();\n\n", "    run(1);\n\n"),
        ("   \n    run();\n  \t\n\n", "   \n    run(1);\n  \t\n\n"),
        ("\r\n    run();\r\n\r\n", "\r\n    run(1);\r\n\r\n"),
        ("\n\trun();\n\tstop();\n\n", "\n\trun(1);\n\tstop();\n\n"),
    ] {
        let result = one(file, old, new).unwrap_or_else(|e| panic!("{old:?}: {e}"));
        assert_eq!(result.content, expected, "{old:?}");
        assert!(result.readings[0].blank_ends_ignored, "{old:?}");
    }
    // Blank lines the file has are matched as sent.
    let spaced = "a\n\nb\n";
    let result = one(spaced, "\nb\n", "\nc\n").unwrap();
    assert_eq!((result.content.as_str(), result.readings[0]), ("a\n\nc\n", Reading::default()));
}

#[test]
fn a_blank_line_new_text_adds_is_kept_and_one_old_text_drops_is_dropped() {
    // "two" is the file's first line, so no line break comes before it.
    let file = "two\nthree\n";
    assert_eq!(one(file, "\ntwo\n", "\ntwo\n\nfour\n").unwrap().content, "two\n\nfour\nthree\n");
    assert_eq!(one(file, "\ntwo\n", "\n").unwrap().content, "three\n");
    // A reading that would change nothing is no edit: not found, with the region shown.
    let error = one(file, "\ntwo", "two").unwrap_err();
    assert!(matches!(error, EditError::NotFound { closest: Some(_), .. }), "{error:?}");
}

#[test]
fn a_leading_blank_line_still_shows_the_closest_region_in_any_indentation() {
    let file = "fn main() {\n    run();\n}\n";
    for old in
        ["\nfn main() {\n    run(2);", "\n\t\tfn main() {\n\t\t\trun(2);\n\n", "\n  1 | fn main() {\n  2 |     run(2);"]
    {
        let error = one(file, old, "x").unwrap_err();
        let EditError::NotFound { closest: Some(region), .. } = &error else { panic!("{old:?}: {error:?}") };
        assert_eq!((region.first_line, region.last_line), (1, 3), "{old:?}");
        assert_eq!(region.first_difference.map(|d| d.file_line), Some(2), "{old:?}");
        assert!(!error.to_string().contains("Nothing in the file resembles it"));
    }
}

#[test]
fn prefixes_and_blank_ends_together_in_a_batch() {
    // Blank lines the model added around the copied lines 8-9, which end the file.
    let old = "\n   8 |     a + b\n   9 | }\n\n";
    let edits = [edit("add(1, 2)", "add(2, 1)"), edit(old, "    b + a\n}\n")];
    let result = apply_edits(FILE, &edits, None).unwrap();
    assert_eq!(result.content, FILE.replace("add(1, 2)", "add(2, 1)").replace("a + b", "b + a"));
    let reading =
        Reading { line_numbers_removed: true, new_text_line_numbers_removed: false, blank_ends_ignored: true };
    assert_eq!(result.readings, [Reading::default(), reading]);
    // A blank line the file has after the copied lines is matched as the file has it: a
    // new_text without it deletes it.
    let old = "   4 |     println!(\"{total}\");\n   5 | }\n   6 |\n";
    let result = one(FILE, old, "   4 |     println!(\"{}\", total);\n   5 | }\n").unwrap();
    assert_eq!(result.content, FILE.replace("println!(\"{total}\");\n}\n\n", "println!(\"{}\", total);\n}\n"));
    assert!(!result.readings[0].blank_ends_ignored);
    // A leading one is never read as the line break before the copied lines.
    let old = "   3 | \n   4 |     println!(\"{total}\");\n";
    let result = one(FILE, old, "    println!(\"{}\", total);\n").unwrap();
    assert_eq!(result.content, FILE.replace("println!(\"{total}\")", "println!(\"{}\", total)"));
    assert!(result.readings[0].blank_ends_ignored);
}
