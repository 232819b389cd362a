//! The one way out of a sandboxed command's network (DESIGN §5.2): a listener on the command's
//! own loopback, held by Bridle's proxy.
//!
//! Under bubblewrap the command's network namespace is made in the child between fork and exec
//! (a user namespace to own it, loopback brought up, a listener bound on `127.0.0.1:PORT`), the
//! listener handed to Bridle over a socket pair, and bwrap started inside it with `--share-net`:
//! the namespace holds nothing but loopback, and what connects to the port reaches the proxy,
//! which runs outside. No relay process runs in the sandbox and no socket path is bound into it.
//! Under Landlock, which cannot give a command a network of its own, the listener is on the
//! host's loopback and Landlock lets the command connect to that one port only.
//!
//! Rule: only async-signal-safe system calls between fork and exec, on memory prepared before
//! the fork; any step that fails fails the spawn (the command never runs with another network).

use std::ffi::{CStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The port commands find the proxy on inside a bubblewrap sandbox (each command has a
/// loopback of its own, so every one can use the same).
pub const SANDBOX_PORT: u16 = 3128;

/// The socket pair a command's listener comes back over.
pub(super) struct Door {
    /// Bridle's end: the listener arrives here.
    ours: OwnedFd,
    /// The child's end.
    theirs: OwnedFd,
}

/// What the forked child uses to open the door: its end of the pair and the namespace's maps.
pub(super) struct DoorInChild {
    reply: RawFd,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Door {
    /// A door for one command.
    pub(super) fn new() -> std::io::Result<Self> {
        let (ours, theirs) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::DGRAM,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )?;
        Ok(Self { ours, theirs })
    }

    /// What the child's pre-exec step reads, prepared before the fork. The user namespace maps
    /// the user to itself: the command is who Bridle is, no more.
    pub(super) fn in_child(&self) -> DoorInChild {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        DoorInChild {
            reply: self.theirs.as_raw_fd(),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }

    /// The listener the child sent, once the spawn has returned.
    pub(super) fn receive(self) -> std::io::Result<std::net::TcpListener> {
        drop(self.theirs);
        let mut byte = [0u8; 1];
        let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = rustix::net::RecvAncillaryBuffer::new(&mut space);
        rustix::net::recvmsg(
            &self.ours,
            &mut [std::io::IoSliceMut::new(&mut byte)],
            &mut control,
            rustix::net::RecvFlags::DONTWAIT | rustix::net::RecvFlags::CMSG_CLOEXEC,
        )?;
        for message in control.drain() {
            if let rustix::net::RecvAncillaryMessage::ScmRights(mut fds) = message {
                if let Some(fd) = fds.next() {
                    return Ok(std::net::TcpListener::from(fd));
                }
            }
        }
        Err(std::io::Error::other("the sandbox's network was made but its listener never arrived"))
    }
}

/// In the forked child: a user and network namespace of its own, loopback up, the listener bound
/// and sent to Bridle. Only system calls, on memory prepared before the fork.
#[allow(unsafe_code)]
pub(super) fn open_in_child(door: &DoorInChild) -> std::io::Result<()> {
    let check = |r: libc::c_int| if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) };
    // SAFETY: plain system calls on values owned by this function or prepared before the fork;
    // no allocation, no lock.
    unsafe {
        check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET))?;
        // Bridle is not dumpable, so this copy of it is not either, and its `/proc/self` files
        // belong to root: the maps could not be written by an unprivileged user. Dumpable for the
        // three writes, then not again until the exec (which resets it for bwrap anyway).
        check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
        let mapped = write_file(c"/proc/self/setgroups", b"deny")
            .and_then(|()| write_file(c"/proc/self/uid_map", &door.uid_map))
            .and_then(|()| write_file(c"/proc/self/gid_map", &door.gid_map));
        check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0))?;
        mapped?;

        let control = check(libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0))?;
        let control = OwnedFd::from_raw_fd(control);
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        check(libc::ioctl(control.as_raw_fd(), libc::SIOCSIFFLAGS, &request))?;
        drop(control);

        let listener = check(libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0))?;
        let listener = OwnedFd::from_raw_fd(listener);
        let one: libc::c_int = 1;
        check(libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ))?;
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = SANDBOX_PORT.to_be();
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        check(libc::bind(
            listener.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ))?;
        check(libc::listen(listener.as_raw_fd(), 1024))?;
        send_fd(door.reply, listener.as_raw_fd())
    }
}

/// Writes `bytes` to the file at `path` (a `/proc` setting), in one write.
#[allow(unsafe_code)]
unsafe fn write_file(path: &CStr, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: the caller's; `path` is NUL-terminated, `bytes` is valid for its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fd = OwnedFd::from_raw_fd(fd);
        if libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) != bytes.len() as isize {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Sends `fd` over the socket `to` (one byte, and the descriptor beside it).
#[allow(unsafe_code)]
unsafe fn send_fd(to: RawFd, fd: RawFd) -> std::io::Result<()> {
    // Room for one descriptor's control message, aligned for `cmsghdr`.
    #[repr(C)]
    union Control {
        header: libc::cmsghdr,
        bytes: [u8; 64],
    }
    // SAFETY: the caller's; every pointer below points into this frame.
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut control: Control = std::mem::zeroed();
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = (&mut control as *mut Control).cast();
        message.msg_controllen = space;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        if libc::sendmsg(to, &message, 0) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// What a command is told about the proxy on `port`: every proxy variable (upper- and
/// lower-case; SOCKS with names resolved by the proxy), and git's SSH command, whose
/// `ProxyCommand` is bash and `/dev/tcp` ([`SSH_TUNNEL`]), so no extra package is needed.
pub(crate) fn proxy_environment(port: u16) -> Vec<(OsString, OsString)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for (name, value) in [("HTTP_PROXY", &http), ("HTTPS_PROXY", &http), ("ALL_PROXY", &socks)] {
        env.push((name.into(), value.into()));
        env.push((name.to_ascii_lowercase().into(), value.into()));
    }
    env.push(("BRIDLE_PROXY_PORT".into(), port.to_string().into()));
    env.push(("BRIDLE_SSH_TUNNEL".into(), SSH_TUNNEL.into()));
    env.push(("GIT_SSH_COMMAND".into(), SSH_COMMAND.into()));
    env
}

/// `ssh` through the proxy (also usable by hand: `ssh -o "ProxyCommand=..."` with this value's
/// option).
pub const SSH_COMMAND: &str = r#"ssh -o 'ProxyCommand=bash -c "$BRIDLE_SSH_TUNNEL" bridle-tunnel %h %p'"#;

/// The tunnel `ssh` talks through: an HTTP `CONNECT` to the proxy on bash's `/dev/tcp`, the
/// answer's head read byte by byte (bash reads a socket one byte at a time, so nothing of the
/// host's first bytes is lost), then a copy each way.
pub const SSH_TUNNEL: &str = r#"exec 3<>"/dev/tcp/127.0.0.1/${BRIDLE_PROXY_PORT}" || exit 1
printf 'CONNECT %s:%s HTTP/1.1\r\n\r\n' "$1" "$2" >&3
IFS= read -r status <&3
case "$status" in *" 200 "*) ;; *) echo "bridle proxy: ${status%$'\r'}" >&2; exit 1;; esac
while IFS= read -r line <&3; do [ -z "${line%$'\r'}" ] && break; done
cat <&3 &
exec cat >&3
"#;
