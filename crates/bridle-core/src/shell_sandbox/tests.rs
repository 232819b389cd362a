#![allow(clippy::unwrap_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::masks::x11_socket;
use super::*;

fn confinement(root: &Path) -> Confinement {
    Confinement {
        root: root.to_path_buf(),
        read_only: false,
        protected_in_root: vec![root.join(".git/config")],
        writable: vec![PathBuf::from("/srv/cache")],
        home: Some(PathBuf::from("/home/u")),
        readable: vec![PathBuf::from("/home/u/.cargo/bin"), PathBuf::from("/home/u/.gitconfig")],
        shown: Vec::new(),
        masked: vec![PathBuf::from("/home/u/.ssh"), PathBuf::from("/srv")],
        network: false,
        host_ports: Vec::new(),
        tmp_size: 1 << 30,
        max_processes: 1024,
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
    let args = bwrap::arguments(&confinement(Path::new("/work/ws")), Some(7), false);
    let ws = position(&args, &["--bind", "/work/ws", "/work/ws"]).unwrap();
    let cache = position(&args, &["--bind", "/srv/cache", "/srv/cache"]).unwrap();
    // `/srv` holds a writable path: emptied before the bind that puts the path back.
    let srv = position(&args, &["--tmpfs", "/srv"]).unwrap();
    let ssh = position(&args, &["--ro-bind", "/dev/null", "/home/u/.ssh"]).unwrap();
    assert!(srv < cache && cache < ws && ws < ssh, "{args:?}");
    // No privilege, whoever runs it; every namespace, the network's included.
    for flag in [&["--unshare-user"][..], &["--unshare-all"], &["--disable-userns"], &["--cap-drop", "ALL"]] {
        assert!(position(&args, flag).is_some(), "{flag:?} missing: {args:?}");
    }
    assert!(position(&args, &["--share-net"]).is_none());
    assert!(position(&args, &["--seccomp", "7"]).is_some());
    let tmp = position(&args, &["--size", "1073741824", "--tmpfs", "/tmp"]).unwrap();
    assert!(tmp < cache, "{args:?}");
    // .git/config does not exist here, so nothing is mounted over it.
    assert!(position(&args, &["--ro-bind", "/work/ws/.git/config"]).is_none());
}

#[test]
fn bwrap_in_plan_mounts_the_workspace_read_only_and_keeps_only_the_network_made_for_it() {
    let c = Confinement { read_only: true, network: true, ..confinement(Path::new("/work/ws")) };
    let args = bwrap::arguments(&c, None, false);
    assert!(position(&args, &["--ro-bind", "/work/ws", "/work/ws"]).is_some());
    assert!(position(&args, &["--bind", "/work/ws", "/work/ws"]).is_none());
    // Without a door bwrap makes an empty network; with one it keeps the one made for the
    // command (never the host's: that one is left before bwrap starts).
    assert!(position(&args, &["--share-net"]).is_none());
    assert!(position(&args, &["--unshare-all"]).is_some());
    let with_door = bwrap::arguments(&c, None, true);
    assert!(position(&with_door, &["--unshare-all"]).unwrap() < position(&with_door, &["--share-net"]).unwrap());
}

#[test]
fn commands_are_told_the_proxy_and_ssh_goes_through_it() {
    let address = std::net::SocketAddrV4::new(std::net::Ipv4Addr::new(127, 1, 0, 7), 3128);
    let credential = crate::network::wire::Credential::with_secret("abc".into());
    let env: std::collections::HashMap<String, String> = door::proxy_environment(address, &credential)
        .into_iter()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
        assert_eq!(env[name], "http://bridle:abc@127.1.0.7:3128");
    }
    assert_eq!(env["ALL_PROXY"], "socks5h://bridle:abc@127.1.0.7:3128");
    assert_eq!(env["BRIDLE_PROXY_AUTH"], credential.basic());
    assert_eq!((env["BRIDLE_PROXY_HOST"].as_str(), env["BRIDLE_PROXY_PORT"].as_str()), ("127.1.0.7", "3128"));
    // The sandbox's own loopback (where the session's servers listen) is reached directly.
    assert_eq!(env["NO_PROXY"], "localhost,127.0.0.1,::1");
    assert_eq!(env["no_proxy"], env["NO_PROXY"]);
    assert!(env["GIT_SSH_COMMAND"].contains("$BRIDLE_SSH_TUNNEL"));
}

#[test]
fn the_doors_to_the_desktop_are_masked() {
    let env = [
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/home/u/.bus/s,guid=1;unix:abstract=/tmp/dbus-x"),
        ("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/var/lib/bus/system"),
        ("DISPLAY", ":7.0"),
        ("WAYLAND_DISPLAY", "wayland-1"),
        ("XDG_RUNTIME_DIR", "/home/u/.rt"),
        ("SSH_AUTH_SOCK", "/home/u/.ssh-agent.sock"),
    ];
    let got = with_desktop_doors(&[], env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
    for want in [
        "/run",
        "/var/run",
        "/home/u/.bus/s",
        "/var/lib/bus/system",
        "/tmp/.X11-unix/X7",
        "/home/u/.rt/wayland-1",
        "/home/u/.rt",
        "/home/u/.ssh-agent.sock",
    ] {
        assert!(got.contains(&PathBuf::from(want)), "{want} is not masked: {got:?}");
    }
    assert_eq!(x11_socket("remote.example:0"), None);
    assert_eq!(x11_socket("unix:3"), Some(PathBuf::from("/tmp/.X11-unix/X3")));
}

#[test]
fn the_seccomp_filter_compiles_and_starts_with_the_architecture_check() {
    for policy in [seccomp::Policy::bwrap(false), seccomp::Policy::landlock(false), seccomp::Policy::landlock(true)] {
        let program = seccomp::program(policy).unwrap();
        assert!(program.len() > 40, "{}", program.len());
        assert_eq!(seccomp::bytes(&program).len(), program.len() * 8);
        // Loads the architecture first: a call from another call table never reaches the rules.
        assert_eq!((program[0].code, program[0].k), (0x20, 4));
    }
}

#[test]
fn what_lives_under_the_private_tmp_is_not_masked_unless_a_bind_shows_it() {
    let c = Confinement {
        masked: vec![PathBuf::from("/tmp/data"), PathBuf::from("/tmp/ws/data")],
        ..confinement(Path::new("/tmp/ws"))
    };
    let args = bwrap::arguments(&c, None, false);
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

#[test]
fn home_is_emptied_before_what_is_shown_of_it_and_the_workspace_in_it_are_bound() {
    // Outside /tmp, whose masks the private /tmp makes needless.
    let t = tempfile::tempdir_in("/var/tmp").unwrap();
    let home = t.path().canonicalize().unwrap().join("u");
    for dir in [".cargo/bin", ".ssh", "project", "elsewhere"] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    // A shown entry that is a link is bound by where it leads; one leading into a mask is not.
    std::os::unix::fs::symlink(home.join("elsewhere"), home.join(".rustup")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), home.join(".cache")).unwrap();
    let root = home.join("project");
    let c = Confinement {
        home: Some(home.clone()),
        readable: [".cargo/bin", ".rustup", ".cache"].iter().map(|r| home.join(r)).collect(),
        masked: vec![home.join(".ssh")],
        writable: Vec::new(),
        ..confinement(&root)
    };
    let args = bwrap::arguments(&c, None, false);
    let s = |p: &Path| p.display().to_string();
    let at = |needle: &[&str]| position(&args, needle).unwrap_or_else(|| panic!("{needle:?} in {args:?}"));
    let emptied = at(&["--tmpfs", &s(&home)]);
    let cargo = at(&["--ro-bind-try", &s(&home.join(".cargo/bin")), &s(&home.join(".cargo/bin"))]);
    let rustup = at(&["--ro-bind-try", &s(&home.join("elsewhere")), &s(&home.join(".rustup"))]);
    let workspace = at(&["--bind", &s(&root), &s(&root)]);
    let ssh = at(&["--tmpfs", &s(&home.join(".ssh"))]);
    assert!(emptied < cargo && cargo < rustup && rustup < workspace && workspace < ssh, "{args:?}");
    assert!(!args.iter().any(|a| a == home.join(".cache").as_os_str()), "a link into a mask was shown: {args:?}");
}
