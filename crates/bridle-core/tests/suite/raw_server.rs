//! A bare HTTP server for what wiremock cannot do: stop a stream half-way, by closing the
//! connection or by going silent. Only model requests (POST) get the scripted replies; anything
//! else (the engine asking what window the server serves) is a 404.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;

pub enum After {
    /// Close the connection (a drop mid-stream when the body was not complete).
    Close,
    /// Keep the connection open and silent until the server is dropped.
    Hang,
}

pub struct Reply {
    pub body: String,
    pub after: After,
}

pub struct RawServer {
    pub uri: String,
    pub bodies: Arc<Mutex<Vec<serde_json::Value>>>,
    stop: Arc<Notify>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.notify_waiters();
    }
}

impl RawServer {
    pub async fn start(replies: Vec<Reply>) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(Notify::new());
        let replies = Arc::new(Mutex::new(replies.into_iter().collect::<VecDeque<_>>()));
        let (b, s) = (bodies.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = tokio::select! {
                    _ = s.notified() => return,
                    accepted = listener.accept() => accepted.unwrap(),
                };
                let (post, body) = read_request(&mut socket).await;
                if !post {
                    let _ = socket.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").await;
                    continue;
                }
                b.lock().unwrap().push(serde_json::from_slice(&body).unwrap_or_default());
                let reply = replies.lock().unwrap().pop_front();
                let s = s.clone();
                tokio::spawn(async move {
                    let Some(reply) = reply else {
                        let _ = socket.write_all(b"HTTP/1.1 418 No more replies\r\ncontent-length: 0\r\n\r\n").await;
                        return;
                    };
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(reply.body.as_bytes()).await;
                    let _ = socket.flush().await;
                    if let After::Hang = reply.after {
                        s.notified().await;
                    }
                });
            }
        });
        RawServer { uri, bodies, stop }
    }
}

/// Whether the request is a POST, and its body.
async fn read_request(socket: &mut tokio::net::TcpStream) -> (bool, Vec<u8>) {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = socket.read(&mut buf).await.unwrap();
        if n == 0 {
            return (false, Vec::new());
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            while data.len() < end + 4 + len {
                let n = socket.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                data.extend_from_slice(&buf[..n]);
            }
            return (data.starts_with(b"POST"), data[end + 4..].to_vec());
        }
    }
}
