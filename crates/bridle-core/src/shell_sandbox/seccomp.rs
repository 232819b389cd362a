//! The seccomp filter every sandboxed command runs under, whichever backend confines it.
//!
//! It refuses (`EPERM`) what would take a command out of its sandbox or into another program:
//! mounting and unmounting (the masks stay on), `pivot_root`, new namespaces (`unshare`, `setns`,
//! `clone` with `CLONE_NEWUSER`; `clone3`, whose flags a filter cannot read, answers `ENOSYS` so
//! libc falls back to `clone`), `ptrace` and `process_vm_*`, the kernel keyring, `bpf`,
//! `perf_event_open`, kernel modules, `kexec`, `open_by_handle_at`, `io_uring` (its operations
//! bypass this filter), `reboot`, swap, and the terminal ioctls that type into another program
//! (`TIOCSTI`, `TIOCLINUX`) or take a terminal (`TIOCSCTTY`, `TIOCSPGRP`), every socket but
//! TCP/IP streams and routing netlink (no MPTCP, `AF_PACKET`, `AF_VSOCK`, raw sockets), new
//! Unix-domain sockets (unless `[sandbox] unix_sockets = true`), and any mode with a set-id bit
//! (`chmod 4755`, `install -m 4755`: a set-uid root shell left in the workspace would serve the
//! next user who runs it). Under Landlock, which cannot filter UDP, it also
//! refuses UDP sockets (names are resolved by Bridle's proxy, the only way out).
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
        [libc::TIOCSTI, libc::TIOCLINUX, libc::TIOCSCTTY, libc::TIOCSPGRP]
            .into_iter()
            .map(|request| rule(vec![eq(1, request as u64)?]))
            .collect::<Result<_, _>>()?,
    );
    rules.insert(libc::SYS_socket, socket_rules(policy)?);
    for (call, rules_for_call) in set_id_rules()? {
        rules.insert(call, rules_for_call);
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

/// The sockets refused: every family but TCP/IP (`AF_INET`/`AF_INET6` streams of protocol 0 or
/// `IPPROTO_TCP`, so no MPTCP or SCTP), Unix-domain sockets unless allowed (`socketpair`, its
/// own call, stays), routing netlink (what `getaddrinfo` reads), and UDP unless the backend
/// holds it. So no `AF_PACKET`, `AF_VSOCK`, raw socket or other netlink family.
fn socket_rules(policy: Policy) -> Result<Vec<SeccompRule>, FilterError> {
    let ne = |arg: u8, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, value)
            .map_err(|e| FilterError(e.to_string()))
    };
    let (inet, inet6, unix, netlink) =
        (libc::AF_INET as u64, libc::AF_INET6 as u64, libc::AF_UNIX as u64, libc::AF_NETLINK as u64);
    let mut out = vec![rule(vec![ne(0, inet)?, ne(0, inet6)?, ne(0, unix)?, ne(0, netlink)?])?];
    if policy.no_unix_sockets {
        out.push(rule(vec![eq(0, unix)?])?);
    }
    out.push(rule(vec![eq(0, netlink)?, ne(2, libc::NETLINK_ROUTE as u64)?])?);
    for family in [inet, inet6] {
        // The type carries SOCK_NONBLOCK / SOCK_CLOEXEC in its high bits.
        // 10 is the obsolete SOCK_PACKET (libc deprecates the name).
        let mut refused_types = vec![libc::SOCK_RAW, libc::SOCK_RDM, libc::SOCK_SEQPACKET, libc::SOCK_DCCP, 10];
        if policy.no_udp {
            refused_types.push(libc::SOCK_DGRAM);
        }
        for kind in refused_types {
            out.push(rule(vec![eq(0, family)?, masked(1, 0xf, kind as u64)?])?);
        }
        let tcp = libc::IPPROTO_TCP as u64;
        out.push(rule(vec![eq(0, family)?, masked(1, 0xf, libc::SOCK_STREAM as u64)?, ne(2, 0)?, ne(2, tcp)?])?);
    }
    Ok(out)
}

/// The calls that would make a set-user-id or set-group-id file: a mode with `S_ISUID` or
/// `S_ISGID` given to `chmod`, `fchmod`, `fchmodat`, `fchmodat2`, `mknod`, `mknodat`, `creat`,
/// or to `open`/`openat` creating a file. Under root, a set-uid copy of a shell left in the
/// workspace would give root to the next user who runs it. (`mkdir` is not refused: Linux drops
/// both bits from its mode, and a folder only inherits set-group-id from its parent, which grants
/// nothing to what runs there; refusing it would break `cp -r` of such a folder.)
fn set_id_rules() -> Result<Vec<(libc::c_long, Vec<SeccompRule>)>, FilterError> {
    let set_id = [libc::S_ISUID as u64, libc::S_ISGID as u64];
    // A mode argument at `arg` with either bit, once each bit (rules of one call are alternatives).
    let mode_at = |arg: u8, also: &[SeccompCondition]| -> Result<Vec<SeccompRule>, FilterError> {
        set_id
            .iter()
            .map(|bit| {
                let mut conditions = also.to_vec();
                conditions.push(masked(arg, *bit, *bit)?);
                rule(conditions)
            })
            .collect()
    };
    let creating = |flags: u8, mode: u8| -> Result<Vec<SeccompRule>, FilterError> {
        let create = masked(flags, libc::O_CREAT as u64, libc::O_CREAT as u64)?;
        // O_TMPFILE's own bit (it also carries O_DIRECTORY).
        let tmpfile = masked(flags, 0o20000000, 0o20000000)?;
        let mut out = mode_at(mode, &[create])?;
        out.extend(mode_at(mode, &[tmpfile])?);
        Ok(out)
    };
    Ok(vec![
        (libc::SYS_chmod, mode_at(1, &[])?),
        (libc::SYS_fchmod, mode_at(1, &[])?),
        (libc::SYS_fchmodat, mode_at(2, &[])?),
        (libc::SYS_fchmodat2, mode_at(2, &[])?),
        (libc::SYS_mknod, mode_at(1, &[])?),
        (libc::SYS_mknodat, mode_at(2, &[])?),
        (libc::SYS_creat, mode_at(1, &[])?),
        (libc::SYS_open, creating(1, 2)?),
        (libc::SYS_openat, creating(2, 3)?),
    ])
}

/// Instructions placed right after the architecture check: `clone3` and `openat2` (whose flags
/// and mode sit in memory a filter cannot read) get `ENOSYS`, so libc falls back to `clone` and
/// `openat`, and on x86_64 every x32 call (number with bit 30 set) gets `EPERM`.
fn program_for_clone3() -> Result<Vec<sock_filter>, FilterError> {
    const LD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, offset 0: the call number
    const JEQ: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
    const RET: u16 = 0x06; // BPF_RET | BPF_K
    let errno = |e: i32| 0x0005_0000 | (e as u32 & 0xffff); // SECCOMP_RET_ERRNO
    let clone3 = u32::try_from(libc::SYS_clone3).map_err(|e| FilterError(e.to_string()))?;
    let openat2 = u32::try_from(libc::SYS_openat2).map_err(|e| FilterError(e.to_string()))?;
    let mut out = vec![
        sock_filter { code: LD_NR, jt: 0, jf: 0, k: 0 },
        sock_filter { code: JEQ, jt: 1, jf: 0, k: clone3 },
        sock_filter { code: JEQ, jt: 0, jf: 1, k: openat2 },
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
