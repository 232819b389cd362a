//! read_file on real files: pages, hints, encodings, binary files, huge files.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::tools::testing::context;

async fn read(root: &std::path::Path, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
    let args: ReadFileArgs = serde_json::from_value(args).unwrap();
    ReadFile.run(&args, &context(root)).await
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    (tmp, root)
}

#[tokio::test]
async fn reads_raw_text_and_line_ranges() {
    let (_t, root) = setup();
    std::fs::write(root.join("a.txt"), "\u{feff}one\ntwo\nthree\nfour").unwrap();
    let all = read(&root, serde_json::json!({"path": "a.txt"})).await.unwrap();
    assert_eq!(all.output, "one\ntwo\nthree\nfour");
    assert_eq!(crate::tools::testing::details(&all)["totalLines"], 4);
    let some = read(&root, serde_json::json!({"path": "a.txt", "start_line": 2, "end_line": 3})).await.unwrap();
    assert_eq!(some.output, "two\nthree\n");
    assert_eq!(crate::tools::testing::details(&some)["totalLines"], 4);
    let past = read(&root, serde_json::json!({"path": "a.txt", "start_line": 9})).await.unwrap();
    assert_eq!(past.output, "a.txt has 4 lines; there is nothing at line 9.");
    assert!(read(&root, serde_json::json!({"path": "a.txt", "start_line": 3, "end_line": 2})).await.is_err());
}

#[tokio::test]
async fn long_files_come_in_pages_that_name_the_next_start_line() {
    let (_t, root) = setup();
    let text: String = (1..=20_000).map(|i| format!("line {i:05}\n")).collect();
    std::fs::write(root.join("big.txt"), &text).unwrap();
    let page = read(&root, serde_json::json!({"path": "big.txt"})).await.unwrap();
    assert!(page.output.len() <= PAGE_BYTES + 200);
    let last_shown = PAGE_BYTES / 11;
    assert!(
        page.output
            .contains(&format!("[showing lines 1-{last_shown} of 20000; continue with start_line={}]", last_shown + 1)),
        "{}",
        &page.output[page.output.len() - 120..]
    );
    let next = read(&root, serde_json::json!({"path": "big.txt", "start_line": last_shown + 1})).await.unwrap();
    assert!(next.output.starts_with(&format!("line {:05}\n", last_shown + 1)));
}

#[tokio::test]
async fn a_line_longer_than_a_page_is_cut_on_a_character_boundary() {
    let (_t, root) = setup();
    std::fs::write(root.join("wide.txt"), "é".repeat(40_000) + "\nnext\n").unwrap();
    let page = read(&root, serde_json::json!({"path": "wide.txt"})).await.unwrap();
    assert!(page.output.contains("[line 1 is longer than 51200 bytes and was cut here]"));
    assert!(page.output.contains("continue with start_line=2"));
    assert!(!page.output.contains('\u{FFFD}'));
}

#[tokio::test]
async fn binary_utf16_and_invalid_utf8() {
    let (_t, root) = setup();
    std::fs::write(root.join("bin"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    let bin = read(&root, serde_json::json!({"path": "bin"})).await.unwrap();
    assert_eq!(bin.output, "bin is a binary file (6 bytes); its content is not shown.");
    let utf16: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("héllo\nwörld\n".encode_utf16().flat_map(|u| u.to_le_bytes())).collect();
    std::fs::write(root.join("u16.txt"), utf16).unwrap();
    let page = read(&root, serde_json::json!({"path": "u16.txt"})).await.unwrap();
    assert_eq!(page.output, "héllo\nwörld\n");
    assert_eq!(crate::tools::testing::details(&page)["encoding"], "utf-16le");
    std::fs::write(root.join("latin1.txt"), b"caf\xe9\n").unwrap();
    assert_eq!(read(&root, serde_json::json!({"path": "latin1.txt"})).await.unwrap().output, "caf\u{FFFD}\n");
}

#[tokio::test]
async fn missing_files_and_directories_are_clear_errors() {
    let (_t, root) = setup();
    std::fs::create_dir_all(root.join("dir")).unwrap();
    let missing = read(&root, serde_json::json!({"path": "nope.txt"})).await.unwrap_err();
    assert!(missing.0.contains("nope.txt") && missing.0.contains("No such file"), "{missing}");
    assert_eq!(read(&root, serde_json::json!({"path": "dir"})).await.unwrap_err().0, "`dir` is a directory");
}
