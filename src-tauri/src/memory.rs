//! What the app's process keeps of the memory it once used: glibc's malloc is told to keep less
//! (two arenas), and what the launch's burst freed (the store's migrations, the secret shapes'
//! compilation, the first assets) is given back once the engine has started.
//!
//! Rule: only glibc's own knobs, called where no other thread allocates yet (the arenas) or
//! where giving back costs one pass over the free lists (the trim); nothing here changes what any
//! allocation holds.

/// glibc gives each thread that allocates an arena of its own, up to eight per core, and each
/// keeps what it once held; the app's threads mostly wait, so two arenas serve them (the app's
/// process idle 8 s after a launch: PSS 80 -> 78 MiB). WebKit's processes are not affected.
#[allow(unsafe_code)]
pub fn fewer_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets one of malloc's parameters and touches no memory of ours; main calls
    // it first thing, before this process starts a thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives the pages malloc holds free back to the system (every arena, not only the heap's top).
#[allow(unsafe_code)]
pub(crate) fn return_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim walks malloc's own free lists under its locks; it frees no block in use.
    unsafe {
        libc::malloc_trim(0);
    }
}
