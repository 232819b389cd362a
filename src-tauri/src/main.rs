//! The Bridle desktop app's entry point; everything happens in the library.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    bridle_core::clock::launch_began();
    fewer_malloc_arenas();
    bridle_core::wiring::protect_this_process();
    match bridle_app::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bridle-app: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// glibc gives each thread that allocates an arena of its own, up to eight per core, and each
/// keeps what it once held; the app's threads mostly wait, so two arenas serve them (the app's
/// process idle 8 s after a launch: PSS 80 -> 78 MiB). WebKit's processes are not affected.
#[allow(unsafe_code)]
fn fewer_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets one of malloc's parameters and touches no memory of ours; it runs first
    // thing in main, before this process starts a thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}
