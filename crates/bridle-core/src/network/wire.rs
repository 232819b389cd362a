//! What a client says to the proxy, read off the first bytes of its connection: SOCKS5 (any TCP),
//! an HTTP `CONNECT` (a tunnel, TLS included, never intercepted) or a plain HTTP request with an
//! absolute URI (forwarded as one request, `Connection: close`). And the refusals each one
//! understands.
//!
//! Rule: nothing is sent anywhere before the whole request is read and judged; a request that
//! cannot be read gets its protocol's error, never a hang (the head has a size limit,
//! [`super::bounds::HANDSHAKE_BYTES`], read into no more than that, and the caller a time limit). A request without the call's own credential (SOCKS5's username and
//! password, HTTP's `Proxy-Authorization`) is refused before its target is read: a listener
//! serves only the command it was made for (DESIGN §5.2), not another command of the session
//! nor another process of the host.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::bounds::HANDSHAKE_BYTES;

/// Which protocol a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// SOCKS5 `CONNECT`.
    Socks5,
    /// HTTP `CONNECT`.
    Connect,
    /// One plain HTTP request.
    Http,
    /// A connection to a forwarded host port (`host_ports`): no request, the bytes as they are.
    HostPort,
    /// Connections turned away before their request was read (over a bound).
    Unread,
}

impl Protocol {
    /// The name in the audit.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Socks5 => "socks5",
            Protocol::Connect => "connect",
            Protocol::Http => "http",
            Protocol::HostPort => "host-port",
            Protocol::Unread => "unread",
        }
    }
}

/// A request read: where to, and for plain HTTP the head to send on (rewritten) and any body
/// bytes read with it.
#[derive(Debug)]
pub struct Request {
    /// How the client asked.
    pub protocol: Protocol,
    /// The host it named (lower-case).
    pub host: String,
    /// The port.
    pub port: u16,
    /// Plain HTTP: the bytes to send upstream first.
    pub forward: Vec<u8>,
}

/// Why a request could not be read.
#[derive(Debug)]
pub struct Unreadable(pub Protocol, pub String);

/// The user name of the credential a command's proxy variables carry.
pub const USER: &str = "bridle";

/// A call's proxy credential: the secret its listener takes, and the `Proxy-Authorization`
/// value that carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    secret: String,
    basic: String,
}

impl Credential {
    /// A fresh credential, unguessable.
    pub fn new() -> Self {
        Self::with_secret(uuid::Uuid::new_v4().simple().to_string())
    }

    /// The credential for `secret` (letters and digits, as a URL carries them unescaped).
    pub fn with_secret(secret: String) -> Self {
        let basic = base64(format!("{USER}:{secret}").as_bytes());
        Self { secret, basic }
    }

    /// The secret, for the proxy URL's password.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// `base64("bridle:SECRET")`, what `Proxy-Authorization: Basic` carries.
    pub fn basic(&self) -> &str {
        &self.basic
    }
}

impl Default for Credential {
    fn default() -> Self {
        Self::new()
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Reads one request from `client`, which must carry `credential`.
pub async fn read_request<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut S,
    credential: &Credential,
) -> Result<Request, Unreadable> {
    let first = client.read_u8().await.map_err(|e| Unreadable(Protocol::Http, e.to_string()))?;
    match first {
        5 => socks5(client, credential).await,
        4 => {
            // SOCKS4: "request rejected".
            let _ = client.write_all(&[0, 0x5b, 0, 0, 0, 0, 0, 0]).await;
            Err(Unreadable(Protocol::Socks5, "SOCKS4 is not spoken here; use socks5h://".into()))
        }
        b => http(client, b, credential).await,
    }
}

async fn socks5<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut S,
    credential: &Credential,
) -> Result<Request, Unreadable> {
    let fail = |e: std::io::Error| Unreadable(Protocol::Socks5, e.to_string());
    let count = client.read_u8().await.map_err(fail)?;
    let mut methods = vec![0u8; count as usize];
    client.read_exact(&mut methods).await.map_err(fail)?;
    // Username and password (RFC 1929): the only method offered.
    if !methods.contains(&2) {
        let _ = client.write_all(&[5, 0xff]).await;
        return Err(Unreadable(Protocol::Socks5, "the client offered no username and password".into()));
    }
    client.write_all(&[5, 2]).await.map_err(fail)?;
    let field = async |client: &mut S| -> std::io::Result<Vec<u8>> {
        let len = client.read_u8().await?;
        let mut bytes = vec![0u8; len as usize];
        client.read_exact(&mut bytes).await?;
        Ok(bytes)
    };
    let version = client.read_u8().await.map_err(fail)?;
    let user = field(client).await.map_err(fail)?;
    let password = field(client).await.map_err(fail)?;
    if version != 1 || user != USER.as_bytes() || password != credential.secret().as_bytes() {
        let _ = client.write_all(&[1, 1]).await;
        return Err(Unreadable(Protocol::Socks5, "the proxy credential is not this call's".into()));
    }
    client.write_all(&[1, 0]).await.map_err(fail)?;
    let mut head = [0u8; 4];
    client.read_exact(&mut head).await.map_err(fail)?;
    let [version, command, _, kind] = head;
    if version != 5 {
        return Err(Unreadable(Protocol::Socks5, format!("version {version} in the request")));
    }
    let host = match kind {
        1 => {
            let mut a = [0u8; 4];
            client.read_exact(&mut a).await.map_err(fail)?;
            std::net::Ipv4Addr::from(a).to_string()
        }
        3 => {
            let len = client.read_u8().await.map_err(fail)?;
            let mut name = vec![0u8; len as usize];
            client.read_exact(&mut name).await.map_err(fail)?;
            String::from_utf8(name).map_err(|_| Unreadable(Protocol::Socks5, "the host name is not text".into()))?
        }
        4 => {
            let mut a = [0u8; 16];
            client.read_exact(&mut a).await.map_err(fail)?;
            std::net::Ipv6Addr::from(a).to_string()
        }
        other => {
            let _ = refuse(client, Protocol::Socks5, Refusal::Unsupported, "").await;
            return Err(Unreadable(Protocol::Socks5, format!("address type {other}")));
        }
    };
    let port = client.read_u16().await.map_err(fail)?;
    if command != 1 {
        let _ = refuse(client, Protocol::Socks5, Refusal::Unsupported, "").await;
        let what = if command == 3 { "UDP ASSOCIATE (no UDP leaves the sandbox)" } else { "BIND" };
        return Err(Unreadable(Protocol::Socks5, format!("{what} is not offered")));
    }
    Ok(Request { protocol: Protocol::Socks5, host, port, forward: Vec::new() })
}

async fn http<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut S,
    first: u8,
    credential: &Credential,
) -> Result<Request, Unreadable> {
    let mut buf = vec![first];
    let end = loop {
        if let Some(at) = find(&buf, b"\r\n\r\n") {
            break at + 4;
        }
        if buf.len() >= HANDSHAKE_BYTES {
            let why = format!("the request head is longer than {} KiB", HANDSHAKE_BYTES / 1024);
            return bad_request(client, &why).await;
        }
        let mut chunk = [0u8; 4096];
        let room = chunk.len().min(HANDSHAKE_BYTES - buf.len());
        let n = client.read(&mut chunk[..room]).await.map_err(|e| Unreadable(Protocol::Http, e.to_string()))?;
        if n == 0 {
            return Err(Unreadable(Protocol::Http, "the client closed before the request head ended".into()));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = match std::str::from_utf8(&buf[..end]) {
        Ok(h) => h.to_string(),
        Err(_) => return bad_request(client, "the request head is not text").await,
    };
    let body = buf[end..].to_vec();
    if !authorized(&head, credential) {
        let _ = client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"bridle\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await;
        return Err(Unreadable(Protocol::Http, "the proxy credential is not this call's".into()));
    }
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return bad_request(client, "the request line is not `METHOD TARGET VERSION`").await;
    };
    if method == "CONNECT" {
        let Some((host, port)) = authority(target, None) else {
            return bad_request(client, "CONNECT needs host:port").await;
        };
        return Ok(Request { protocol: Protocol::Connect, host, port, forward: body });
    }
    let Some(rest) = target.strip_prefix("http://") else {
        let why = if target.starts_with("https://") {
            "an https:// URL goes through CONNECT (set HTTPS_PROXY)"
        } else {
            "a request to a proxy names an absolute http:// URL"
        };
        return bad_request(client, why).await;
    };
    let (auth, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let Some((host, port)) = authority(auth, Some(80)) else {
        return bad_request(client, "the URL has no host").await;
    };
    let mut forward = format!("{method} {path} {version}\r\n");
    for header in lines.filter(|l| !l.is_empty()) {
        let name = header.split(':').next().unwrap_or_default().trim().to_ascii_lowercase();
        if !matches!(name.as_str(), "connection" | "keep-alive" | "proxy-connection" | "proxy-authorization") {
            forward.push_str(header);
            forward.push_str("\r\n");
        }
    }
    forward.push_str("Connection: close\r\n\r\n");
    let mut forward = forward.into_bytes();
    forward.extend_from_slice(&body);
    Ok(Request { protocol: Protocol::Http, host, port, forward })
}

/// Whether `head` carries `Proxy-Authorization: Basic` with `credential`.
fn authorized(head: &str, credential: &Credential) -> bool {
    head.split("\r\n").skip(1).any(|line| {
        let Some((name, value)) = line.split_once(':') else { return false };
        let mut words = value.split_whitespace();
        name.trim().eq_ignore_ascii_case("proxy-authorization")
            && words.next().is_some_and(|scheme| scheme.eq_ignore_ascii_case("basic"))
            && words.next() == Some(credential.basic())
    })
}

async fn bad_request<S: AsyncWrite + Unpin>(client: &mut S, why: &str) -> Result<Request, Unreadable> {
    let _ = refuse(client, Protocol::Http, Refusal::BadRequest, why).await;
    Err(Unreadable(Protocol::Http, why.to_string()))
}

/// `host:port` (`[v6]:port`), with `default` when the port is left out.
fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    let text = text.rsplit_once('@').map_or(text, |(_, h)| h);
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok().filter(|p| *p > 0)?,
        None => default?,
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// How a request ends without a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The policy or a person said no.
    Denied,
    /// The host could not be resolved or reached.
    Unreachable,
    /// The request could not be read.
    BadRequest,
    /// A SOCKS command or address type not offered.
    Unsupported,
    /// Over a bound of the proxy's (connections at once).
    Busy,
}

/// Tells the client the connection was made.
pub async fn granted<S: AsyncWrite + Unpin>(client: &mut S, protocol: Protocol) -> std::io::Result<()> {
    match protocol {
        Protocol::Socks5 => client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await,
        Protocol::Connect => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await,
        Protocol::Http | Protocol::HostPort | Protocol::Unread => Ok(()),
    }
}

/// Tells the client no connection was made, and why (in an HTTP body; SOCKS has only a code).
pub async fn refuse<S: AsyncWrite + Unpin>(
    client: &mut S,
    protocol: Protocol,
    refusal: Refusal,
    why: &str,
) -> std::io::Result<()> {
    client.write_all(&self::refusal(protocol, refusal, why)).await?;
    client.flush().await
}

/// The bytes of a refusal in `protocol` (none for a forwarded host port, which has no protocol
/// of Bridle's to refuse in).
pub fn refusal(protocol: Protocol, refusal: Refusal, why: &str) -> Vec<u8> {
    match protocol {
        Protocol::Socks5 => {
            let code = match refusal {
                Refusal::Denied => 2,
                Refusal::Unreachable => 4,
                Refusal::BadRequest | Refusal::Busy => 1,
                Refusal::Unsupported => 7,
            };
            vec![5, code, 0, 1, 0, 0, 0, 0, 0, 0]
        }
        Protocol::HostPort | Protocol::Unread => Vec::new(),
        Protocol::Connect | Protocol::Http => {
            let status = match refusal {
                Refusal::Denied => "403 Forbidden",
                Refusal::Unreachable => "502 Bad Gateway",
                Refusal::BadRequest | Refusal::Unsupported => "400 Bad Request",
                Refusal::Busy => "503 Service Unavailable",
            };
            let body = format!("Bridle: {why}\n");
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn credential() -> Credential {
        Credential::with_secret("s3cret".into())
    }

    /// `bytes` as a client with the credential sends them: SOCKS5 after the method offer and the
    /// password, HTTP with `Proxy-Authorization`.
    fn authorized(bytes: &[u8]) -> Vec<u8> {
        if bytes.first() == Some(&5) {
            let mut out = vec![5, 1, 2, 1, 6];
            out.extend(b"bridle");
            out.push(6);
            out.extend(b"s3cret");
            out.extend(&bytes[3..]);
            return out;
        }
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let (line, rest) = text.split_once("\r\n").unwrap();
        format!("{line}\r\nProxy-Authorization: Basic {}\r\n{rest}", credential().basic()).into_bytes()
    }

    async fn read(bytes: &[u8]) -> (Result<Request, Unreadable>, Vec<u8>) {
        read_as_is(&authorized(bytes)).await
    }

    async fn read_as_is(bytes: &[u8]) -> (Result<Request, Unreadable>, Vec<u8>) {
        let (mut ours, mut theirs) = tokio::io::duplex(1 << 16);
        theirs.write_all(bytes).await.unwrap();
        let request = read_request(&mut ours, &credential()).await;
        drop(ours);
        let mut said = Vec::new();
        theirs.read_to_end(&mut said).await.unwrap();
        (request, said)
    }

    #[tokio::test]
    async fn connect_socks_and_plain_http_are_read() {
        let (r, _) = read(b"CONNECT ok.test:443 HTTP/1.1\r\nHost: ok.test:443\r\n\r\n").await;
        let r = r.unwrap();
        assert_eq!((r.protocol, r.host.as_str(), r.port), (Protocol::Connect, "ok.test", 443));

        let (r, said) = read(&[5, 1, 0, 5, 1, 0, 3, 8, b's', b's', b'h', b'.', b't', b'e', b's', b't', 0, 22]).await;
        let r = r.unwrap();
        assert_eq!((r.protocol, r.host.as_str(), r.port), (Protocol::Socks5, "ssh.test", 22));
        assert_eq!(said, [5, 2, 1, 0]);

        let (r, _) = read(b"GET http://Ok.Test:8080/a?b HTTP/1.1\r\nHost: ok.test:8080\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\nbody").await;
        let r = r.unwrap();
        assert_eq!((r.protocol, r.host.as_str(), r.port), (Protocol::Http, "ok.test", 8080));
        assert_eq!(
            String::from_utf8(r.forward).unwrap(),
            "GET /a?b HTTP/1.1\r\nHost: ok.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\nbody"
        );
    }

    #[tokio::test]
    async fn what_is_not_offered_gets_its_protocols_error() {
        let (r, said) = read(&[5, 1, 0, 5, 3, 0, 1, 127, 0, 0, 1, 0, 53]).await;
        assert!(r.unwrap_err().1.contains("UDP"));
        assert_eq!(said, [5, 2, 1, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0]);
        let (r, said) = read(b"GET https://ok.test/ HTTP/1.1\r\n\r\n").await;
        assert!(r.unwrap_err().1.contains("CONNECT"));
        assert!(String::from_utf8(said).unwrap().starts_with("HTTP/1.1 400"));
        let (r, _) = read(b"GARBAGE\r\n\r\n").await;
        assert!(r.is_err());
    }

    #[tokio::test]
    async fn a_head_past_the_byte_limit_is_refused_having_read_no_more_than_the_limit() {
        let mut long = b"CONNECT ok.test:443 HTTP/1.1\r\nX-Pad: ".to_vec();
        long.resize(HANDSHAKE_BYTES * 2, b'a');
        let (mut ours, mut theirs) = tokio::io::duplex(HANDSHAKE_BYTES * 4);
        theirs.write_all(&long).await.unwrap();
        let r = read_request(&mut ours, &credential()).await;
        assert!(r.unwrap_err().1.contains("longer than 16 KiB"));
        drop(ours);
        let mut said = Vec::new();
        theirs.read_to_end(&mut said).await.unwrap();
        assert!(String::from_utf8(said).unwrap().starts_with("HTTP/1.1 400"));
        // A head just under the limit is read.
        let mut fits = b"CONNECT ok.test:443 HTTP/1.1\r\nX-Pad: ".to_vec();
        fits.resize(HANDSHAKE_BYTES - 200, b'a');
        fits.extend_from_slice(b"\r\n\r\n");
        assert_eq!(read(&fits).await.0.unwrap().host, "ok.test");
    }

    #[tokio::test]
    async fn a_request_without_the_calls_credential_is_refused_before_its_target_is_read() {
        assert_eq!(credential().basic(), "YnJpZGxlOnMzY3JldA==");
        let (r, said) = read_as_is(b"CONNECT ok.test:443 HTTP/1.1\r\n\r\n").await;
        assert!(r.unwrap_err().1.contains("credential"));
        assert!(String::from_utf8(said).unwrap().starts_with("HTTP/1.1 407"));
        let wrong = b"CONNECT ok.test:443 HTTP/1.1\r\nProxy-Authorization: Basic YnJpZGxlOndyb25n\r\n\r\n";
        assert!(read_as_is(wrong).await.0.is_err());
        // SOCKS5 without a password, and with another's.
        let (r, said) = read_as_is(&[5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80]).await;
        assert!(r.is_err());
        assert_eq!(said, [5, 0xff]);
        let mut other = vec![5, 1, 2, 1, 6];
        other.extend(b"bridle");
        other.push(5);
        other.extend(b"guess");
        let (r, said) = read_as_is(&other).await;
        assert!(r.is_err());
        assert_eq!(said, [5, 2, 1, 1]);
    }
}
