//! The one way out of a sandboxed command's network (DESIGN §5.2): a listener on the command's
//! loopback, held by Bridle's proxy; and the loopback a session's commands share (DESIGN §4.4).
//!
//! Under bubblewrap a command's network namespace is made in the child between fork and exec (a
//! user namespace to own it, loopback brought up) — or, in a session, joined: the session's
//! [`Loopback`] is one such namespace, made once, that every command of the session enters, so a
//! server one started in the background is reachable from the next. When the command may reach
//! hosts, the child binds a listener on an address of its own on that loopback and hands it to
//! Bridle over a socket pair; bwrap then starts inside the namespace with `--share-net`: it holds
//! nothing but loopback, and what connects to the listener reaches the proxy, which runs outside.
//! No relay process runs in the sandbox and no socket path is bound into it. Under Landlock,
//! which cannot give a command a network of its own, the listener is on the host's loopback and
//! Landlock lets the command connect to that one port only.
//!
//! Rule: only async-signal-safe system calls between fork and exec, on memory prepared before
//! the fork; any step that fails fails the spawn (the command never runs with another network).

use std::ffi::{CStr, OsString};

use crate::network::wire::Credential;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// The port commands find the proxy on inside a bubblewrap sandbox.
pub const SANDBOX_PORT: u16 = 3128;

/// At most this many host ports are forwarded (`[sandbox.network] host_ports`).
pub const MAX_HOST_PORTS: usize = 8;

/// A network namespace one session's commands share: loopback only, owned by a user namespace
/// that maps Bridle's user to itself. It lives as long as this value or a command inside it.
#[derive(Debug)]
pub struct Loopback {
    user: OwnedFd,
    net: OwnedFd,
    /// The last proxy address handed out (each command's listener has one of its own).
    handed: AtomicU32,
}

impl Loopback {
    /// Makes the namespace: a short-lived child makes it, sends it back as two descriptors, and
    /// exits.
    #[allow(unsafe_code)]
    pub fn new() -> std::io::Result<Self> {
        let (ours, theirs) = pair()?;
        let (uid_map, gid_map) = maps();
        let plan = DoorInChild {
            reply: theirs.as_raw_fd(),
            join: None,
            uid_map,
            gid_map,
            send_namespace: true,
            listen: None,
            host_ports: [0; MAX_HOST_PORTS],
            host_port_count: 0,
        };
        let program = ["/usr/bin/true", "/bin/true"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .ok_or_else(|| std::io::Error::other("no `true` program to make the session's network with"))?;
        let mut command = std::process::Command::new(program);
        command.env_clear().stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        // SAFETY: the hook makes only system calls, on memory prepared before the fork.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || open_in_child(&plan));
        }
        let status = command.status()?;
        drop(theirs);
        if !status.success() {
            return Err(std::io::Error::other(format!(
                "the helper that makes the session's network ended with {status}"
            )));
        }
        let mut fds = receive(&ours, 2)?.into_iter();
        match (fds.next(), fds.next()) {
            (Some(user), Some(net)) => Ok(Self { user, net, handed: AtomicU32::new(0) }),
            _ => Err(std::io::Error::other("the session's network was made but never arrived")),
        }
    }

    /// An address for one more command's proxy listener: `127.1.x.y` (the whole of `127/8` is
    /// loopback), never the same as a command running now, so no two collide.
    fn next_address(&self) -> SocketAddrV4 {
        let n = self.handed.fetch_add(1, Ordering::Relaxed) % 65_000 + 1;
        SocketAddrV4::new(Ipv4Addr::new(127, 1, (n >> 8) as u8, (n & 0xff) as u8), SANDBOX_PORT)
    }
}

/// The socket pair a command's listener comes back over, and how the child is to make or join
/// its network.
pub(super) struct Door<'a> {
    /// Bridle's end: the listener arrives here.
    ours: OwnedFd,
    /// The child's end.
    theirs: OwnedFd,
    /// The session's namespace, joined rather than made.
    join: Option<&'a Loopback>,
    /// Where the child binds the proxy's listener, when the command may reach hosts.
    listen: Option<SocketAddrV4>,
    /// The host's loopback ports the child listens for on the command's `127.0.0.1`.
    host_ports: [u16; MAX_HOST_PORTS],
    host_port_count: usize,
}

/// What the forked child uses to open the door, all prepared before the fork.
pub(super) struct DoorInChild {
    reply: RawFd,
    /// The user and network namespaces to join; none: make them, with the maps.
    join: Option<(RawFd, RawFd)>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Send the namespaces back (when making a session's [`Loopback`]).
    send_namespace: bool,
    listen: Option<SocketAddrV4>,
    host_ports: [u16; MAX_HOST_PORTS],
    host_port_count: usize,
}

impl<'a> Door<'a> {
    /// A door for one command: into `join` when given (else a namespace of its own), with a
    /// listener for the proxy when `proxied`, and one on `127.0.0.1` for each of `host_ports`
    /// (shared with the session's other commands: a port is bound with `SO_REUSEPORT`).
    pub(super) fn new(join: Option<&'a Loopback>, proxied: bool, host_ports: &[u16]) -> std::io::Result<Self> {
        let (ours, theirs) = pair()?;
        let listen = proxied.then(|| match join {
            Some(loopback) => loopback.next_address(),
            None => SocketAddrV4::new(Ipv4Addr::LOCALHOST, SANDBOX_PORT),
        });
        let mut ports = [0u16; MAX_HOST_PORTS];
        let count = host_ports.len().min(MAX_HOST_PORTS);
        ports[..count].copy_from_slice(&host_ports[..count]);
        Ok(Self { ours, theirs, join, listen, host_ports: ports, host_port_count: count })
    }

    /// Where the command finds the proxy, when it may reach hosts.
    pub(super) fn proxy_address(&self) -> Option<SocketAddrV4> {
        self.listen
    }

    /// What the child's pre-exec step reads, prepared before the fork. A namespace it makes maps
    /// the user to itself: the command is who Bridle is, no more.
    pub(super) fn in_child(&self) -> DoorInChild {
        let (uid_map, gid_map) = maps();
        DoorInChild {
            reply: self.theirs.as_raw_fd(),
            join: self.join.map(|l| (l.user.as_raw_fd(), l.net.as_raw_fd())),
            uid_map,
            gid_map,
            send_namespace: false,
            listen: self.listen,
            host_ports: self.host_ports,
            host_port_count: self.host_port_count,
        }
    }

    /// The listeners the child sent once the spawn returned: the proxy's (when the command may
    /// reach hosts), and one per host port.
    #[allow(clippy::type_complexity)]
    pub(super) fn receive(self) -> std::io::Result<(Option<std::net::TcpListener>, Vec<(u16, std::net::TcpListener)>)> {
        drop(self.theirs);
        let wanted = usize::from(self.listen.is_some()) + self.host_port_count;
        if wanted == 0 {
            return Ok((None, Vec::new()));
        }
        let mut fds = receive(&self.ours, wanted)?.into_iter();
        if fds.len() != wanted {
            return Err(std::io::Error::other("the sandbox's network was made but its listeners never arrived"));
        }
        let proxy = self.listen.and_then(|_| fds.next()).map(std::net::TcpListener::from);
        let ports = self.host_ports[..self.host_port_count].iter().copied();
        Ok((proxy, ports.zip(fds.map(std::net::TcpListener::from)).collect()))
    }
}

/// A datagram socket pair, close-on-exec.
fn pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::DGRAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )?)
}

/// The uid and gid maps of a namespace that maps Bridle's user to itself.
fn maps() -> (Vec<u8>, Vec<u8>) {
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    (format!("{uid} {uid} 1\n").into_bytes(), format!("{gid} {gid} 1\n").into_bytes())
}

/// Up to `count` descriptors sent over `socket` (one message, already waiting).
fn receive(socket: &OwnedFd, count: usize) -> std::io::Result<Vec<OwnedFd>> {
    let mut byte = [0u8; 1];
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_HOST_PORTS + 2))];
    let mut control = rustix::net::RecvAncillaryBuffer::new(&mut space);
    rustix::net::recvmsg(
        socket,
        &mut [std::io::IoSliceMut::new(&mut byte)],
        &mut control,
        rustix::net::RecvFlags::DONTWAIT | rustix::net::RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut fds = Vec::new();
    for message in control.drain() {
        if let rustix::net::RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received.take(count));
        }
    }
    Ok(fds)
}

/// In the forked child: the command's user and network namespace, made (loopback up) or joined;
/// then the namespace or the proxy's listener sent to Bridle. Only system calls, on memory
/// prepared before the fork.
#[allow(unsafe_code)]
pub(super) fn open_in_child(door: &DoorInChild) -> std::io::Result<()> {
    let check = |r: libc::c_int| if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) };
    // SAFETY: plain system calls on values owned by this function or prepared before the fork;
    // no allocation, no lock.
    unsafe {
        if let Some((user, net)) = door.join {
            // The session's namespace: its owner (Bridle's user) holds every capability in it.
            check(libc::setns(user, libc::CLONE_NEWUSER))?;
            check(libc::setns(net, libc::CLONE_NEWNET))?;
        } else {
            make_namespace(door)?;
        }
        if door.send_namespace {
            let user = check(libc::open(c"/proc/self/ns/user".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC))?;
            let user = OwnedFd::from_raw_fd(user);
            let net = check(libc::open(c"/proc/self/ns/net".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC))?;
            let net = OwnedFd::from_raw_fd(net);
            send_fds(door.reply, &[user.as_raw_fd(), net.as_raw_fd()])?;
        }
        // The proxy's listener first, then one per host port, in one message.
        let mut listeners: [Option<OwnedFd>; MAX_HOST_PORTS + 1] = Default::default();
        let mut fds: [RawFd; MAX_HOST_PORTS + 1] = [-1; MAX_HOST_PORTS + 1];
        let mut count = 0;
        if let Some(address) = door.listen {
            let listener = listen(address, false)?;
            fds[count] = listener.as_raw_fd();
            listeners[count] = Some(listener);
            count += 1;
        }
        for port in &door.host_ports[..door.host_port_count] {
            let listener = listen(SocketAddrV4::new(Ipv4Addr::LOCALHOST, *port), true)?;
            fds[count] = listener.as_raw_fd();
            listeners[count] = Some(listener);
            count += 1;
        }
        if count > 0 {
            send_fds(door.reply, &fds[..count])?;
        }
        drop(listeners);
        Ok(())
    }
}

/// A user and network namespace of the child's own, its user mapped to itself, loopback up.
#[allow(unsafe_code)]
unsafe fn make_namespace(door: &DoorInChild) -> std::io::Result<()> {
    let check = |r: libc::c_int| if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) };
    // SAFETY: the caller's.
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
        Ok(())
    }
}

/// A TCP listener bound on `address` (with `shared`, others of the same user may bind it too:
/// each command of a session listens for a host port on their shared loopback).
#[allow(unsafe_code)]
unsafe fn listen(address: SocketAddrV4, shared: bool) -> std::io::Result<OwnedFd> {
    let check = |r: libc::c_int| if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) };
    // SAFETY: the caller's; every pointer points into this frame.
    unsafe {
        let listener = check(libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0))?;
        let listener = OwnedFd::from_raw_fd(listener);
        let one: libc::c_int = 1;
        let turn_on = |option: libc::c_int| {
            let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            check(libc::setsockopt(
                listener.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&one as *const libc::c_int).cast(),
                size,
            ))
        };
        turn_on(libc::SO_REUSEADDR)?;
        if shared {
            turn_on(libc::SO_REUSEPORT)?;
        }
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = address.port().to_be();
        addr.sin_addr.s_addr = u32::from(*address.ip()).to_be();
        check(libc::bind(
            listener.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ))?;
        check(libc::listen(listener.as_raw_fd(), 1024))?;
        Ok(listener)
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

/// Sends `fds` over the socket `to` (one byte, and the descriptors beside it; at most
/// [`MAX_HOST_PORTS`] + 2).
#[allow(unsafe_code)]
unsafe fn send_fds(to: RawFd, fds: &[RawFd]) -> std::io::Result<()> {
    // Room for the descriptors' control message, aligned for `cmsghdr`.
    #[repr(C)]
    union Control {
        header: libc::cmsghdr,
        bytes: [u8; 128],
    }
    let size = std::mem::size_of_val(fds) as u32;
    // SAFETY: the caller's; every pointer below points into this frame.
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut control: Control = std::mem::zeroed();
        let space = libc::CMSG_SPACE(size) as usize;
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = (&mut control as *mut Control).cast();
        message.msg_controllen = space;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size) as usize;
        let data = libc::CMSG_DATA(header).cast::<RawFd>();
        for (i, fd) in fds.iter().enumerate() {
            std::ptr::write_unaligned(data.add(i), *fd);
        }
        if libc::sendmsg(to, &message, 0) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// What a command is told about the proxy at `address`: every proxy variable (upper- and
/// lower-case; SOCKS with names resolved by the proxy), loopback left direct (`NO_PROXY`: the
/// command's loopback is its sandbox's own, where the session's servers listen), and git's SSH
/// command, whose `ProxyCommand` is bash and `/dev/tcp` ([`SSH_TUNNEL`]), so no extra package
/// is needed.
pub(crate) fn proxy_environment(address: SocketAddrV4, credential: &Credential) -> Vec<(OsString, OsString)> {
    let user = format!("{}:{}", crate::network::wire::USER, credential.secret());
    let http = format!("http://{user}@{address}");
    let socks = format!("socks5h://{user}@{address}");
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for (name, value) in
        [("HTTP_PROXY", http.as_str()), ("HTTPS_PROXY", &http), ("ALL_PROXY", &socks), ("NO_PROXY", LOOPBACK_NAMES)]
    {
        env.push((name.into(), value.into()));
        env.push((name.to_ascii_lowercase().into(), value.into()));
    }
    env.push(("BRIDLE_PROXY_HOST".into(), address.ip().to_string().into()));
    env.push(("BRIDLE_PROXY_PORT".into(), address.port().to_string().into()));
    env.push(("BRIDLE_PROXY_AUTH".into(), credential.basic().into()));
    env.push(("BRIDLE_SSH_TUNNEL".into(), SSH_TUNNEL.into()));
    env.push(("GIT_SSH_COMMAND".into(), SSH_COMMAND.into()));
    env
}

/// The names `NO_PROXY` leaves direct: the sandbox's own loopback.
const LOOPBACK_NAMES: &str = "localhost,127.0.0.1,::1";

/// `ssh` through the proxy (also usable by hand: `ssh -o "ProxyCommand=..."` with this value's
/// option).
pub const SSH_COMMAND: &str = r#"ssh -o 'ProxyCommand=bash -c "$BRIDLE_SSH_TUNNEL" bridle-tunnel %h %p'"#;

/// The tunnel `ssh` talks through: an HTTP `CONNECT` to the proxy on bash's `/dev/tcp`, the
/// answer's head read byte by byte (bash reads a socket one byte at a time, so nothing of the
/// host's first bytes is lost), then a copy each way.
pub const SSH_TUNNEL: &str = r#"exec 3<>"/dev/tcp/${BRIDLE_PROXY_HOST:-127.0.0.1}/${BRIDLE_PROXY_PORT}" || exit 1
printf 'CONNECT %s:%s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n' "$1" "$2" "$BRIDLE_PROXY_AUTH" >&3
IFS= read -r status <&3
case "$status" in *" 200 "*) ;; *) echo "bridle proxy: ${status%$'\r'}" >&2; exit 1;; esac
while IFS= read -r line <&3; do [ -z "${line%$'\r'}" ] && break; done
cat <&3 &
exec cat >&3
"#;
