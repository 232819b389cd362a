//! Generates the Tauri context (config, capabilities, embedded UI) at build time, and lays out
//! the release binary for a small resident footprint:
//! - **launch order**: the functions a launch runs, up to the idle window, are placed together
//!   at the front of the code (`launch-order.txt`, made by `scripts/bench-app/launch-order.sh`).
//!   The kernel maps code in 64 KiB runs around each page first touched, so code a launch runs,
//!   scattered over the binary, kept most of it resident at idle. The list holds mangled names,
//!   whose hash changes with a crate's dependencies: the repository's linker (`scripts/link/cc`,
//!   set in `.cargo/config.toml`) places a name the binary no longer has by its name without
//!   the hash;
//! - **packed relocations** (`DT_RELR`) where the C library reads them (glibc 2.36 on): the
//!   binary's 1.6 MB of relative relocations, read at every start, become a few KB.
//!
//! Rule: only the layout changes, never what the code does. Both apply to release builds for
//! x86-64 Linux linked by rustc's own LLD (the toolchain's default); any other build links as
//! before. A name the list holds that the binary no longer has is skipped: the list ages as
//! functions are renamed, and the app benchmark reports how much of it still matches.

use std::path::Path;

fn main() {
    tauri_build::build();
    println!("cargo:rerun-if-changed=launch-order.txt");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let ours = var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("HOST") == var("TARGET")
        // A linker chosen in the flags may not be LLD, and may not know these options.
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if !ours {
        return;
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("launch-order.txt");
    if order.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    if glibc_reads_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's C library (the one the binary will run on: it is built where it runs)
/// reads packed relocations: glibc 2.36 and later. An older one would refuse to start the binary.
fn glibc_reads_relr() -> bool {
    let Ok(out) = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output() else { return false };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else { return false };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
