//! The shell sandbox's cost per bash call inside a running session (the probe paid once, as in
//! the app): the same `bash` tool call under bubblewrap, under Landlock and unsandboxed, for
//! `true` and for `git status` on a 10,000-file repository, side by side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bridle_core::clock::SystemClock;
use bridle_core::config::{SandboxBackend, SandboxConfig};
use bridle_core::shell_sandbox::{HostEnvironment, ShellSandbox};
use bridle_core::tools::{builtin_registry, ToolContext};
use bridle_core::workspace::Workspace;
use criterion::{criterion_group, criterion_main, Criterion};

fn repo(root: &Path) {
    for d in 0..100 {
        let dir = root.join(format!("src/m{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f}.rs")), format!("fn f{f}() {{}}\n")).unwrap();
        }
    }
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git").args(args).current_dir(root).output().unwrap();
        assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "10k files"]);
}

fn context(root: &Path, data: &Path, shell: Option<SandboxBackend>) -> ToolContext {
    let workspace = Workspace::open(root, None, data, &[]).unwrap();
    let shell = match shell {
        Some(backend) => {
            let settings = SandboxConfig { backend, ..SandboxConfig::default() };
            ShellSandbox::new(&settings, workspace.root(), &workspace.sandbox.protected_paths(), false)
        }
        None => ShellSandbox::unsandboxed(workspace.root(), "benchmark baseline"),
    }
    // As a launch does: the commands inherit this process's environment (its allowed part).
    .with_host_environment(&HostEnvironment::new(std::env::vars_os()));
    let workspace = Arc::new(workspace.with_shell(shell));
    ToolContext::new("bench", "call", workspace, data.to_path_buf(), Arc::new(SystemClock), Duration::from_secs(60))
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    repo(&root);
    let data = dir.path().join("data");
    let registry = builtin_registry().unwrap();
    let variants =
        [("bwrap", Some(SandboxBackend::Bwrap)), ("landlock", Some(SandboxBackend::Landlock)), ("none", None)];
    for command in ["true", "git status"] {
        let mut group = c.benchmark_group(format!("bash `{command}`"));
        group.sample_size(40);
        for (name, backend) in variants {
            let ctx = context(&root, &data, backend);
            let call = registry.prepare("bash", &serde_json::json!({ "command": command }).to_string()).unwrap();
            group.bench_function(name, |b| {
                b.to_async(&runtime).iter(|| async {
                    let out = call.call.run(&ctx).await.unwrap();
                    assert_eq!(out.data.as_ref().unwrap()["exitCode"], 0, "{}", out.output);
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
