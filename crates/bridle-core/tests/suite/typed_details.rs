//! What a tool did is typed (DESIGN §2, issue 38 item 4): a built-in tool's result speaks through
//! `ToolResult.details`, and `data` is an MCP server's output, passed along whole. The test reads
//! the source of every crate and of the window and fails, by file and line, on a reader of `data`
//! by key: in Rust a key read on a `.data` field (`.data.get(`, `.data["…"]`, `.data.pointer(`) or
//! a borrow of it to read or write inside (`.data.as_ref()`, `.data.as_mut()`, `&mut x.data`); in
//! `ui/src` (the generated bindings aside) the old hand readers `data.effects`, `data.hosts`,
//! `data.sandbox` and `isObject`.
//!
//! Rust tests are left out (`tests.rs`, `*_tests.rs`, `tests/` folders, inline `#[cfg(test)] mod`
//! blocks), as are comments; the window's tests are not.

use super::source::{code_lines, source_files, ui_files};

/// Whether `line` (code, not a comment) reads or writes a `.data` field by key.
fn reads_data_by_key(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    let key_reads = [".data.get(", ".data[", ".data.pointer(", ".data.as_ref()", ".data.as_mut()", ".data.as_object"];
    if key_reads.iter().any(|p| code.contains(p)) {
        return true;
    }
    // `&mut out.data`: handed to a helper that writes keys into it.
    code.match_indices("&mut ").any(|(at, m)| {
        let rest = &code[at + m.len()..];
        let path: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.').collect();
        path.ends_with(".data")
    })
}

#[test]
fn no_rust_code_reads_a_results_data_by_key() {
    let sources = source_files();
    assert!(sources.len() > 100, "the walk found {} files: is the repository where it was?", sources.len());
    let mut wrong = Vec::new();
    for (rel, file) in sources {
        for (n, line) in code_lines(&file).into_iter().filter(|(_, line)| reads_data_by_key(line)) {
            wrong.push(format!("{rel}:{n}: {}", line.trim()));
        }
    }
    assert!(wrong.is_empty(), "data read by key (read the typed ToolResult.details instead):\n{}", wrong.join("\n"));
}

#[test]
fn the_window_reads_no_result_by_hand() {
    let sources = ui_files();
    assert!(sources.len() > 20, "the walk found {} files in ui/src", sources.len());
    let mut wrong = Vec::new();
    for (rel, file) in sources {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for banned in ["data.effects", "data.hosts", "data.sandbox", "isObject"] {
                if line.contains(banned) {
                    wrong.push(format!("{rel}:{}: {banned}", n + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "hand readers of a result in ui/src (switch on the generated ToolDetails):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_key_read_finder_sees_each_spelling_and_no_comment() {
    for line in [
        r#"let plan = result.data.as_ref().and_then(|d| d.get("plan"));"#,
        r#"out.data["effects"] = json!({});"#,
        r#"if r.data.get("sandbox").is_some() {"#,
        "let effects = effects_of(&mut out.data);",
        r#"x.data.pointer("/a/b")"#,
    ] {
        assert!(reads_data_by_key(line), "{line}");
    }
    for line in [
        "// result.data.as_ref() was read by key once",
        "data: out.data,",
        r#""data": result.data,"#,
        "None => result.data.clone(),",
        r#"let kind = data.get("type");"#,
        "&mut out.details",
    ] {
        assert!(!reads_data_by_key(line), "{line}");
    }
}
