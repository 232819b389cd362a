//! WorkspaceFs on real directories: atomic writes, modes, hard links, escapes at open time,
//! FIFOs, sockets and devices refused without blocking, symlinked folders never written through.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{symlink, PermissionsExt as _};

use super::*;

fn setup() -> (tempfile::TempDir, PathBuf, WorkspaceFs) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    let fs = WorkspaceFs::open(&root).unwrap();
    (tmp, root, fs)
}

#[test]
fn writes_create_parents_and_replace_atomically_keeping_the_mode() {
    let (_tmp, root, fs) = setup();
    let w = fs.write_atomic(Path::new("a/b/c.txt"), b"one").unwrap();
    assert_eq!(w, Written { created: true, bytes: 3 });
    assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"one");
    assert_eq!(std::fs::metadata(root.join("a/b/c.txt")).unwrap().permissions().mode() & 0o777, 0o644);

    std::fs::set_permissions(root.join("a/b/c.txt"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let w = fs.write_atomic(Path::new("a/b/c.txt"), b"two").unwrap();
    assert!(!w.created);
    assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"two");
    assert_eq!(std::fs::metadata(root.join("a/b/c.txt")).unwrap().permissions().mode() & 0o777, 0o755);
    // No temp file is left behind.
    let names: Vec<_> = std::fs::read_dir(root.join("a/b")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["c.txt"]);
}

#[test]
fn a_hard_linked_file_is_not_replaced() {
    let (tmp, root, fs) = setup();
    std::fs::write(root.join("f.txt"), "original").unwrap();
    std::fs::hard_link(root.join("f.txt"), tmp.path().join("outside-link")).unwrap();
    let err = fs.write_atomic(Path::new("f.txt"), b"new").unwrap_err();
    assert!(matches!(err, FsError::HardLinked { links: 2, .. }), "{err}");
    assert_eq!(std::fs::read_to_string(root.join("f.txt")).unwrap(), "original");
}

#[test]
fn a_symlink_to_outside_is_caught_at_open_time() {
    let (tmp, root, fs) = setup();
    std::fs::write(tmp.path().join("secret"), "s3cret").unwrap();
    symlink(tmp.path().join("secret"), root.join("link")).unwrap();
    symlink(tmp.path(), root.join("dirlink")).unwrap();
    assert!(matches!(fs.open_read(Path::new("link")), Err(FsError::Escaped(_))));
    assert!(matches!(fs.open_read(Path::new("dirlink/secret")), Err(FsError::Escaped(_))));
    assert!(matches!(fs.open_read(Path::new("../secret")), Err(FsError::Escaped(_))));
    // Writing through the symlinked directory fails before anything is created outside.
    assert!(fs.write_atomic(Path::new("dirlink/new.txt"), b"x").is_err());
    assert!(!tmp.path().join("new.txt").exists());
    // Writing over the symlink itself is refused too (it would have been resolved by the sandbox).
    assert!(matches!(fs.write_atomic(Path::new("link"), b"x"), Err(FsError::BecameSymlink(_))));
    assert_eq!(std::fs::read_to_string(tmp.path().join("secret")).unwrap(), "s3cret");
}

#[test]
fn reads_and_stamps() {
    let (_tmp, root, fs) = setup();
    assert_eq!(fs.read_if_exists(Path::new("missing")).unwrap(), None);
    assert_eq!(fs.stamp(Path::new("missing")).unwrap(), None);
    std::fs::write(root.join("x"), "abc").unwrap();
    assert_eq!(fs.read_if_exists(Path::new("x")).unwrap().unwrap(), b"abc");
    let before = fs.stamp(Path::new("x")).unwrap().unwrap();
    fs.write_atomic(Path::new("x"), b"abcd").unwrap();
    assert_ne!(fs.stamp(Path::new("x")).unwrap().unwrap(), before);
    assert!(matches!(fs.open_read(Path::new("")), Err(FsError::IsDirectory(_))));
    fs.remove_file(Path::new("x")).unwrap();
    assert!(!root.join("x").exists());
}

/// Runs `work` on its own thread and fails the test if it has not finished within 10 s: a
/// blocking open of a FIFO would otherwise hang the test run.
fn within_10s<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(std::time::Duration::from_secs(10)).expect("a file operation blocked for 10 s")
}

#[test]
fn fifos_sockets_and_devices_are_refused_by_name_without_blocking() {
    let (_tmp, root, fs) = setup();
    rustix::fs::mkfifoat(rustix::fs::CWD, root.join("fifo"), rustix::fs::Mode::from_raw_mode(0o644)).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
    let mut special = vec![("fifo", "a FIFO (named pipe)"), ("sock", "a socket")];
    // A copy of /dev/zero: mknod needs root (CAP_MKNOD).
    let device = rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("zero"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 5),
    );
    match device {
        Ok(()) => special.push(("zero", "a device")),
        Err(e) => eprintln!("skipping the device case: mknod needs root ({e})"),
    }
    let fs = std::sync::Arc::new(fs);
    for (name, kind) in special {
        let fs = fs.clone();
        let errors = within_10s(move || {
            let rel = Path::new(name);
            [
                fs.open_read(rel).map(|_| ()).unwrap_err(),
                fs.read_if_exists(rel).map(|_| ()).unwrap_err(),
                fs.write_atomic(rel, b"x").map(|_| ()).unwrap_err(),
                fs.remove_file(rel).unwrap_err(),
            ]
        });
        for err in errors {
            assert!(matches!(&err, FsError::NotRegular { kind: k, .. } if *k == kind), "{name}: {err:?}");
            assert_eq!(
                err.to_string(),
                format!("`{name}` is {kind}; file tools read and write only regular files, so Bridle did not open it")
            );
        }
    }
    let kept = std::fs::symlink_metadata(root.join("fifo")).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kept.file_type()), "the FIFO is still there, not replaced");
}

#[test]
fn a_write_never_goes_through_a_symlinked_folder_even_inside_the_root() {
    let (_tmp, root, fs) = setup();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join("a")).unwrap();
    // `sub` was a folder the agent edited in; it is now a link to `.git`.
    symlink(".git", root.join("sub")).unwrap();
    symlink("../.git", root.join("a/b")).unwrap();
    let refused = [
        fs.write_atomic(Path::new("sub/config"), b"[core]\n\tfsmonitor = evil\n").unwrap_err(),
        fs.write_atomic(Path::new("sub/hooks/pre-commit"), b"evil").unwrap_err(),
        fs.write_atomic(Path::new("a/b/new/file"), b"evil").unwrap_err(),
        fs.remove_file(Path::new("sub/config")).unwrap_err(),
    ];
    let folders: Vec<String> = refused
        .iter()
        .map(|e| match e {
            FsError::SymlinkedFolder { folder, .. } => folder.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(folders, ["sub", "sub", "a/b", "sub"]);
    assert!(refused[0].to_string().contains("the folder `sub` on its way is a symlink"), "{}", refused[0]);
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).unwrap(), "[core]\n");
    assert!(!root.join(".git/hooks/pre-commit").exists() && !root.join(".git/new").exists());
    // Reading through a link inside the root is still allowed (only writes are judged so).
    assert_eq!(fs.read_if_exists(Path::new("sub/config")).unwrap().unwrap(), b"[core]\n");
}
