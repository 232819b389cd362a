//! The layers of bridle-core (DESIGN §1): every top-level module stands in a layer and uses only
//! modules of lower layers, or of its own layer as long as no circle forms.
//!
//! The test reads the source, not the compiler: every `.rs` file under `src/` (tests included) is
//! mapped to its top-level module by where it lies, and every `crate::x` path in it — `use` lines,
//! grouped `use crate::{a, b::c}` forms, inline paths in code, and `super::` chains that reach the
//! crate root — is an edge to `x`. Comments, doc comments and string literals are not code: a doc
//! link does not make a dependency.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The one table of the layers, highest first: why each layer is where it is, and its modules.
const LAYERS: &[(u8, &str, &[&str])] = &[
    (
        5,
        "builds everything below once per launch, from the environment and config: only front ends sit above",
        &["wiring", "settings", "session_host"],
    ),
    (
        4,
        "drives turns: runs calls through L3 and turns what happens into events, store rows and audit rows; and the desk the sessions work at (their worktrees, archive and hand-off), which a session's child may need",
        &["engine", "desk"],
    ),
    (
        3,
        "decides and runs one tool call from the parts of L2; the engine and every front end go through it",
        &["calls"],
    ),
    (
        2,
        "the parts a call is made of and judged by, each over one workspace and the state of L1",
        &["tools", "mcp", "guard", "hooks", "provider", "compaction", "brief", "audit", "skills"],
    ),
    (
        1,
        "the state one workspace or session holds (sandboxes, the network proxy, processes, store, keys, file changes, worktrees, the collector export), on primitives only",
        &["sandbox", "shell_sandbox", "network", "processes", "workspace", "worktrees", "store", "secrets", "changes", "telemetry"],
    ),
    (
        0,
        "leaves: plain data and primitives any layer may use, naming no other module",
        &["clock", "fs", "locks", "redact", "config"],
    ),
];

fn layer_of(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(_, _, modules)| modules.contains(&module)).map(|(layer, _, _)| *layer)
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `src`-relative file -> its top-level module and its depth in the module tree (`x.rs` and
/// `x/mod.rs` are 1, `x/y.rs` is 2); `None` for the crate root.
fn module_of(rel: &Path) -> Option<(String, usize)> {
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let (last, dirs) = parts.split_last()?;
    if dirs.is_empty() && last == "lib.rs" {
        return None;
    }
    let top = dirs.first().cloned().unwrap_or_else(|| last.trim_end_matches(".rs").to_string());
    let depth = if last == "mod.rs" { dirs.len() } else { dirs.len() + 1 };
    Some((top, depth))
}

/// `source` with comments and the contents of string and char literals blanked out (newlines
/// kept), so what is left is code.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !ident_char(i.checked_sub(1).map(|p| chars[p]))
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A char literal ('x', '\n', '\u{..}'); a lifetime has no closing quote.
            let mut j = if next == Some('\\') { i + 3 } else { i + 2 };
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            out.push_str(&" ".repeat(j + 1 - i));
            i = j + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The first identifier at the start of `text` (after spaces).
fn ident(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    (end > 0).then(|| &text[..end])
}

/// The top-level modules `code` (comments stripped) names through the crate root: `crate::x`,
/// `crate::{a, b::c}`, and `super::` chains longer than the module's depth at that point.
fn crate_paths(code: &str, file_depth: usize) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    // Inline `mod name {` blocks deepen `super::`: the brace depth at which each one opened.
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let boundary = !ident_char(code[..i].chars().next_back());
        if rest.starts_with('{') {
            braces += 1;
        } else if rest.starts_with('}') {
            braces = braces.saturating_sub(1);
            if inline_mods.last() == Some(&braces) {
                inline_mods.pop();
            }
        } else if boundary && rest.starts_with("mod ") {
            let after = rest["mod ".len()..].trim_start();
            if let Some(name) = ident(after) {
                if after[name.len()..].trim_start().starts_with('{') {
                    inline_mods.push(braces);
                }
            }
        } else if boundary && rest.starts_with("crate") && !ident_char(rest[5..].chars().next()) {
            let after = rest[5..].trim_start();
            if let Some(path) = after.strip_prefix("::") {
                let path = path.trim_start();
                if path.starts_with('{') {
                    found.extend(group_heads(path));
                } else if let Some(name) = ident(path) {
                    found.insert(name.to_string());
                }
            }
        } else if boundary && rest.starts_with("super::") {
            let mut supers = 0;
            let mut tail = rest;
            while let Some(t) = tail.strip_prefix("super::") {
                supers += 1;
                tail = t.trim_start();
            }
            if supers >= file_depth + inline_mods.len() {
                if tail.starts_with('{') {
                    found.extend(group_heads(tail));
                } else if let Some(name) = ident(tail) {
                    found.insert(name.to_string());
                }
            }
            i += rest.len() - tail.len();
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    found.remove("self");
    found
}

/// The first segment of each item of a `{a, b::c, d::{e, f}}` group.
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (at, c) in group.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    item_start = true;
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => {
                item_start = true;
                continue;
            }
            _ => {}
        }
        if depth == 1 && item_start && !c.is_whitespace() {
            item_start = false;
            if let Some(name) = ident(&group[at..]) {
                heads.push(name.to_string());
            }
        }
    }
    heads
}

/// Every edge between top-level modules, with the files that make it.
fn edges(src: &Path) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let Some((from, depth)) = module_of(rel) else { continue };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for to in crate_paths(&code, depth) {
            if to != from {
                edges.entry((from.clone(), to)).or_default().insert(rel.display().to_string());
            }
        }
    }
    edges
}

/// The circles among `edges`: each strongly connected set of more than one module (Tarjan).
fn circles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.next.get(v).cloned().unwrap_or_default() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    set.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut walk = Walk {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for (a, b) in edges {
        walk.next.entry(a.as_str()).or_default().push(b.as_str());
        walk.next.entry(b.as_str()).or_default();
    }
    let nodes: Vec<&str> = walk.next.keys().copied().collect();
    for v in nodes {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

/// What is wrong with `edges`: climbs, modules without a layer, circles.
fn violations(edges: &BTreeMap<(String, String), BTreeSet<String>>, modules: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for ((from, to), files) in edges {
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        match (layer_of(from), layer_of(to)) {
            (Some(a), Some(b)) if b > a => {
                problems.push(format!("{from} (L{a}) -> {to} (L{b}) climbs a layer, in {}", files.join(", ")))
            }
            (Some(_), Some(_)) => {}
            (None, _) => problems.push(format!("{from} -> {to}: `{from}` has no layer, in {}", files.join(", "))),
            (_, None) => problems.push(format!("{from} -> {to}: `{to}` has no layer, in {}", files.join(", "))),
        }
    }
    for module in modules {
        if layer_of(module).is_none() {
            problems.push(format!("the module `{module}` has no layer in the table"));
        }
    }
    for circle in circles(&edges.keys().cloned().collect()) {
        problems.push(format!("these modules form a circle: {}", circle.join(", ")));
    }
    problems
}

#[test]
fn core_modules_use_only_lower_layers_and_form_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    let modules: BTreeSet<String> =
        rust_files(&src).iter().filter_map(|f| module_of(f.strip_prefix(&src).unwrap())).map(|(m, _)| m).collect();
    assert!(modules.contains("engine") && edges.len() > 40, "the source was read: {modules:?}");
    let problems = violations(&edges, &modules);
    assert!(problems.is_empty(), "the layers of DESIGN §1 are broken:\n  {}", problems.join("\n  "));
}

#[test]
fn every_way_of_naming_a_module_is_read_and_comments_are_not() {
    let code = code_only(
        "//! [`crate::doc_link`]\n/// crate::doc_comment\nuse crate::{a, b::c, d::{e, f}};\nuse crate::g::H;\n\
         fn x() { crate::inline::call(); let s = \"crate::in_string\"; let r = r#\"crate::raw\"#; } /* crate::block */\n\
         let c = '\"'; crate::after_char::x(); fn l<'a>(x: &'a str) { crate::after_lifetime::y() }\n\
         mod tests { use super::*; use super::super::up_one; }\n",
    );
    let names: Vec<String> = crate_paths(&code, 1).into_iter().collect();
    assert_eq!(names, ["a", "after_char", "after_lifetime", "b", "d", "g", "inline", "up_one"]);
    // In `x/y.rs`, `super::super::` reaches the crate root; `super::` does not.
    let nested = code_only("use super::sibling; use super::super::other::T;");
    assert_eq!(crate_paths(&nested, 2).into_iter().collect::<Vec<_>>(), ["other"]);
}

#[test]
fn a_climbing_edge_a_circle_and_a_module_without_a_layer_are_each_reported() {
    let edge = |a: &str, b: &str, file: &str| ((a.to_string(), b.to_string()), BTreeSet::from([file.to_string()]));
    let edges: BTreeMap<_, _> = [
        edge("clock", "wiring", "clock.rs"),
        edge("guard", "hooks", "guard/x.rs"),
        edge("hooks", "guard", "hooks/y.rs"),
    ]
    .into_iter()
    .collect();
    let modules =
        BTreeSet::from(["clock".to_string(), "guard".to_string(), "hooks".to_string(), "nowhere".to_string()]);
    let problems = violations(&edges, &modules);
    assert!(problems.iter().any(|p| p == "clock (L0) -> wiring (L5) climbs a layer, in clock.rs"), "{problems:?}");
    assert!(problems.iter().any(|p| p == "these modules form a circle: guard, hooks"), "{problems:?}");
    assert!(problems.iter().any(|p| p == "the module `nowhere` has no layer in the table"), "{problems:?}");
    assert_eq!(problems.len(), 3, "{problems:?}");
}
