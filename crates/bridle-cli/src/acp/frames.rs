//! ACP's wire, read by Bridle: one JSON-RPC message a line on stdin, handed to the
//! `agent-client-protocol` crate's connection as lines. The crate's own stdio reader ends the
//! connection on a line that is not UTF-8 and reads any line whole, however long; this reader
//! sits in front of it instead.
//!
//! Rules: a line that is not UTF-8 reaches the connection as a short text that is not JSON, so
//! the client gets JSON-RPC's parse error (-32700) and the connection goes on; a line longer than
//! [`MAX_FRAME`] is never held: its bytes are counted and dropped up to its end, and it is
//! answered the same way, naming the limit. Memory for one frame is at most the limit.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

/// The longest message Bridle reads from a client.
pub const MAX_FRAME: usize = 16 << 20;

/// One line of the wire, as read.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line of text (its newline, and a `\r` before it, removed).
    Text(String),
    /// A line that is not UTF-8, of this many bytes.
    NotUtf8(usize),
    /// A line over [`MAX_FRAME`], of this many bytes; it was not kept.
    TooLong(usize),
}

impl Frame {
    /// The line the connection parses: the text itself, or a sentence that is not JSON (so the
    /// connection answers it with a parse error carrying the sentence).
    pub fn into_line(self) -> String {
        match self {
            Frame::Text(text) => text,
            Frame::NotUtf8(bytes) => format!("a frame of {bytes} bytes that is not UTF-8 was refused"),
            Frame::TooLong(bytes) => {
                format!("a frame of {bytes} bytes was refused: a message may be at most {MAX_FRAME} bytes")
            }
        }
    }
}

/// The next frame of `reader`, at most `limit` bytes of it held; `None` at the end of input.
pub async fn next_frame<R: AsyncBufRead + Unpin>(reader: &mut R, limit: usize) -> io::Result<Option<Frame>> {
    let mut line = Vec::new();
    let mut total = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if total == 0 {
                return Ok(None);
            }
            break;
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        total += chunk.len();
        if total <= limit {
            line.extend_from_slice(chunk);
        } else if !line.is_empty() {
            line = Vec::new();
        }
        reader.consume(used);
        if done {
            break;
        }
    }
    if total > limit {
        return Ok(Some(Frame::TooLong(total)));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(match String::from_utf8(line) {
        Ok(text) => Frame::Text(text),
        Err(e) => Frame::NotUtf8(e.as_bytes().len()),
    }))
}

/// Stdin as the stream of lines the connection reads.
pub fn stdin_lines() -> impl futures::Stream<Item = io::Result<String>> + Send + 'static {
    let reader = tokio::io::BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    futures::stream::unfold(reader, |mut reader| async move {
        match next_frame(&mut reader, MAX_FRAME).await {
            Ok(Some(frame)) => Some((Ok(frame.into_line()), reader)),
            Ok(None) => None,
            Err(e) => Some((Err(e), reader)),
        }
    })
}

/// Stdout as the sink of lines the connection writes, each flushed whole.
pub fn stdout_lines() -> impl futures::Sink<String, Error = io::Error> + Send + 'static {
    futures::sink::unfold(tokio::io::stdout(), |mut out, line: String| async move {
        use tokio::io::AsyncWriteExt as _;
        out.write_all(line.as_bytes()).await?;
        out.write_all(b"\n").await?;
        out.flush().await?;
        Ok::<_, io::Error>(out)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], limit: usize) -> Vec<Frame> {
        // A tiny buffer, so lines span many reads.
        let mut reader = tokio::io::BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        while let Some(frame) = next_frame(&mut reader, limit).await.unwrap() {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn lines_come_whole_and_bad_ones_are_named_without_being_kept() {
        let input = b"{\"a\":1}\r\n\xff\xfe\n0123456789abcdef\nlast";
        assert_eq!(
            frames(input, 10).await,
            [Frame::Text("{\"a\":1}".into()), Frame::NotUtf8(2), Frame::TooLong(16), Frame::Text("last".into()),]
        );
        assert_eq!(frames(b"", 10).await, []);
        assert_eq!(frames(b"\n\n", 10).await, [Frame::Text(String::new()), Frame::Text(String::new())]);
        // What the connection parses is never JSON for a refused frame.
        for frame in [Frame::NotUtf8(2), Frame::TooLong(99)] {
            assert!(serde_json::from_str::<serde_json::Value>(&frame.into_line()).is_err());
        }
    }
}
