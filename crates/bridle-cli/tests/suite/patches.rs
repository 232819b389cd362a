//! `apply_patch` as models write it, through `bridle tool ... --mode auto` on real files: the
//! `*** Begin Patch` format OpenAI's models are trained to write, and unified diffs, all or
//! nothing; nothing overwritten by a creation or a move; errors that name the format.

use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::bridle::*;

async fn apply(dirs: &Dirs, patch: &str) -> (Option<i32>, Value) {
    let args = json!({ "patch": patch }).to_string();
    let out = bridle(dirs, &["tool", "apply_patch", "--args", &args, "--mode", "auto"]).await;
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "one JSON object: {}", stdout(&out));
    (out.status.code(), lines.into_iter().next().unwrap())
}

fn output(report: &Value) -> &str {
    report["result"]["output"].as_str().unwrap()
}

fn read(dirs: &Dirs, path: &str) -> Option<String> {
    std::fs::read_to_string(dirs.workspace.join(path)).ok()
}

fn write(dirs: &Dirs, path: &str, text: &str) {
    let path = dirs.workspace.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_codex_patch_adds_deletes_updates_and_moves_files_in_one_go() {
    let dirs = Dirs::new();
    write(
        &dirs,
        "src/app.py",
        "import sys\n\n\ndef greet():\n    print(\"hi\")\n\n\ndef part():\n    print(\"bye\")\n",
    );
    write(&dirs, "old.txt", "obsolete\n");
    write(&dirs, "lib/util.py", "def helper():\n    return 1\n");
    let patch = "*** Begin Patch\n\
                 *** Add File: docs/notes.md\n\
                 +# Notes\n\
                 +\n\
                 +Greeting changed.\n\
                 *** Delete File: old.txt\n\
                 *** Update File: src/app.py\n\
                 @@ def greet():\n\
                 -    print(\"hi\")\n\
                 +    print(\"hello\")\n\
                 @@ def part():\n\
                 -    print(\"bye\")\n\
                 +    print(\"goodbye\")\n\
                 *** Update File: lib/util.py\n\
                 *** Move to: lib/helpers.py\n\
                 @@\n\
                 -    return 1\n\
                 +    return 2\n\
                 *** End Patch\n";
    let (code, r) = apply(&dirs, patch).await;
    assert_eq!(code, Some(0), "{r}");
    assert!(output(&r).starts_with("Changed 5 files"), "{}", output(&r));
    assert_eq!(read(&dirs, "docs/notes.md").unwrap(), "# Notes\n\nGreeting changed.\n");
    assert_eq!(read(&dirs, "old.txt"), None);
    assert_eq!(
        read(&dirs, "src/app.py").unwrap(),
        "import sys\n\n\ndef greet():\n    print(\"hello\")\n\n\ndef part():\n    print(\"goodbye\")\n"
    );
    assert_eq!(read(&dirs, "lib/util.py"), None);
    assert_eq!(read(&dirs, "lib/helpers.py").unwrap(), "def helper():\n    return 2\n");
}

#[tokio::test]
async fn one_change_that_does_not_apply_leaves_every_file_as_it_was() {
    let dirs = Dirs::new();
    write(&dirs, "a.txt", "alpha\n");
    write(&dirs, "b.txt", "beta\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-alpha\n+ALPHA\n*** Add File: c.txt\n+new\n\
                 *** Update File: b.txt\n-gamma\n+GAMMA\n*** End Patch";
    let (code, r) = apply(&dirs, patch).await;
    assert_eq!(code, Some(1), "{r}");
    assert!(output(&r).contains("file b.txt") && output(&r).contains("Nothing was changed"), "{}", output(&r));
    assert_eq!((read(&dirs, "a.txt").unwrap(), read(&dirs, "b.txt").unwrap()), ("alpha\n".into(), "beta\n".into()));
    assert_eq!(read(&dirs, "c.txt"), None);
}

#[tokio::test]
async fn a_creation_or_a_move_onto_a_file_that_exists_is_refused_and_the_file_is_untouched() {
    let dirs = Dirs::new();
    let kept = "precious\r\nbytes \u{2014} as they are\n";
    write(&dirs, "keep.txt", kept);
    write(&dirs, "other.txt", "other\n");
    let attempts = [
        "--- /dev/null\n+++ b/keep.txt\n@@ -0,0 +1 @@\n+replaced\n".to_string(),
        "*** Begin Patch\n*** Add File: keep.txt\n+replaced\n*** End Patch".to_string(),
        "*** Begin Patch\n*** Update File: other.txt\n*** Move to: keep.txt\n-other\n+moved\n*** End Patch".to_string(),
        "--- a/other.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-other\n+moved\n".to_string(),
        "diff --git a/other.txt b/keep.txt\nsimilarity index 100%\nrename from other.txt\nrename to keep.txt\n"
            .to_string(),
    ];
    for patch in &attempts {
        let (code, r) = apply(&dirs, patch).await;
        assert_eq!(code, Some(1), "{patch}: {r}");
        assert!(output(&r).contains("already exists"), "{patch}: {}", output(&r));
        assert_eq!(std::fs::read(dirs.workspace.join("keep.txt")).unwrap(), kept.as_bytes(), "{patch}");
        assert_eq!(read(&dirs, "other.txt").unwrap(), "other\n", "{patch}");
    }
}

#[tokio::test]
async fn git_renames_copies_and_headers_without_numbers_apply() {
    let dirs = Dirs::new();
    write(&dirs, "old.rs", "fn f() {}\n");
    write(&dirs, "base.rs", "fn g() {}\n");
    write(&dirs, "main.rs", "fn main() {\n    f();\n}\n");
    let patch = "diff --git a/old.rs b/new.rs\nsimilarity index 100%\nrename from old.rs\nrename to new.rs\n\
                 diff --git a/base.rs b/copy.rs\nsimilarity index 100%\ncopy from base.rs\ncopy to copy.rs\n\
                 diff --git a/main.rs b/main.rs\n--- a/main.rs\n+++ b/main.rs\n@@ ... @@\n fn main() {\n-    f();\n+    g();\n }\n";
    let (code, r) = apply(&dirs, patch).await;
    assert_eq!(code, Some(0), "{r}");
    assert_eq!((read(&dirs, "old.rs"), read(&dirs, "new.rs").unwrap()), (None, "fn f() {}\n".into()));
    assert_eq!(
        (read(&dirs, "base.rs").unwrap(), read(&dirs, "copy.rs").unwrap()),
        ("fn g() {}\n".into(), "fn g() {}\n".into())
    );
    assert_eq!(read(&dirs, "main.rs").unwrap(), "fn main() {\n    g();\n}\n");
}

#[tokio::test]
async fn an_unreadable_patch_is_refused_naming_the_format_it_looks_like() {
    let dirs = Dirs::new();
    write(&dirs, "f.txt", "a\nb\n");
    let cases = [
        ("*** Begin Patch\n*** Update File: f.txt\n a\nb changed\n*** End Patch", "`*** Begin Patch` patch, line 4"),
        ("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\nb changed\n-b\n", "unified diff, line 5"),
        ("change b to c in f.txt", "neither a unified diff nor a `*** Begin Patch` patch"),
    ];
    for (patch, words) in cases {
        let (code, r) = apply(&dirs, patch).await;
        assert_eq!(code, Some(1), "{patch}: {r}");
        assert!(output(&r).contains(words), "{patch}: {}", output(&r));
        assert_eq!(read(&dirs, "f.txt").unwrap(), "a\nb\n");
    }
}
