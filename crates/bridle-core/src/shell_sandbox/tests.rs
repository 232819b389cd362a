#![allow(clippy::unwrap_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::*;

fn confinement(root: &Path) -> Confinement {
    Confinement {
        root: root.to_path_buf(),
        read_only: false,
        protected_in_root: vec![root.join(".git/config")],
        writable: vec![PathBuf::from("/srv/cache")],
        masked: vec![PathBuf::from("/home/u/.ssh"), PathBuf::from("/srv")],
        network: false,
    }
}

fn position(args: &[OsString], needle: &[&str]) -> Option<usize> {
    args.windows(needle.len()).position(|w| w.iter().zip(needle).all(|(a, b)| a == b))
}

#[test]
fn cover_holds_everything_but_the_excluded_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for p in ["a/x", "a/secret/k", "b", ".git/hooks"] {
        std::fs::create_dir_all(root.join(p)).unwrap();
    }
    std::fs::write(root.join(".git/config"), "").unwrap();
    let mut got = landlock::cover(root, &[root.join("a/secret"), root.join(".git/config")]);
    got.sort();
    let want: Vec<PathBuf> = [".git/hooks", "a/x", "b"].iter().map(|p| root.join(p)).collect();
    assert_eq!(got, want);
    assert_eq!(landlock::cover(root, &[PathBuf::from("/elsewhere")]), [root.to_path_buf()]);
    assert!(landlock::cover(&root.join("a"), &[root.to_path_buf()]).is_empty());
}

#[test]
fn bwrap_mounts_the_workspace_after_the_writable_paths_and_masks_last() {
    let args = bwrap::arguments(&confinement(Path::new("/work/ws")));
    let ws = position(&args, &["--bind", "/work/ws", "/work/ws"]).unwrap();
    let cache = position(&args, &["--bind", "/srv/cache", "/srv/cache"]).unwrap();
    // `/srv` holds a writable path: emptied before the bind that puts the path back.
    let srv = position(&args, &["--tmpfs", "/srv"]).unwrap();
    let ssh = position(&args, &["--ro-bind", "/dev/null", "/home/u/.ssh"]).unwrap();
    assert!(srv < cache && cache < ws && ws < ssh, "{args:?}");
    assert!(position(&args, &["--unshare-net"]).is_some());
    assert!(position(&args, &["--unshare-pid"]).is_some());
    // .git/config does not exist here, so nothing is mounted over it.
    assert!(position(&args, &["--ro-bind", "/work/ws/.git/config"]).is_none());
}

#[test]
fn bwrap_in_plan_mounts_the_workspace_read_only_and_network_stays_when_allowed() {
    let c = Confinement { read_only: true, network: true, ..confinement(Path::new("/work/ws")) };
    let args = bwrap::arguments(&c);
    assert!(position(&args, &["--ro-bind", "/work/ws", "/work/ws"]).is_some());
    assert!(position(&args, &["--bind", "/work/ws", "/work/ws"]).is_none());
    assert!(position(&args, &["--unshare-net"]).is_none());
}

#[test]
fn what_lives_under_the_private_tmp_is_not_masked_unless_a_bind_shows_it() {
    let c = Confinement {
        masked: vec![PathBuf::from("/tmp/data"), PathBuf::from("/tmp/ws/data")],
        ..confinement(Path::new("/tmp/ws"))
    };
    let args = bwrap::arguments(&c);
    assert!(position(&args, &["/tmp/data"]).is_none(), "{args:?}");
    assert!(position(&args, &["/tmp/ws/data"]).is_some(), "{args:?}");
}

#[test]
fn a_disabled_sandbox_says_why_and_confines_nothing() {
    let settings = crate::config::SandboxConfig { enabled: false, ..Default::default() };
    let shell = ShellSandbox::new(&settings, Path::new("/"), &[], false);
    assert_eq!(shell.kind(), SandboxKind::None);
    assert!(shell.unsandboxed_because().unwrap().contains("enabled = false"));
}

#[test]
fn a_masked_path_inside_another_is_left_to_the_outer_mask() {
    let got = outermost(vec![PathBuf::from("/d/config.toml"), PathBuf::from("/d"), PathBuf::from("/e")]);
    assert_eq!(got, [PathBuf::from("/d"), PathBuf::from("/e")]);
}
