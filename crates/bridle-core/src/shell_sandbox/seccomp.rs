//! The seccomp filter every sandboxed command runs under, whichever backend confines it.
//!
//! It refuses (`EPERM`) what would take a command out of its sandbox or into another program:
//! mounting and unmounting (the masks stay on), `pivot_root`, new namespaces (`unshare`, `setns`,
//! `clone` with `CLONE_NEWUSER`; `clone3`, whose flags a filter cannot read, answers `ENOSYS` so
//! libc falls back to `clone`), `ptrace` and `process_vm_*`, the kernel keyring, `bpf`,
//! `perf_event_open`, kernel modules, `kexec`, `open_by_handle_at`, `io_uring` (its operations
//! bypass this filter), `reboot`, swap, and the terminal ioctls that type into another program
//! (`TIOCSTI`, `TIOCLINUX`), and new Unix-domain sockets (unless `[sandbox] unix_sockets = true`).
//! Under Landlock, which cannot filter UDP, it also refuses UDP sockets (names are resolved by
//! Bridle's proxy, the only way out).
//!
//! Rule: the filter is built once per sandbox (a session's, when it starts; a sandbox whose filter
//! cannot be built confines nothing and says so), refuses on an unknown architecture (the arch
//! check kills the process rather than let a 32-bit call table in), and on x86_64 refuses every
//! x32 call, whose numbers would otherwise slip past the rules.

use std::collections::BTreeMap;

use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// What a filter holds beyond the common refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Policy {
    /// Refuse new Unix-domain sockets: nothing in either backend stops a `connect` to a socket
    /// file it can see (a read-only mount does not), so any socket outside the masks (a
    /// container engine's, a bus at an unusual path, an X server's) would be a door.
    /// `socketpair` stays allowed: it reaches nothing outside.
    pub no_unix_sockets: bool,
    /// Refuse new UDP sockets (Landlock before ABI 8 cannot filter UDP).
    pub no_udp: bool,
}

impl Policy {
    /// The policy for a backend: `None` where nothing is confined.
    pub fn for_backend(kind: super::SandboxKind, unix_sockets: bool) -> Option<Policy> {
        match kind {
            super::SandboxKind::Bwrap => Some(Policy::bwrap(unix_sockets)),
            super::SandboxKind::Landlock => Some(Policy::landlock(unix_sockets)),
            super::SandboxKind::None => None,
        }
    }

    /// bubblewrap: its network namespace holds UDP.
    pub fn bwrap(unix_sockets: bool) -> Policy {
        Policy { no_unix_sockets: !unix_sockets, no_udp: false }
    }

    /// Landlock: sockets are the filter's to refuse; UDP always (the host's network is shared).
    pub fn landlock(unix_sockets: bool) -> Policy {
        Policy { no_unix_sockets: !unix_sockets, no_udp: true }
    }
}

/// Why a filter could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the seccomp filter: {0}")]
pub(crate) struct FilterError(String);

fn target() -> Result<TargetArch, FilterError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| FilterError(e.to_string()))
}

fn eq(arg: u8, value: u64) -> Result<SeccompCondition, FilterError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value).map_err(|e| FilterError(e.to_string()))
}

fn masked(arg: u8, mask: u64, value: u64) -> Result<SeccompCondition, FilterError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(mask), value)
        .map_err(|e| FilterError(e.to_string()))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, FilterError> {
    SeccompRule::new(conditions).map_err(|e| FilterError(e.to_string()))
}

/// The syscalls refused whatever their arguments.
fn refused_outright() -> Vec<libc::c_long> {
    let calls = vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_open_by_handle_at,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
    ];
    calls
}

/// The filter for `policy`, as the kernel takes it.
pub(super) fn program(policy: Policy) -> Result<BpfProgram, FilterError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in refused_outright() {
        rules.insert(call, Vec::new());
    }
    // A new user namespace through clone; clone3 hides its flags in memory.
    rules
        .insert(libc::SYS_clone, vec![rule(vec![masked(0, libc::CLONE_NEWUSER as u64, libc::CLONE_NEWUSER as u64)?])?]);
    // The request is a `c_ulong`, `u64` only on 64-bit targets.
    #[allow(clippy::unnecessary_cast)]
    rules.insert(
        libc::SYS_ioctl,
        vec![rule(vec![eq(1, libc::TIOCSTI as u64)?])?, rule(vec![eq(1, libc::TIOCLINUX as u64)?])?],
    );
    let mut sockets = Vec::new();
    if policy.no_unix_sockets {
        sockets.push(rule(vec![eq(0, libc::AF_UNIX as u64)?])?);
    }
    if policy.no_udp {
        for family in [libc::AF_INET, libc::AF_INET6] {
            // The type carries SOCK_NONBLOCK / SOCK_CLOEXEC in its high bits.
            sockets.push(rule(vec![eq(0, family as u64)?, masked(1, 0xf, libc::SOCK_DGRAM as u64)?])?);
        }
    }
    if !sockets.is_empty() {
        rules.insert(libc::SYS_socket, sockets);
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), target()?)
        .map_err(|e| FilterError(e.to_string()))?;
    let mut program: BpfProgram =
        filter.try_into().map_err(|e: seccompiler::BackendError| FilterError(e.to_string()))?;
    // clone3 answers "not implemented" (glibc then uses clone, which the rules can read).
    let enosys = program_for_clone3()?;
    let after_arch_check = 3;
    program.splice(after_arch_check..after_arch_check, enosys);
    Ok(program)
}

/// Instructions placed right after the architecture check: `clone3` gets `ENOSYS`, and on
/// x86_64 every x32 call (number with bit 30 set) gets `EPERM`.
fn program_for_clone3() -> Result<Vec<sock_filter>, FilterError> {
    const LD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, offset 0: the call number
    const JEQ: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
    const RET: u16 = 0x06; // BPF_RET | BPF_K
    let errno = |e: i32| 0x0005_0000 | (e as u32 & 0xffff); // SECCOMP_RET_ERRNO
    let clone3 = u32::try_from(libc::SYS_clone3).map_err(|e| FilterError(e.to_string()))?;
    let mut out = vec![
        sock_filter { code: LD_NR, jt: 0, jf: 0, k: 0 },
        sock_filter { code: JEQ, jt: 0, jf: 1, k: clone3 },
        sock_filter { code: RET, jt: 0, jf: 0, k: errno(libc::ENOSYS) },
    ];
    if cfg!(target_arch = "x86_64") {
        out.extend([
            sock_filter { code: JGE, jt: 0, jf: 1, k: 0x4000_0000 },
            sock_filter { code: RET, jt: 0, jf: 0, k: errno(libc::EPERM) },
        ]);
    }
    Ok(out)
}

/// The program as bytes, the form bwrap's `--seccomp FD` reads.
pub(super) fn bytes(program: &[sock_filter]) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for i in program {
        out.extend_from_slice(&i.code.to_ne_bytes());
        out.push(i.jt);
        out.push(i.jf);
        out.extend_from_slice(&i.k.to_ne_bytes());
    }
    out
}

/// Applies `program` to the calling thread (and sets no-new-privileges): what it starts from now
/// on inherits it.
pub(super) fn apply_to_this_thread(program: &[sock_filter]) -> std::io::Result<()> {
    seccompiler::apply_filter(program)
        .map_err(|e| std::io::Error::other(format!("cannot apply the seccomp filter: {e}")))
}
