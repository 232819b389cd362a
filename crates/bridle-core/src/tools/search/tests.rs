//! Tests for the search tools, each on its own temporary tree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use super::*;

/// A temporary workspace; `root` is canonical, as the sandbox would hand it over.
struct Tree {
    _dir: TempDir,
    root: PathBuf,
}

impl Tree {
    fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let tree = Tree { _dir: dir, root };
        for (path, content) in files {
            tree.write(path, content.as_bytes());
        }
        tree
    }

    fn write(&self, path: &str, content: &[u8]) {
        let path = self.root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn list(&self, dir: &str, depth: Option<usize>) -> Vec<String> {
        list_files(&self.root, &self.path(dir), depth, 1000).unwrap().entries
    }

    fn glob(&self, base: &str, pattern: &str) -> Vec<String> {
        glob_search(&self.root, &self.path(base), pattern, 1000).unwrap().files
    }

    fn grep(&self, base: &str, opts: &GrepOptions) -> GrepHits {
        grep_search(&self.root, &self.path(base), opts).unwrap()
    }

    fn grep_lines(&self, opts: &GrepOptions) -> Vec<String> {
        self.grep("", opts).hits().map(|(path, line, text)| format!("{path}:{line}:{text}")).collect()
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Ignore rules from every source the walkers honour, in one tree: a root .gitignore, a
/// nested one, a `.ignore` file and git's exclude file (no `git init`: a plain folder's
/// .gitignore still counts).
fn ignored_tree() -> Tree {
    Tree::new(&[
        (".gitignore", "target/\n*.log\n"),
        (".ignore", "scratch.txt\n"),
        (".git/info/exclude", "excluded.txt\n"),
        (".git/config", "needle in git internals\n"),
        ("src/main.rs", "fn main() { needle(); }\n"),
        ("target/debug/out.rs", "needle\n"),
        ("build.log", "needle\n"),
        ("scratch.txt", "needle\n"),
        ("excluded.txt", "needle\n"),
        ("sub/.gitignore", "secret.txt\n"),
        ("sub/secret.txt", "needle\n"),
        ("sub/keep.txt", "needle\n"),
        (".github/workflows/ci.yml", "needle: true\n"),
        (".env.example", "NEEDLE=1\n"),
    ])
}

#[test]
fn list_honours_ignore_files_shows_hidden_and_skips_git() {
    let tree = ignored_tree();
    assert_eq!(
        tree.list("", None),
        strings(&[
            ".env.example",
            ".github/",
            ".github/workflows/",
            ".github/workflows/ci.yml",
            ".gitignore",
            ".ignore",
            "src/",
            "src/main.rs",
            "sub/",
            "sub/.gitignore",
            "sub/keep.txt",
        ])
    );
}

#[test]
fn list_depth_and_subdirectory_paths_are_root_relative() {
    let tree = Tree::new(&[("a/b/c/d.txt", ""), ("a/top.txt", ""), ("z.txt", "")]);
    assert_eq!(tree.list("", Some(1)), strings(&["a/", "z.txt"]));
    assert_eq!(tree.list("a", Some(1)), strings(&["a/b/", "a/top.txt"]));
    assert_eq!(tree.list("a", Some(2)), strings(&["a/b/", "a/b/c/", "a/top.txt"]));
    assert_eq!(tree.list("a", Some(0)), tree.list("a", Some(1)), "depth 0 reads as 1");
}

#[test]
fn list_truncation_keeps_the_shallowest_entries() {
    let tree = Tree::new(&[("a/1", ""), ("a/2", ""), ("a/3", ""), ("b", ""), ("c/4", "")]);
    let listing = list_files(&tree.root, &tree.root, Some(2), 3).unwrap();
    assert_eq!(listing, Listing { entries: strings(&["a/", "b", "c/"]), truncated: true, total: Some(7) });
    assert_eq!(listing.render(), "a/\nb\nc/\n(showing 3 of 7 entries; narrow the path or lower the depth)");
}

#[test]
fn list_rejects_files_and_paths_outside_the_root() {
    let tree = Tree::new(&[("file.txt", "")]);
    let err = list_files(&tree.root, &tree.path("file.txt"), None, 10).unwrap_err();
    assert_eq!(err.to_string(), "`file.txt` is not a directory");
    let err = list_files(&tree.root, Path::new("/etc"), None, 10).unwrap_err();
    assert!(matches!(err, SearchError::OutsideRoot { .. }), "{err}");
    let err = list_files(&tree.root, &tree.path("missing"), None, 10).unwrap_err();
    assert!(err.to_string().starts_with("cannot read `missing`"), "{err}");
}

#[test]
fn glob_star_stays_in_one_directory_and_double_star_spans_them() {
    let tree = Tree::new(&[("a.rs", ""), ("b.txt", ""), ("src/lib.rs", ""), ("src/x/mod.rs", "")]);
    assert_eq!(tree.glob("", "*.rs"), strings(&["a.rs"]));
    assert_eq!(tree.glob("", "**/*.rs"), strings(&["a.rs", "src/lib.rs", "src/x/mod.rs"]));
    assert_eq!(tree.glob("", "./src/*.rs"), strings(&["src/lib.rs"]));
    // Matched relative to the base, reported relative to the root.
    assert_eq!(tree.glob("src", "*.rs"), strings(&["src/lib.rs"]));
    assert_eq!(tree.glob("src", "**/*.rs"), strings(&["src/lib.rs", "src/x/mod.rs"]));
    assert_eq!(tree.glob("src", "src/*.rs"), Vec::<String>::new());
    assert_eq!(tree.glob("", "*.{rs,txt}"), strings(&["a.rs", "b.txt"]));
}

#[test]
fn glob_honours_ignore_files_and_skips_git() {
    let tree = ignored_tree();
    assert_eq!(
        tree.glob("", "**/*"),
        strings(&[
            ".env.example",
            ".github/workflows/ci.yml",
            ".gitignore",
            ".ignore",
            "src/main.rs",
            "sub/.gitignore",
            "sub/keep.txt",
        ])
    );
}

#[test]
fn glob_truncates_in_path_order_and_counts_all() {
    let tree = Tree::new(&[("b/x.rs", ""), ("a.b.rs", ""), ("a/y.rs", ""), ("ab.rs", "")]);
    let hits = glob_search(&tree.root, &tree.root, "**/*.rs", 2).unwrap();
    // Component order: `a/…` before `a.b.rs` before `ab.rs`.
    assert_eq!(hits, GlobHits { files: strings(&["a/y.rs", "a.b.rs"]), truncated: true, total: 4 });
    assert_eq!(hits.render(), "a/y.rs\na.b.rs\n(showing 2 of 4 files; narrow the pattern or path)");
    let none = glob_search(&tree.root, &tree.root, "*.py", 2).unwrap();
    assert_eq!(none.render(), "(no files matched)");
}

#[test]
fn invalid_glob_names_the_problem() {
    let tree = Tree::new(&[]);
    let err = glob_search(&tree.root, &tree.root, "src/[a", 10).unwrap_err();
    assert_eq!(err.to_string(), "invalid glob `src/[a`: unclosed character class; missing ']'");
    let err = glob_search(&tree.root, &tree.root, "  ", 10).unwrap_err();
    assert!(matches!(err, SearchError::InvalidGlob { .. }), "{err}");
    let opts = GrepOptions { glob: Some("{a,b".into()), ..GrepOptions::new("x") };
    let err = grep_search(&tree.root, &tree.root, &opts).unwrap_err();
    assert!(err.to_string().starts_with("invalid glob `{a,b`: unclosed alternate group"), "{err}");
}

#[test]
fn grep_honours_ignore_files_searches_hidden_and_skips_git() {
    let tree = ignored_tree();
    let opts = GrepOptions { case_insensitive: true, ..GrepOptions::new("needle") };
    assert_eq!(
        tree.grep_lines(&opts),
        strings(&[
            ".env.example:1:NEEDLE=1",
            ".github/workflows/ci.yml:1:needle: true",
            "src/main.rs:1:fn main() { needle(); }",
            "sub/keep.txt:1:needle",
        ])
    );
}

#[test]
fn grep_is_case_sensitive_unless_asked() {
    let tree = Tree::new(&[("a.txt", "Hello\nhello\nHELLO\n")]);
    assert_eq!(tree.grep_lines(&GrepOptions::new("hello")), strings(&["a.txt:2:hello"]));
    let opts = GrepOptions { case_insensitive: true, ..GrepOptions::new("hello") };
    assert_eq!(tree.grep_lines(&opts), strings(&["a.txt:1:Hello", "a.txt:2:hello", "a.txt:3:HELLO"]));
}

#[test]
fn grep_glob_filter_uses_rg_glob_rules_and_never_unignores() {
    let tree = Tree::new(&[
        (".gitignore", "ignored.rs\n"),
        ("ignored.rs", "x\n"),
        ("top.rs", "x\n"),
        ("deep/er/mod.rs", "x\n"),
        ("notes.md", "x\n"),
        ("docs/guide.md", "x\n"),
    ]);
    let with_glob = |glob: &str| {
        let opts = GrepOptions { glob: Some(glob.into()), ..GrepOptions::new("x") };
        tree.grep("", &opts).files.into_iter().map(|f| f.path).collect::<Vec<_>>()
    };
    assert_eq!(with_glob("*.rs"), strings(&["deep/er/mod.rs", "top.rs"]));
    assert_eq!(with_glob("deep/**/*.rs"), strings(&["deep/er/mod.rs"]));
    assert_eq!(with_glob("!*.md"), strings(&["deep/er/mod.rs", "top.rs"]));
    assert_eq!(with_glob("!docs"), strings(&["deep/er/mod.rs", "notes.md", "top.rs"]));
}

#[test]
fn grep_truncates_to_the_first_hits_in_path_order_and_counts_all() {
    // Enough files that several walker threads each keep and drop some.
    let mut files = Vec::new();
    for dir in 0..8 {
        for file in 0..12 {
            files.push((format!("d{dir}/f{file:02}.txt"), "match one\nskip\nmatch two\n".to_string()));
        }
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let tree = Tree::new(&refs);
    let opts = GrepOptions { max_results: 5, ..GrepOptions::new("^match") };
    for _ in 0..5 {
        let hits = tree.grep("", &opts);
        let got: Vec<String> = hits.hits().map(|(path, line, _)| format!("{path}:{line}")).collect();
        assert_eq!(got, strings(&["d0/f00.txt:1", "d0/f00.txt:3", "d0/f01.txt:1", "d0/f01.txt:3", "d0/f02.txt:1"]));
        assert!(hits.truncated);
        assert_eq!((hits.total_matches, hits.files_matched), (192, 96));
    }
    let hits = tree.grep("d7", &GrepOptions { max_results: 2, ..opts.clone() });
    assert_eq!(
        hits.render(),
        "d7/f00.txt:1:match one\nd7/f00.txt:3:match two\n\
         (showing 2 of 24 matching lines; narrow the pattern or path)"
    );
}

#[test]
fn grep_cuts_long_lines_without_splitting_characters() {
    // "é" is 2 bytes and "🦀" 4: the cut at 5 characters lands inside multi-byte runs.
    let tree = Tree::new(&[("u.txt", "abéé🦀🦀🦀xyz\nshort\r\n")]);
    let opts = GrepOptions { max_line_chars: 5, ..GrepOptions::new(".") };
    assert_eq!(tree.grep_lines(&opts), strings(&["u.txt:1:abéé🦀… [+5 chars]", "u.txt:2:short"]));
    let opts = GrepOptions { max_line_chars: 0, ..GrepOptions::new("short") };
    assert_eq!(tree.grep_lines(&opts), strings(&["u.txt:2:… [+5 chars]"]));
}

#[test]
fn grep_skips_binary_and_oversized_files_and_counts_them() {
    let tree = Tree::new(&[("text.txt", "needle\n"), ("big.txt", &"needle\n".repeat(100))]);
    tree.write("blob.bin", b"needle\n\x00\x01\x02needle\n");
    let opts = GrepOptions { max_file_size: 100, ..GrepOptions::new("needle") };
    let hits = tree.grep("", &opts);
    assert_eq!(
        hits,
        GrepHits {
            files: vec![GrepFile { path: "text.txt".into(), lines: vec![GrepLine { line: 1, text: "needle".into() }] }],
            truncated: false,
            total_matches: 1,
            files_matched: 1,
            skipped_large: 1,
            skipped_binary: 1,
            unreadable: 0,
        }
    );
    assert_eq!(hits.render(), "text.txt:1:needle\n(1 files over the size limit were not searched)");
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_root_are_never_followed() {
    let outside = Tree::new(&[("secret/key.txt", "needle\n")]);
    let tree = Tree::new(&[("inside.txt", "needle\n")]);
    std::os::unix::fs::symlink(outside.path("secret"), tree.path("link")).unwrap();
    std::os::unix::fs::symlink(outside.path("secret/key.txt"), tree.path("key.txt")).unwrap();

    assert_eq!(tree.list("", None), strings(&["inside.txt", "key.txt", "link"]));
    assert_eq!(tree.glob("", "**/*"), strings(&["inside.txt"]));
    assert_eq!(tree.grep_lines(&GrepOptions::new("needle")), strings(&["inside.txt:1:needle"]));
}

#[test]
fn invalid_regex_reports_the_regex_error() {
    let tree = Tree::new(&[("a.txt", "x\n")]);
    let err = grep_search(&tree.root, &tree.root, &GrepOptions::new("fn (new")).unwrap_err();
    let SearchError::InvalidRegex { pattern, message } = &err else { panic!("{err:?}") };
    assert_eq!(pattern, "fn (new");
    assert!(message.contains("unclosed group"), "{message}");
    assert!(err.to_string().starts_with("invalid regex `fn (new`: "), "{err}");
}

#[test]
fn grep_searches_a_single_file_and_reports_no_matches() {
    let tree = Tree::new(&[("a.txt", "alpha\nbeta\n"), ("b.txt", "alpha\n")]);
    assert_eq!(tree.grep("a.txt", &GrepOptions::new("alpha")).hits().collect::<Vec<_>>(), vec![("a.txt", 1, "alpha")]);
    assert_eq!(tree.grep("", &GrepOptions::new("gamma")).render(), "(no matches)");
    let err = grep_search(&tree.root, Path::new("/"), &GrepOptions::new("x")).unwrap_err();
    assert!(matches!(err, SearchError::OutsideRoot { .. }), "{err}");
}

#[test]
fn path_order_keeps_a_directory_together() {
    let mut paths = vec!["ab", "a/z", "a.b", "a", "a/b/c"];
    paths.sort_by(|a, b| path_order(a, b));
    assert_eq!(paths, vec!["a", "a/b/c", "a/z", "a.b", "ab"]);
}
