//! Sessions in worktrees of their own (DESIGN §16), through real `bridle` processes against
//! aimock, on a real repository: two at once beside a dirty main checkout that stays exactly as
//! it was, commits that land on the session's branch and nowhere else, archive and restore byte
//! for byte after `git gc`, the hand-off to the main checkout, and a `kill -9` mid-turn.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::bridle::*;
use super::desk::{listed, model, pending, run_args, session_of, spawn};
use super::sandbox::{users, Setup, User, ONE_NOBODY_AT_A_TIME};

fn git(dir: &Path, args: &[&str]) -> String {
    // The test's own git, as root, on a repository `nobody` may own.
    let out = std::process::Command::new("git")
        .args(["-c", "safe.directory=*"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The main checkout: on `feat`, with an unrelated dirty file and an ignored `.env` that
/// `.worktreeinclude` names.
fn repository(dirs: &Dirs, config: &str) {
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
    checkout(&dirs.workspace);
}

fn checkout(main: &Path) {
    git(main, &["init", "-q", "-b", "main"]);
    git(main, &["config", "user.name", "Tester"]);
    git(main, &["config", "user.email", "tester@example.com"]);
    std::fs::write(main.join("shared.txt"), "base\n").unwrap();
    std::fs::write(main.join("notes.txt"), "notes\n").unwrap();
    std::fs::write(main.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(main.join(".worktreeinclude"), ".env\n").unwrap();
    git(main, &["add", "-A"]);
    git(main, &["commit", "-qm", "base"]);
    git(main, &["checkout", "-qb", "feat"]);
    std::fs::write(main.join("feature.txt"), "feature\n").unwrap();
    git(main, &["add", "feature.txt"]);
    git(main, &["commit", "-qm", "feature"]);
    std::fs::write(main.join("notes.txt"), "notes\nmy own edit\n").unwrap();
    std::fs::write(main.join(".env"), "TOKEN=local\n").unwrap();
}

/// What must not change in the main checkout: its branch, HEAD, status, `.git/config` and hooks.
fn main_state(main: &Path) -> Vec<String> {
    let mut hooks: Vec<String> = std::fs::read_dir(main.join(".git/hooks"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            format!("{}:{}", e.file_name().to_string_lossy(), std::fs::read(e.path()).unwrap().len())
        })
        .collect();
    hooks.sort();
    vec![
        git(main, &["rev-parse", "--abbrev-ref", "HEAD"]),
        git(main, &["rev-parse", "HEAD"]),
        git(main, &["status", "--porcelain=v1", "--ignored"]),
        std::fs::read_to_string(main.join(".git/config")).unwrap(),
        hooks.join(","),
        git(main, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main", "refs/heads/feat"]),
    ]
}

fn worktree_of(sessions: &[Value], branch: &str) -> (String, PathBuf) {
    let s = sessions.iter().find(|s| s["worktree"]["branch"] == branch).unwrap_or_else(|| panic!("{sessions:?}"));
    (s["id"].as_str().unwrap().to_string(), PathBuf::from(s["worktree"]["path"].as_str().unwrap()))
}

/// A command a session runs: its edit, its commit, then attempts on the main checkout (and,
/// with `plant`, on the worktree's `.git` file: bubblewrap keeps it read-only, Landlock cannot).
fn session_command(name: &str, main: &Path, plant: bool) -> String {
    let main = main.display();
    let plant = if plant { "echo 'gitdir: /elsewhere' > .git; " } else { "" };
    format!(
        "printf 'from {name}\\n' > shared.txt; git add shared.txt && git commit -qm 'commit {name}' && echo COMMITTED; \
         echo escaped > {main}/escaped-{name}.txt; echo x > {main}/shared.txt; \
         printf '[alias]\\n\\tx = !touch /tmp/pwn\\n' >> {main}/.git/config; \
         echo 'touch {main}/hooked' > {main}/.git/hooks/post-checkout; \
         git update-ref refs/heads/feat HEAD; git update-ref refs/heads/main HEAD; {plant}true"
    )
}

async fn two_sessions_side_by_side(backend: &str, user: User) {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    let t = Setup::new(user, &format!("[sandbox]\nbackend = \"{backend}\"\n"));
    let main = t.dirs.workspace.clone();
    checkout(&main);
    t.own();
    let plant = backend == "bwrap";
    let (one, two) = (session_command("one", &main, plant), session_command("two", &main, plant));
    let (mock, _f) = model(&[("work as one", &one), ("work as two", &two)]).await;
    let base = format!("{}/v1", mock.url);
    let before = main_state(&main);
    let at = format!("{backend}, {user:?}");

    let mut children = Vec::new();
    for (prompt, name) in [("work as one", "one"), ("work as two", "two")] {
        let mut args = run_args(prompt, "bypass", &base);
        args.extend(["--worktree", name]);
        let child = t.bridle(&args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn();
        children.push(child.unwrap());
    }
    for child in children {
        let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output()).await.unwrap().unwrap();
        assert_eq!(out.status.code(), Some(0), "{at}: {}\n{}", stderr(&out), stdout(&out));
        let events = stdout(&out);
        assert!(events.contains("COMMITTED"), "{at}: the commit in the worktree failed: {events}");
        assert!(events.contains(&format!("\"sandbox\":\"{backend}\"")), "{events}");
    }

    assert_eq!(main_state(&main), before, "{at}: the main checkout changed");
    for name in ["one", "two"] {
        assert!(!main.join(format!("escaped-{name}.txt")).exists(), "{at}: {name} wrote into the main checkout");
    }
    assert!(!main.join("hooked").exists() && !Path::new("/tmp/pwn").exists());
    let out = t.bridle(&["sessions", "list", "--json"]).output().await.unwrap();
    let sessions = json_lines(&out);
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    for name in ["one", "two"] {
        let branch = format!("bridle/{name}");
        let (id, path) = worktree_of(&sessions, &branch);
        let s = session_of(&sessions, &id);
        assert_eq!((s["state"].as_str(), s["branch"].as_str()), (Some("idle"), Some(branch.as_str())), "{s}");
        assert_eq!(s["worktree"]["origin"], main.canonicalize().unwrap().display().to_string(), "{s}");
        assert!(path.starts_with(t.dirs.data.canonicalize().unwrap().join("worktrees")), "{path:?}");
        assert_eq!(std::fs::read_to_string(path.join("shared.txt")).unwrap(), format!("from {name}\n"));
        assert_eq!(std::fs::read_to_string(path.join(".env")).unwrap(), "TOKEN=local\n", "{at}: .env copied in");
        // The commit landed on the session's branch, cut from `feat`.
        assert_eq!(git(&main, &["log", "-1", "--format=%s", &branch]), format!("commit {name}\n"));
        assert_eq!(git(&main, &["log", "-1", "--format=%s", &format!("{branch}~1")]), "feature\n");
        assert_eq!(git(&path, &["status", "--porcelain"]), "", "{at}");
        if backend == "bwrap" {
            // The `.git` file that names the worktree's git folder cannot be pointed elsewhere.
            assert!(std::fs::read_to_string(path.join(".git")).unwrap().starts_with("gitdir: "), "{at}");
            assert!(!std::fs::read_to_string(path.join(".git")).unwrap().contains("/elsewhere"), "{at}");
        }
    }
    let out = t.bridle(&["audit", "verify"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let out = t.bridle(&["audit", "--kind", "worktree", "--json"]).output().await.unwrap();
    assert_eq!(json_lines(&out).len(), 2, "{}", stdout(&out));
}

#[tokio::test]
async fn two_worktree_sessions_at_once_leave_the_main_checkout_exactly_as_it_was() {
    for user in users() {
        for backend in ["bwrap", "landlock"] {
            two_sessions_side_by_side(backend, user).await;
        }
    }
}

/// A session in worktree `name` that has run one turn, idle.
async fn one_idle_session(dirs: &Dirs, base: &str, prompt: &str, name: &str) -> (String, PathBuf) {
    let mut args = run_args(prompt, "auto", base);
    args.extend(["--worktree", name]);
    let out = bridle(dirs, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    let events = stdout(&out);
    assert!(events.contains("turnCompleted") && !events.contains("\"denied\""), "{events}");
    worktree_of(&listed(dirs, &["sessions", "list", "--json"]).await, &format!("bridle/{name}"))
}

/// What a worktree holds, as git sees it: the diffs, the untracked files with their bytes, the
/// branch.
fn worktree_state(path: &Path) -> Vec<String> {
    let mut untracked = Vec::new();
    for file in git(path, &["ls-files", "--others", "--exclude-standard"]).lines() {
        untracked.push(format!("{file}:{:?}", std::fs::read(path.join(file)).unwrap()));
    }
    vec![
        git(path, &["diff"]),
        git(path, &["diff", "--cached"]),
        untracked.join("\n"),
        git(path, &["symbolic-ref", "HEAD"]),
        std::fs::read_to_string(path.join(".env")).unwrap(),
    ]
}

#[tokio::test]
async fn an_archived_session_comes_back_byte_for_byte_after_gc_and_a_running_one_is_not_archived() {
    let dirs = Dirs::outside_tmp();
    repository(&dirs, "");
    let (mock, _f) = model(&[("say hi", ""), ("touch it", "touch asked.txt")]).await;
    let base = format!("{}/v1", mock.url);
    let (id, path) = one_idle_session(&dirs, &base, "say hi", "keep").await;
    std::fs::write(path.join("shared.txt"), "staged\n").unwrap();
    git(&path, &["add", "shared.txt"]);
    std::fs::write(path.join("shared.txt"), "staged\nand not\n").unwrap();
    std::fs::write(path.join("scratch.bin"), [0u8, 1, 2, 255]).unwrap();
    std::fs::write(path.join(".env"), "TOKEN=changed in the session\n").unwrap();
    let before = worktree_state(&path);

    // Deleting it would drop the worktree's work: refused until it is archived.
    let out = bridle(&dirs, &["sessions", "delete", &id]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("archive it first"), "{}", stderr(&out));
    assert_eq!(worktree_state(&path), before);

    let out = bridle(&dirs, &["sessions", "archive", &id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!path.exists(), "the folder is removed");
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    assert_eq!(session_of(&sessions, &id)["state"], "archived");
    // An archived session does not run until it is restored.
    let mut args = run_args("say hi", "auto", &base);
    args.extend(["--session", &id]);
    let out = bridle(&dirs, &args).await;
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("archived") && stderr(&out).contains("sessions restore"), "{}", stderr(&out));
    git(&dirs.workspace, &["gc", "-q", "--prune=now"]);

    let out = bridle(&dirs, &["sessions", "restore", &id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(worktree_state(&path), before);
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    assert_eq!(session_of(&sessions, &id)["state"], "idle");

    // A session waiting on a question is running: archiving it is refused and changes nothing.
    let mut args = run_args("touch it", "ask", &base);
    args.extend(["--session", &id]);
    let waiting = spawn(&dirs, &args);
    pending(&dirs, 1).await;
    let out = bridle(&dirs, &["sessions", "archive", &id]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is running"), "{}", stderr(&out));
    assert_eq!(worktree_state(&path), before);
    drop(waiting);
    let out = bridle(&dirs, &["audit", "--kind", "worktree", "--json"]).await;
    let actions: Vec<String> = json_lines(&out).iter().map(|r| r["status"].as_str().unwrap().to_string()).collect();
    assert_eq!(actions, ["created", "archived", "restored"], "{}", stdout(&out));
}

#[tokio::test]
async fn apply_keeps_the_main_checkouts_own_edits_refuses_a_conflict_whole_and_merge_lands_the_branch() {
    let dirs = Dirs::outside_tmp();
    repository(&dirs, "");
    let main = dirs.workspace.clone();
    let (mock, _f) = model(&[
        ("edit as one", "printf 'changed by one\\n' > shared.txt; echo new > added.txt"),
        ("edit as two", "printf 'changed by two\\n' > shared.txt && git commit -qam two"),
    ])
    .await;
    let base = format!("{}/v1", mock.url);
    let (one, _) = one_idle_session(&dirs, &base, "edit as one", "one").await;
    let (two, _) = one_idle_session(&dirs, &base, "edit as two", "two").await;

    // A dry run prints the diff and writes nothing.
    let before = main_state(&main);
    let out = bridle(&dirs, &["sessions", "apply", &one, "--dry-run"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("+changed by one"), "{}", stdout(&out));
    assert_eq!(main_state(&main), before);

    let out = bridle(&dirs, &["sessions", "apply", &one]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(main.join("shared.txt")).unwrap(), "changed by one\n");
    assert_eq!(std::fs::read_to_string(main.join("added.txt")).unwrap(), "new\n");
    assert_eq!(std::fs::read_to_string(main.join("notes.txt")).unwrap(), "notes\nmy own edit\n", "kept");
    assert_eq!(git(&main, &["rev-parse", "HEAD"]), before[1], "uncommitted");

    // Two changed the same line: nothing of it lands, and the file is named.
    let before = main_state(&main);
    let out = bridle(&dirs, &["sessions", "apply", &two]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("`shared.txt`"), "{}", stderr(&out));
    assert_eq!(main_state(&main), before);

    // Merge wants a clean checkout, then lands two's branch.
    let out = bridle(&dirs, &["sessions", "merge", &two]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("uncommitted changes"), "{}", stderr(&out));
    git(&main, &["checkout", "--", "."]);
    std::fs::remove_file(main.join("added.txt")).unwrap();
    let out = bridle(&dirs, &["sessions", "merge", &two]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(main.join("shared.txt")).unwrap(), "changed by two\n");
    assert_eq!(git(&main, &["log", "-1", "--format=%s"]), "Merge bridle/two (a Bridle session)\n");
    let out = bridle(&dirs, &["audit", "--kind", "worktree", "--json"]).await;
    let actions: Vec<String> = json_lines(&out).iter().map(|r| r["status"].as_str().unwrap().to_string()).collect();
    assert_eq!(actions, ["created", "created", "applied", "merged"], "{}", stdout(&out));
}

#[tokio::test]
async fn after_a_kill_mid_turn_the_session_resumes_in_its_worktree_with_its_question() {
    let dirs = Dirs::outside_tmp();
    let (mock, _f) = model(&[("make a file", "echo made > made.txt")]).await;
    let base = format!("{}/v1", mock.url);
    // `bridle approvals approve` continues the turn with the config's provider.
    repository(&dirs, &format!("[provider]\nkind = \"openai\"\nbase_url = \"{base}\"\nmodel = \"m\"\n"));
    let mut args = run_args("make a file", "ask", &base);
    args.extend(["--worktree", "crash"]);
    let mut child = spawn(&dirs, &args);
    let asked = pending(&dirs, 1).await;
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    let (id, path) = worktree_of(&sessions, "bridle/crash");
    assert_eq!(session_of(&sessions, &id)["state"], "needs-you", "{sessions:?}");

    // The answer resumes the session in its worktree, wherever `bridle` is started.
    let out = bridle(&dirs, &["approvals", "approve", asked[0]["id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    let made = std::fs::read_to_string(path.join("made.txt"));
    assert_eq!(made.ok().as_deref(), Some("made\n"), "{}\n{}", stderr(&out), stdout(&out));
    assert!(!dirs.workspace.join("made.txt").exists(), "nothing landed in the main checkout");

    // A worktree removed by hand: the session says so and does not run until it is back.
    std::fs::remove_dir_all(&path).unwrap();
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    assert_eq!(session_of(&sessions, &id)["worktree"]["missing"], true, "{sessions:?}");
    let mut args = run_args("make a file", "auto", &base);
    args.extend(["--session", &id]);
    let out = bridle(&dirs, &args).await;
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("is gone"), "{}", stderr(&out));
    let out = bridle(&dirs, &["sessions", "restore", &id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(git(&path, &["symbolic-ref", "--short", "HEAD"]), "bridle/crash\n");
}

#[tokio::test]
async fn an_acp_client_asks_for_a_worktree_in_session_new_meta_and_the_session_works_there() {
    let dirs = Dirs::outside_tmp();
    let (mock, _f) = model(&[("make a file", "echo made > made.txt")]).await;
    let provider =
        format!("mode = \"auto\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n", mock.url);
    repository(&dirs, &provider);
    let mut client = super::acp::RawClient::of(super::acp::raw_acp(dirs.data.as_path(), &[]));
    let mut ask = async |request: Value| client.ask(request).await;
    let new = |id: u32, meta: Value| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "session/new",
                           "params": {"cwd": dirs.workspace, "mcpServers": [], "_meta": meta}})
    };
    ask(serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    let refused = ask(new(1, serde_json::json!({"worktree": 5}))).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    let answer = ask(new(2, serde_json::json!({"worktree": {"name": "acp"}}))).await;
    let made = &answer["result"]["_meta"]["worktree"];
    assert_eq!(made["branch"], "bridle/acp", "{answer}");
    let path = PathBuf::from(made["path"].as_str().unwrap());
    let id = answer["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": id, "prompt": [{"type": "text", "text": "make a file"}]}});
    let done = ask(prompt).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(std::fs::read_to_string(path.join("made.txt")).unwrap(), "made\n");
    assert!(!dirs.workspace.join("made.txt").exists(), "nothing in the editor's checkout");
    // Loaded again from the checkout it was made from, it is the same session.
    let load = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "session/load",
        "params": {"sessionId": id, "cwd": dirs.workspace, "mcpServers": []}});
    assert!(ask(load).await.get("error").is_none());
}
