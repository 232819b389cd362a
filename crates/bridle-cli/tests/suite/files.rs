//! Every file tool through `bridle tool ... --mode auto`: section-12 keys and exit codes, real
//! files, diffs in the result.

use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::bridle::*;

async fn tool(dirs: &Dirs, name: &str, args: Value) -> (Option<i32>, Value) {
    let args = args.to_string();
    let out = bridle(dirs, &["tool", name, "--args", &args, "--mode", "auto"]).await;
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "one JSON object: {}", stdout(&out));
    (out.status.code(), lines.into_iter().next().unwrap())
}

fn output(report: &Value) -> &str {
    report["result"]["output"].as_str().unwrap()
}

#[tokio::test]
async fn write_read_append_edit_and_patch_a_file() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;

    let (code, r) =
        tool(&dirs, "write_file", json!({"path": "src/lib.rs", "content": "fn a() {\n    one();\n}\n"})).await;
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["executed"], true);
    assert_eq!(output(&r), "Created src/lib.rs (+3 -0 lines, 22 bytes).");
    assert!(r["result"]["diff"].as_str().unwrap().starts_with("--- /dev/null\n+++ b/src/lib.rs\n"));
    assert_eq!(std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(), "fn a() {\n    one();\n}\n");

    let (code, r) = tool(&dirs, "read_file", json!({"path": "src/lib.rs", "start_line": 2, "end_line": 2})).await;
    assert_eq!((code, output(&r)), (Some(0), "    one();\n"));
    assert_eq!(r["result"]["details"]["totalLines"], 3);

    let (code, r) = tool(&dirs, "append_file", json!({"path": "src/lib.rs", "content": "fn b() {}\n"})).await;
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(), "fn a() {\n    one();\n}\nfn b() {}\n");

    // Indentation drift: the model indents with a tab, the file with spaces; level 4 finds it and
    // re-indents the replacement to the file's spaces.
    let (code, r) = tool(
        &dirs,
        "edit_file",
        json!({"path": "src/lib.rs", "old_string": "\tone();", "new_string": "\ttwo();\n\tthree();"}),
    )
    .await;
    assert_eq!(code, Some(0), "{r}");
    assert!(output(&r).contains("arguments were repaired"), "aliases are noted: {}", output(&r));
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        "fn a() {\n    two();\n    three();\n}\nfn b() {}\n"
    );
    assert!(r["result"]["diff"].as_str().unwrap().contains("-    one();\n+    two();\n+    three();\n"));

    let patch = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -4,1 +4,1 @@\n-fn b() {}\n+fn b() { a(); }\n--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+# demo\n";
    let (code, r) = tool(&dirs, "apply_patch", json!({"patch": patch})).await;
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(
        output(&r),
        "Changed 2 files: Created README.md (+1 -0 lines, 7 bytes); Updated src/lib.rs (+1 -1 lines, 51 bytes)."
    );
    let kinds: Vec<&str> =
        r["result"]["details"]["changes"].as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["created", "modified"]);
    assert_eq!(std::fs::read_to_string(ws.join("README.md")).unwrap(), "# demo\n");
    assert!(std::fs::read_to_string(ws.join("src/lib.rs")).unwrap().ends_with("fn b() { a(); }\n"));
}

#[tokio::test]
async fn failed_edits_and_patches_write_nothing_and_exit_1() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::write(ws.join("a.txt"), "alpha\nbeta\nalpha\n").unwrap();
    std::fs::write(ws.join("b.txt"), "bee\n").unwrap();
    let before = std::fs::metadata(ws.join("a.txt")).unwrap().modified().unwrap();

    let (code, r) = tool(&dirs, "edit_file", json!({"path": "a.txt", "old_text": "alpha", "new_text": "gamma"})).await;
    assert_eq!(code, Some(1));
    assert_eq!(r["executed"], true);
    assert!(output(&r).contains("2") && output(&r).contains("line"), "{}", output(&r));

    let (code, r) = tool(
        &dirs,
        "edit_file",
        json!({"path": "a.txt", "edits": [
            {"old_text": "beta", "new_text": "BETA"},
            {"old_text": "no such text", "new_text": "x"}
        ]}),
    )
    .await;
    assert_eq!(code, Some(1));
    assert!(output(&r).contains("edits[1]"), "{}", output(&r));

    // The second file's hunk does not apply: the first file is not touched either.
    let patch =
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-omega\n+OMEGA\n";
    let (code, r) = tool(&dirs, "apply_patch", json!({"patch": patch})).await;
    assert_eq!(code, Some(1), "{r}");
    assert!(output(&r).contains("Nothing was changed"), "{}", output(&r));

    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "alpha\nbeta\nalpha\n");
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "bee\n");
    assert_eq!(std::fs::metadata(ws.join("a.txt")).unwrap().modified().unwrap(), before);
}

/// Issue 27: the model follows the "not found" advice and copies the closest region, numbers
/// and all, with a blank line around it: the edit applies; a copy that is still wrong writes
/// nothing.
#[tokio::test]
async fn an_edit_copied_from_the_closest_region_with_its_numbers_applies() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    let original = "fn main() {\n    let total = add(1, 2);\n    println!(\"{total}\");\n}\n";
    std::fs::write(ws.join("main.rs"), original).unwrap();
    let edit = |old: &str, new: &str| json!({"path": "main.rs", "old_text": old, "new_text": new});

    let (code, r) = tool(&dirs, "edit_file", edit("\nlet total = add(1, 3);\nprintln!(\"{total}\");", "x")).await;
    assert_eq!(code, Some(1));
    let excerpt: Vec<&str> = output(&r).lines().filter(|l| l.contains(" | ")).collect();
    assert_eq!(
        excerpt[1..3],
        ["   2 |     let total = add(1, 2);", "   3 |     println!(\"{total}\");"],
        "{}",
        output(&r)
    );
    // Still wrong once the numbers are off (a changed line): nothing is written.
    let wrong = format!("{}\n   3 |     println!(\"{{sum}}\");", excerpt[1]);
    let (code, r) = tool(&dirs, "edit_file", edit(&wrong, "x")).await;
    assert_eq!(code, Some(1), "{r}");
    assert!(output(&r).contains("The closest region"), "{}", output(&r));
    assert_eq!(std::fs::read_to_string(ws.join("main.rs")).unwrap(), original);

    let copied = format!("\n{}\n", excerpt[1..3].join("\n"));
    let (code, r) =
        tool(&dirs, "edit_file", edit(&copied, "    let total = add(1, 2) * 2;\n    println!(\"{total}\");\n")).await;
    assert_eq!(code, Some(0), "{r}");
    assert!(output(&r).contains("line-number prefixes"), "{}", output(&r));
    assert_eq!(
        std::fs::read_to_string(ws.join("main.rs")).unwrap(),
        "fn main() {\n    let total = add(1, 2) * 2;\n    println!(\"{total}\");\n}\n"
    );
}

#[tokio::test]
async fn bash_reports_exit_codes_and_runs_in_the_workspace() {
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join("marker"), "").unwrap();
    let (code, r) = tool(&dirs, "bash", json!({"command": "ls; exit 7"})).await;
    assert_eq!(code, Some(0), "a non-zero exit is not an error of the harness: {r}");
    assert_eq!(r["result"]["isError"], false);
    assert_eq!(output(&r), "exit code 7\nmarker\n");
    assert_eq!(r["result"]["details"]["exitCode"], 7);
}

#[tokio::test]
async fn crlf_files_stay_crlf_through_the_cli() {
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join("win.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    let (code, r) =
        tool(&dirs, "edit_file", json!({"path": "win.txt", "old_text": "two\nthree", "new_text": "2\n3"})).await;
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(std::fs::read(dirs.workspace.join("win.txt")).unwrap(), b"one\r\n2\r\n3\r\n");
}

#[tokio::test]
async fn list_glob_and_grep_honour_gitignore() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::create_dir_all(ws.join("src/deep")).unwrap();
    std::fs::create_dir_all(ws.join("target")).unwrap();
    std::fs::write(ws.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn needle() {}\n").unwrap();
    std::fs::write(ws.join("src/deep/mod.rs"), "// Needle in a comment\n").unwrap();
    std::fs::write(ws.join("target/out.rs"), "fn needle() {}\n").unwrap();

    let (code, r) = tool(&dirs, "list_files", json!({})).await;
    assert_eq!(code, Some(0), "{r}");
    let listing = output(&r);
    assert!(listing.contains("src/") && listing.contains("src/lib.rs") && !listing.contains("target"), "{listing}");

    let (code, r) = tool(&dirs, "glob_search", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["result"]["details"]["files"], json!(["src/deep/mod.rs", "src/lib.rs"]));

    let (code, r) = tool(&dirs, "grep_search", json!({"pattern": "needle", "case_insensitive": true})).await;
    assert_eq!(code, Some(0), "{r}");
    let found = output(&r);
    assert!(found.contains("src/deep/mod.rs:1:// Needle in a comment"), "{found}");
    assert!(found.contains("src/lib.rs:1:pub fn needle() {}"), "{found}");
    assert!(!found.contains("target/"), "{found}");

    let (code, r) = tool(&dirs, "grep_search", json!({"pattern": "needle("})).await;
    assert_eq!(code, Some(1), "an invalid regex is an error result: {r}");
    assert!(output(&r).contains("needle("), "{}", output(&r));
}

/// Regression: `read_file` or `write_file` of a FIFO a shell command made hung forever. Now each
/// file tool answers at once, exit 1, with an error naming the path and what it is; the FIFO is
/// left as it was and a search of the folder still finds the regular file beside it.
#[tokio::test]
async fn a_fifo_is_refused_by_name_and_nothing_blocks() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    let made = std::process::Command::new("mkfifo").arg(ws.join("fifo")).status().unwrap();
    assert!(made.success());
    std::fs::write(ws.join("notes.txt"), "a needle\n").unwrap();
    let attempts = [
        ("read_file", json!({"path": "fifo"})),
        ("write_file", json!({"path": "fifo", "content": "x\n"})),
        ("append_file", json!({"path": "fifo", "content": "x\n"})),
        ("edit_file", json!({"path": "fifo", "old_text": "a", "new_text": "b"})),
        ("grep_search", json!({"pattern": "needle", "path": "fifo"})),
    ];
    for (name, args) in attempts {
        // The hang detector: a blocked open would never return.
        let (code, r) = tokio::time::timeout(std::time::Duration::from_secs(30), tool(&dirs, name, args))
            .await
            .unwrap_or_else(|_| panic!("`bridle tool {name}` on a FIFO did not return within 30 s"));
        assert_eq!(code, Some(1), "{name}: {r}");
        assert_eq!(r["executed"], true, "{name}: {r}");
        assert_eq!(r["result"]["isError"], true, "{name}: {r}");
        assert!(output(&r).contains("`fifo` is a FIFO (named pipe)"), "{name}: {}", output(&r));
    }
    let fifo = std::fs::symlink_metadata(ws.join("fifo")).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&fifo.file_type()), "the FIFO is left as it was");

    let (code, r) = tool(&dirs, "grep_search", json!({"pattern": "needle"})).await;
    assert_eq!((code, output(&r)), (Some(0), "notes.txt:1:a needle"), "{r}");
}
