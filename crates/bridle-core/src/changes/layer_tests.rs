//! Real commands under bubblewrap on an overlay of a real workspace: the workspace is left as it
//! was, and the layer says what each did — including what must not land.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use pretty_assertions::assert_eq;

use super::*;
use crate::shell_sandbox::{probe_overlay, Launch, Layer, SandboxKind, ShellSandbox};

/// `script` to start in `shell`'s workspace `ws`, on `layer` when given, its output piped.
fn launch<'a>(
    shell: &ShellSandbox,
    ws: &'a Path,
    script: &'a str,
    layer: Option<&'a Layer>,
    loopback: Option<&'a crate::shell_sandbox::Loopback>,
) -> Launch<'a> {
    Launch {
        script,
        cwd: ws,
        env: shell.environment(std::env::vars_os()),
        stdin: Stdio::null(),
        stdout: Stdio::piped(),
        stderr: Stdio::piped(),
        network: false,
        loopback,
        layer,
    }
}

/// Runs `script` in the workspace's sandbox on a fresh layer; the layer and bash's stderr.
async fn on_layer(ws: &Path, layers: &Path, script: &str) -> (Layer, String) {
    let shell = ShellSandbox::new(&Default::default(), ws, &[], false);
    assert_eq!(shell.kind(), SandboxKind::Bwrap, "these tests need bubblewrap");
    let layer = Layer::new(layers, ws).unwrap();
    let spawned = shell.spawn(launch(&shell, ws, script, Some(&layer), None), false).await.unwrap();
    let out = spawned.child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{script}: {stderr}");
    (layer, stderr)
}

/// Every path below `root` with its type, mode and content (links by target).
fn tree(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = path.symlink_metadata().unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("dir {:o}", meta.permissions().mode() & 0o7777)
            } else {
                format!("file {:o} {:?}", meta.permissions().mode() & 0o7777, std::fs::read(&path).unwrap())
            };
            out.push((rel, what));
        }
    }
    out.sort();
    out
}

fn workspace() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("d/sub")).unwrap();
    for (file, text) in [
        ("a.rs", "fn a() {}\n"),
        ("tracked.txt", "tracked\n"),
        ("b.txt", "bee\n"),
        ("run.sh", "echo run\n"),
        ("d/old.txt", "old\n"),
        ("d/sub/deep.txt", "deep\n"),
    ] {
        std::fs::write(ws.join(file), text).unwrap();
    }
    (tmp, ws, root.join("layers"))
}

fn kinds(read: &LayerRead) -> Vec<(String, EffectKind)> {
    read.effects.iter().map(|e| (e.rel.display().to_string(), e.kind.clone())).collect()
}

#[test]
fn the_overlay_works_on_this_machine_at_any_path_and_the_probe_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    // The mount API takes each path whole: characters a legacy option string cannot carry.
    for name in ["plain", "a,b", "c:d", "e\\f", "g\nh", "lowerdir=x,upperdir=y"] {
        let ws = tmp.path().join(name);
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("kept"), "k").unwrap();
        assert_eq!(probe_overlay(&tmp.path().join("layers"), &ws), Ok(()), "{name:?}");
        let names: Vec<_> = std::fs::read_dir(&ws).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("kept")], "{name:?}");
    }
}

#[tokio::test]
async fn a_command_on_a_layer_leaves_the_workspace_as_it_was_and_the_layer_says_what_it_did() {
    let (_tmp, ws, layers) = workspace();
    let before = tree(&ws);
    let script = "rm tracked.txt; echo x > new.txt; chmod +x run.sh; mv b.txt c.txt; ln -s a.rs link; \
                  echo more >> a.rs; rm -rf d && mkdir d && echo n > d/n.txt; mkdir -p e/f && touch e/f/g";
    let (layer, _) = on_layer(&ws, &layers, script).await;
    assert_eq!(tree(&ws), before, "the workspace itself is untouched");

    let read = read_layer(layer.upper(), &ws).unwrap();
    assert_eq!(
        kinds(&read),
        vec![
            ("a.rs".into(), EffectKind::Modified),
            ("b.txt".into(), EffectKind::Deleted),
            ("c.txt".into(), EffectKind::Created),
            ("d/n.txt".into(), EffectKind::Created),
            ("d/old.txt".into(), EffectKind::Deleted),
            ("d/sub".into(), EffectKind::Deleted),
            ("e".into(), EffectKind::Folder),
            ("e/f".into(), EffectKind::Folder),
            ("e/f/g".into(), EffectKind::Created),
            ("link".into(), EffectKind::Link("a.rs".into())),
            ("new.txt".into(), EffectKind::Created),
            ("run.sh".into(), EffectKind::ModeChanged),
            ("tracked.txt".into(), EffectKind::Deleted),
        ]
    );
    assert!(read.refused.is_empty(), "{:?}", read.refused);
    let run = read.effects.iter().find(|e| e.rel == Path::new("run.sh")).unwrap();
    assert_eq!(run.mode.map(|m| m & 0o111), Some(0o111));
    // A command that changed nothing leaves an empty layer.
    let (quiet, _) = on_layer(&ws, &layers, "cat a.rs > /dev/null; ls -la").await;
    assert_eq!(read_layer(quiet.upper(), &ws).unwrap(), LayerRead::default());
    // The layer goes with its value.
    let home = layer.upper().parent().unwrap().to_path_buf();
    drop(layer);
    assert!(!home.exists());
}

#[tokio::test]
async fn what_a_command_plants_in_its_layer_is_kept_as_what_it_is_or_refused() {
    let (_tmp, ws, layers) = workspace();
    let outside = ws.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "outside\n").unwrap();
    let before = tree(&ws);
    let script = format!(
        "ln -s {} escape; ln -s /etc/passwd passwd; mkfifo fifo; touch suid && chmod u+s suid; \
         echo h > h1 && ln h1 h2; truncate -s 2G big; mknod dev c 1 3 2>/dev/null; true",
        outside.display()
    );
    let (layer, stderr) = on_layer(&ws, &layers, &script).await;
    assert_eq!(tree(&ws), before, "the workspace itself is untouched: {stderr}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    // The sandbox's filter refused the set-uid bit; a set-uid file that reached a layer anyway
    // (made here, from outside) is refused by the reader.
    assert!(stderr.contains("Operation not permitted"), "{stderr}");
    let planted = layer.upper().join("suid");
    assert_eq!(std::fs::metadata(&planted).unwrap().permissions().mode() & 0o6000, 0);
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o4755)).unwrap();

    let started = std::time::Instant::now();
    let read = read_layer(layer.upper(), &ws).unwrap();
    let refused: Vec<(String, &str)> = read.refused.iter().map(|r| (r.rel.display().to_string(), r.why)).collect();
    let names: Vec<&str> = refused.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["fifo", "h1", "h2", "suid"], "{refused:?}");
    assert!(refused[0].1.contains("FIFO") && refused[1].1.contains("more than one link"), "{refused:?}");
    assert!(refused[3].1.contains("set-user-id"), "{refused:?}");
    // A device cannot even be made: the sandbox holds no capability.
    assert!(!layer.upper().join("dev").exists());
    // Links are links, their targets as written; nothing was followed.
    assert_eq!(
        kinds(&read),
        vec![
            ("big".into(), EffectKind::Created),
            ("escape".into(), EffectKind::Link(outside.clone())),
            ("passwd".into(), EffectKind::Link("/etc/passwd".into())),
        ]
    );
    let big = read.effects.iter().find(|e| e.rel == Path::new("big")).unwrap();
    assert_eq!(big.bytes, 2 << 30);
    // A 2 GiB file is a stat here, not a read.
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_changed_huge_file_is_compared_a_chunk_at_a_time() {
    let (_tmp, ws, layers) = workspace();
    let big = ws.join("big.bin");
    std::fs::File::create(&big).unwrap().set_len(256 << 20).unwrap();
    // The same size, one byte different near the end; and one rewritten to the same bytes.
    let script =
        "printf x | dd of=big.bin bs=1 seek=268435000 conv=notrunc 2>/dev/null; cp a.rs same && cat same > a.rs";
    let (layer, _) = on_layer(&ws, &layers, script).await;
    let read = read_layer(layer.upper(), &ws).unwrap();
    assert_eq!(
        kinds(&read),
        vec![("big.bin".into(), EffectKind::Modified), ("same".into(), EffectKind::Created)],
        "a copy-up with the same bytes is no change"
    );
}

/// Runs `script` in the workspace's sandbox, on a fresh layer or not; its wall time, and the
/// time to read the layer back.
async fn timed(
    ws: &Path,
    layers: &Path,
    script: &str,
    layered: bool,
    loopback: &crate::shell_sandbox::Loopback,
) -> (std::time::Duration, std::time::Duration) {
    let shell = ShellSandbox::new(&Default::default(), ws, &[], false);
    let layer = layered.then(|| Layer::new(layers, ws).unwrap());
    let started = std::time::Instant::now();
    let started_ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i128;
    let spawned = shell.spawn(launch(&shell, ws, script, layer.as_ref(), Some(loopback)), false).await.unwrap();
    let out = spawned.child.wait_with_output().await.unwrap();
    let ran = started.elapsed();
    assert!(out.status.success(), "{script}");
    let landing = std::time::Instant::now();
    if let Some(layer) = &layer {
        // What a session does when the command ends: read, sort, land with checkpoints.
        let data = layers.parent().unwrap().join("data");
        let store = std::sync::Arc::new(crate::store::Store::open_in_memory().unwrap());
        store.create_session("bench", &ws.display().to_string(), 0).unwrap();
        let clock = std::sync::Arc::new(crate::clock::FixedClock(1));
        let files = std::sync::Arc::new(crate::changes::SessionFiles::new("bench", store, &data, clock));
        let workspace = std::sync::Arc::new(crate::workspace::Workspace::open(ws, None, &data, &[]).unwrap());
        let scope = crate::changes::CommitScope {
            workspace: workspace.clone(),
            session_id: "bench".into(),
            turn_id: "t".into(),
            call_id: "c".into(),
            files: Some(files),
            writes: std::sync::Arc::default(),
        };
        let scratch: Vec<String> = crate::shell_sandbox::SCRATCH.iter().map(|s| s.to_string()).collect();
        let read = read_layer(layer.upper(), ws).unwrap();
        let sorted = std::sync::Arc::new(crate::changes::Landing::sort(
            read,
            layer.upper(),
            &workspace.fs,
            &scratch,
            started_ns,
        ));
        let free = sorted.land_free(&scope).await;
        assert!(free.refused.is_empty(), "{:?}", free.refused);
        let landed = sorted.land_held(&scope).await.unwrap();
        assert!(landed.refused.is_empty(), "{:?}", landed.refused);
    }
    (ran, landing.elapsed())
}

/// 20,000 empty files in 200 folders.
const WRITE_20K: &str =
    "cd node_modules && for d in $(seq 200); do mkdir p$d; for f in $(seq 100); do : > p$d/f$f.js; done; done";

/// Figures for `scripts/bench-overlay.sh`: each case on today's bubblewrap and on an overlay,
/// interleaved, medians side by side, both in a session's shared loopback as `bash` runs in a
/// session. A report, not a check.
#[tokio::test]
#[ignore = "a benchmark: scripts/bench-overlay.sh"]
async fn overlay_figures() {
    let (_tmp, ws, layers) = workspace();
    let repo = ws.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for i in 0..10_000 {
        let dir = repo.join(format!("d{}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    let git = |args: &[&str]| std::process::Command::new("git").args(args).current_dir(&repo).output().unwrap();
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "files"]);
    let loopback = crate::shell_sandbox::Loopback::new().unwrap();
    let rounds: usize = std::env::var("ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(15);
    let cases = [
        ("true", "true".to_string()),
        ("git status, 10k files", "cd repo && git status --porcelain > /dev/null".to_string()),
        (
            "change 1,000 small files",
            "cd repo && for i in $(seq 0 999); do echo x >> d$((i / 100))/f$i.txt; done".to_string(),
        ),
        ("write 20,000 files under a new node_modules", format!("mkdir -p node_modules && {WRITE_20K}")),
        ("write 20,000 files under an existing node_modules", format!("mkdir -p node_modules && {WRITE_20K}")),
    ];
    println!("| case | bwrap today (median ms) | on an overlay (median ms) | read, sort and land with checkpoints (median ms) |");
    println!("|---|---|---|---|");
    for (name, script) in &cases {
        let (mut plain, mut layered, mut reading) = (Vec::new(), Vec::new(), Vec::new());
        // Each run starts from the same tree: what a run wrote is removed; an existing
        // node_modules is there, empty, when the run starts (a scratch folder written through).
        let reset = || {
            git(&["checkout", "-q", "."]);
            let _ = std::fs::remove_dir_all(ws.join("node_modules"));
            if name.contains("existing") {
                std::fs::create_dir(ws.join("node_modules")).unwrap();
            }
        };
        for _ in 0..rounds {
            reset();
            let (ran, _) = timed(&ws, &layers, script, false, &loopback).await;
            plain.push(ran);
            reset();
            let (ran, read) = timed(&ws, &layers, script, true, &loopback).await;
            layered.push(ran);
            reading.push(read);
        }
        let median = |v: &mut Vec<std::time::Duration>| {
            v.sort();
            v[v.len() / 2].as_secs_f64() * 1e3
        };
        println!("| {name} | {:.1} | {:.1} | {:.1} |", median(&mut plain), median(&mut layered), median(&mut reading));
    }
}

#[tokio::test]
async fn scratch_folders_that_exist_are_written_through_and_stay_out_of_the_layer() {
    let (_tmp, ws, layers) = workspace();
    std::fs::create_dir_all(ws.join("target/debug")).unwrap();
    std::fs::write(ws.join("target/debug/old"), "old").unwrap();
    let script = "echo built > target/debug/app && rm target/debug/old && echo x > notes.txt && mkdir -p dist && echo d > dist/a.js";
    let (layer, _) = on_layer(&ws, &layers, script).await;
    // Straight through: the build's output is in the workspace now, as without a layer.
    assert_eq!(std::fs::read_to_string(ws.join("target/debug/app")).unwrap(), "built\n");
    assert!(!ws.join("target/debug/old").exists());
    // A scratch folder that did not exist yet is in the layer, like everything else.
    assert!(!ws.join("dist").exists() && !ws.join("notes.txt").exists());
    assert_eq!(
        kinds(&read_layer(layer.upper(), &ws).unwrap()),
        vec![
            ("dist".into(), EffectKind::Folder),
            ("dist/a.js".into(), EffectKind::Created),
            ("notes.txt".into(), EffectKind::Created),
        ]
    );
}

#[tokio::test]
async fn a_scratch_folder_swapped_for_a_link_fails_the_spawn_and_binds_nothing() {
    let (_tmp, ws, layers) = workspace();
    let secret = ws.parent().unwrap().join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("key"), "private\n").unwrap();
    std::fs::create_dir_all(ws.join("target")).unwrap();
    let layer = Layer::new(&layers, &ws).unwrap();
    // Between the layer and the spawn, something in the workspace swaps the folder for a link.
    std::fs::remove_dir(ws.join("target")).unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("target")).unwrap();
    let shell = ShellSandbox::new(&Default::default(), &ws, &[], false);
    let spawned = shell.spawn(launch(&shell, &ws, "echo stolen > target/key", Some(&layer), None), false).await;
    assert!(spawned.is_err(), "the spawn went ahead");
    assert_eq!(std::fs::read_to_string(secret.join("key")).unwrap(), "private\n");
}

#[test]
fn a_sweep_removes_the_layers_a_dead_process_left_and_keeps_live_ones() {
    let (_tmp, ws, layers) = workspace();
    let live = Layer::new(&layers, &ws).unwrap();
    std::fs::write(live.upper().join("kept"), "x").unwrap();
    // What a killed process leaves: a layer nobody holds, its work folder unreadable.
    let dead = layers.join("layer-dead");
    std::fs::create_dir_all(dead.join("work/work")).unwrap();
    std::fs::create_dir_all(dead.join("upper/d")).unwrap();
    std::fs::set_permissions(dead.join("work/work"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::write(layers.join("not-a-layer"), "x").unwrap();
    assert_eq!(crate::shell_sandbox::sweep_layers(&layers), 1);
    assert!(!dead.exists());
    assert!(live.upper().join("kept").exists() && layers.join("not-a-layer").exists());
    drop(live);
    assert_eq!(std::fs::read_dir(&layers).unwrap().count(), 1);
}

#[test]
fn a_file_planted_where_a_link_stood_is_compared_with_nothing_behind_the_link() {
    // The workspace's `l` links to a folder the command could not see; the command replaced the
    // link with a folder and planted a guess of the hidden file. Were the link followed, a right
    // guess would read as "unchanged" (an equality oracle on a masked file).
    let tmp = tempfile::tempdir().unwrap();
    let (hidden, lower, upper) = (tmp.path().join("hidden"), tmp.path().join("ws"), tmp.path().join("upper"));
    for dir in [&hidden, &lower, &upper.join("l")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(hidden.join("secret"), "the guess\n").unwrap();
    std::os::unix::fs::symlink(&hidden, lower.join("l")).unwrap();
    std::fs::write(upper.join("l/secret"), "the guess\n").unwrap();
    std::fs::write(upper.join("l/other"), "x").unwrap();
    let read = read_layer(&upper, &lower).unwrap();
    assert_eq!(
        kinds(&read),
        [
            ("l".to_string(), EffectKind::Replaced),
            ("l/other".to_string(), EffectKind::Created),
            ("l/secret".to_string(), EffectKind::Created),
        ]
    );
    // A real folder below is still walked: an unchanged copy-up is no change.
    std::fs::remove_file(lower.join("l")).unwrap();
    std::fs::create_dir(lower.join("l")).unwrap();
    std::fs::write(lower.join("l/secret"), "the guess\n").unwrap();
    std::fs::set_permissions(lower.join("l"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(upper.join("l"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let read = read_layer(&upper, &lower).unwrap();
    assert_eq!(kinds(&read), [("l/other".to_string(), EffectKind::Created)]);
}

/// A command's build output (ignored paths, landed without checkpoints) stopped midway by its
/// call's timeout: what was written is taken out and what it replaced put back, so the tree is
/// as it was; unstopped, the same landing completes and leaves nothing set aside.
#[tokio::test(flavor = "multi_thread")]
async fn ignored_files_stopped_midway_go_back_and_a_full_landing_leaves_nothing_aside() {
    for stop in [true, false] {
        let (_tmp, ws, layers) = workspace();
        std::fs::write(ws.join(".gitignore"), "out/\n").unwrap();
        std::fs::create_dir_all(ws.join("out/keep")).unwrap();
        std::fs::write(ws.join("out/old.o"), "old object\n").unwrap();
        std::fs::write(ws.join("out/keep/k.o"), "kept\n").unwrap();
        let before = tree(&ws);
        let script = "cd out && for i in $(seq 2000); do echo $i > f$i.o; done && echo new > old.o && rm -r keep";
        let started_ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i128;
        let (layer, _) = on_layer(&ws, &layers, script).await;
        let data = layers.parent().unwrap().join("data");
        let workspace = std::sync::Arc::new(crate::workspace::Workspace::open(&ws, None, &data, &[]).unwrap());
        let scope = crate::changes::CommitScope {
            workspace: workspace.clone(),
            session_id: "s".into(),
            turn_id: "t".into(),
            call_id: "c".into(),
            files: None,
            writes: std::sync::Arc::default(),
        };
        let scratch: Vec<String> = crate::shell_sandbox::SCRATCH.iter().map(|s| s.to_string()).collect();
        let read = read_layer(layer.upper(), &ws).unwrap();
        let sorted = std::sync::Arc::new(crate::changes::Landing::sort(
            read,
            layer.upper(),
            &workspace.fs,
            &scratch,
            started_ns,
        ));
        let writes = scope.writes.clone();
        let first = ws.join("out/f1.o");
        let stopper = tokio::spawn(async move {
            while stop && !first.exists() {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
            if stop {
                writes.stop();
            }
        });
        let free = sorted.land_free(&scope).await;
        stopper.await.unwrap();
        let told = scope.writes.settled().await;
        if stop {
            assert_eq!(tree(&ws), before, "stopped midway: {told:?}");
            assert!(told.iter().any(|t| t.contains("were put back")), "{told:?}");
            assert_eq!(free.files, 0);
        } else {
            assert!(free.refused.is_empty(), "{:?}", free.refused);
            assert_eq!(std::fs::read_to_string(ws.join("out/old.o")).unwrap(), "new\n");
            assert_eq!(std::fs::read_to_string(ws.join("out/f2000.o")).unwrap(), "2000\n");
            assert!(!ws.join("out/keep").exists());
            let names: Vec<String> = tree(&ws).iter().map(|(p, _)| p.display().to_string()).collect();
            assert!(!names.iter().any(|n| n.contains("bridle-aside")), "{names:?}");
        }
    }
}
