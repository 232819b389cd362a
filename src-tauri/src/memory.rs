//! What the app's process asks of glibc's allocator: few arenas (set first thing in `main`) and,
//! once the launch's work has settled, the pages its freed memory still holds given back.
//!
//! Rule: both are hints to the allocator of this process only; nothing here reaches WebKit's
//! processes or the commands the agent runs (no environment variable is set).

/// How long after the engine's start the launch's leftovers are given back: the window's first
/// commands (the session list, the snapshot) are answered by then.
pub(crate) const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// glibc gives each thread that allocates an arena of its own, up to eight per core, and each
/// keeps what it once held; the app's threads mostly wait, so two arenas serve them (the app's
/// process idle 8 s after a launch: PSS 80 -> 78 MiB). WebKit's processes are not affected.
#[allow(unsafe_code)]
pub fn fewer_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets one of malloc's parameters and touches no memory of ours; it runs first
    // thing in main, before this process starts a thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Returns to the kernel the free pages inside every arena: what the launch allocated and freed
/// (the stores' migrations, the sandbox probes, the first answers' JSON) is otherwise kept mapped
/// for the life of the app (PSS of the app's process at idle: 94.3 -> 93.1 MiB). Takes a few
/// milliseconds and the arenas' locks: call it on a blocking thread, at a quiet moment.
#[allow(unsafe_code)]
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory malloc owns; it takes the allocator's locks
    // itself and touches no memory of ours.
    unsafe {
        libc::malloc_trim(0);
    }
}
