//! One approval machine (DESIGN §2, §6): every question — to run a call, about a host a command
//! wants, about what a command changed — is an `ApprovalRequest` made in one place, the call
//! stream's, and says what it is about by its typed `subject`, never by a pseudo-tool name. The
//! test reads the non-test source of every crate and of the window and fails on a second
//! construction or on a name-keyed branch coming back.

use super::source::{code_lines, source_files, ui_files};

/// Spellings of a question told apart by a tool name.
const NAME_KEYED: &[&str] = &[
    "NETWORK_TOOL",
    "EFFECTS_TOOL",
    "tool == \"network\"",
    "tool == \"effects\"",
    "tool != \"network\"",
    "tool != \"effects\"",
    "tool === \"network\"",
    "tool === \"effects\"",
    "tool !== \"network\"",
    "tool !== \"effects\"",
    "\"effects\" =>",
    "\"network\" =>",
    "| \"effects\"",
    "| \"network\"",
];

fn code(line: &str) -> Option<&str> {
    let line = line.trim_start();
    (!line.starts_with("//") && !line.starts_with("*") && !line.starts_with("/*")).then_some(line)
}

#[test]
fn every_question_is_made_in_one_place_and_typed_by_its_subject() {
    let mut made = Vec::new();
    let mut keyed = Vec::new();
    for (rel, file) in source_files() {
        for (n, line) in code_lines(&file) {
            let Some(line) = code(&line) else { continue };
            if line.contains("ApprovalRequest {") && !line.contains("struct ApprovalRequest") {
                made.push(format!("{rel}:{n}"));
            }
            if NAME_KEYED.iter().any(|k| line.contains(k)) {
                keyed.push(format!("{rel}:{n}: {line}"));
            }
        }
    }
    let one = made.len() == 1 && made[0].starts_with("bridle-core/src/calls/stream.rs:");
    assert!(one, "an ApprovalRequest is made in the call stream and nowhere else: {made:?}");
    for (rel, file) in ui_files() {
        if rel.contains(".test.") || rel.starts_with("test/") {
            continue;
        }
        for (n, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            if code(line).is_some_and(|l| NAME_KEYED.iter().any(|k| l.contains(k))) {
                keyed.push(format!("ui/src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(keyed.is_empty(), "questions told apart by a tool name:\n{}", keyed.join("\n"));
}

#[test]
fn the_reader_sees_a_name_keyed_branch() {
    assert!(NAME_KEYED.iter().any(|k| "if request.tool === \"network\" {".contains(k)));
    assert!(NAME_KEYED.iter().any(|k| "\"bash\" | \"effects\" => \"edit\",".contains(k)));
    assert!(code("// tool == \"network\" was the old way").is_none());
}
