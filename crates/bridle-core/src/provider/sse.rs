//! Server-sent events (and Ollama's newline-delimited JSON): bytes in, `(event, data)` records
//! out, and the glue that turns a response body into a stream of [`ModelEvent`]s through a
//! wire-specific decoder.
//!
//! Rule: a stream that ends before its wire format says the answer is complete is an error
//! ([`ProviderError::StreamDropped`]), never a silently short answer. How an answer ends is
//! kept here once ([`Ending`], [`WireDecoder::finish`]): each wire format says only which
//! record ends it and what it holds back until then.

use std::collections::VecDeque;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use bridle_protocol::TokenUsage;
use serde_json::Value;

use super::{ModelEvent, ModelStream, ProviderError};

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental SSE parser (the WHATWG algorithm, minus `id` and `retry`, which we ignore).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buffer: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n' || b == b'\r') {
            // A CR followed by LF is one line break; wait for the next byte if CR ends the buffer.
            let crlf = self.buffer[end] == b'\r' && self.buffer.get(end + 1) == Some(&b'\n');
            if self.buffer[end] == b'\r' && end + 1 == self.buffer.len() {
                break;
            }
            let line: Vec<u8> = self.buffer.drain(..end).collect();
            self.buffer.drain(..if crlf { 2 } else { 1 });
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(SseEvent { event: self.event.take(), data: self.data.join("\n") });
                }
                self.data.clear();
                self.event = None;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_ref(), ""),
            };
            match field {
                "event" => self.event = Some(value.to_string()),
                "data" => self.data.push(value.to_string()),
                _ => {}
            }
        }
        events
    }
}

/// How a body is cut into records.
pub(crate) trait Framing: Send + 'static {
    /// Feeds bytes; returns the records completed by them.
    fn records(&mut self, chunk: &[u8]) -> Vec<SseEvent>;
}

impl Framing for SseParser {
    fn records(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.feed(chunk)
    }
}

/// Newline-delimited JSON: each non-empty line is one record (its `data`).
#[derive(Debug, Default)]
pub(crate) struct Lines {
    buffer: Vec<u8>,
}

impl Framing for Lines {
    fn records(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buffer.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line).trim().to_string();
            if !text.is_empty() {
                out.push(SseEvent { event: None, data: text });
            }
        }
        out
    }
}

/// Reads one record as JSON; `what` names the record in the error ("chunk", "line").
pub(crate) fn json(what: &str, data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        ProviderError::Protocol(format!("{what} is not JSON ({e}): {}", data.chars().take(200).collect::<String>()))
    })
}

/// Whether an answer has ended, and its end given out the one way every wire format ends:
/// the usage reported at the end (if the wire reports it there), the tool calls held back
/// until then, then [`ModelEvent::Finished`].
#[derive(Debug, Default)]
pub(crate) struct Ending {
    done: bool,
}

impl Ending {
    /// The wire said the answer is complete: gives out its end.
    pub fn complete(
        &mut self,
        usage: Option<TokenUsage>,
        calls: impl IntoIterator<Item = ModelEvent>,
        out: &mut Vec<ModelEvent>,
    ) {
        out.extend(usage.map(ModelEvent::Usage));
        out.extend(calls);
        out.push(ModelEvent::Finished);
        self.done = true;
    }

    /// Whether the answer has ended.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

/// What a wire format does with each SSE event.
pub(crate) trait WireDecoder: Send + 'static {
    /// What a cut stream ended before, as its error names it (`message_stop`).
    const AWAITED: &'static str;
    /// Handles one event, pushing what it completes.
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError>;
    /// Where the decoder keeps whether its answer has ended.
    fn ending(&self) -> &Ending;
    /// At the end of a body that never sent [`WireDecoder::AWAITED`]: completes an answer the
    /// wire counts as complete anyway, and says whether it did. None does, unless a wire says so.
    fn complete_at_end(&mut self, _out: &mut Vec<ModelEvent>) -> bool {
        false
    }
    /// Whether the answer is complete (after which the body is no longer read).
    fn is_done(&self) -> bool {
        self.ending().is_done()
    }
    /// At the end of the body: the answer has ended, or is completed now, or the stream was cut.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        if self.is_done() || self.complete_at_end(out) {
            return Ok(());
        }
        Err(ProviderError::StreamDropped(format!("the stream ended before {}", Self::AWAITED)))
    }
}

struct State<S, F, D> {
    body: S,
    parser: F,
    decoder: D,
    pending: VecDeque<Result<ModelEvent, ProviderError>>,
    ended: bool,
}

/// Turns an SSE response body into model events through `decoder`.
pub(crate) fn decode<S, D>(body: S, decoder: D) -> ModelStream
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + Unpin + 'static,
    D: WireDecoder,
{
    decode_framed(body, SseParser::default(), decoder)
}

/// Turns a response body cut by `framing` into model events through `decoder`.
pub(crate) fn decode_framed<S, F, D>(body: S, framing: F, decoder: D) -> ModelStream
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + Unpin + 'static,
    F: Framing,
    D: WireDecoder,
{
    let state = State { body, parser: framing, decoder, pending: VecDeque::new(), ended: false };
    Box::pin(futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.pending.pop_front() {
                return Some((item, st));
            }
            if st.ended {
                return None;
            }
            let mut out = Vec::new();
            let step = if st.decoder.is_done() {
                st.ended = true;
                Ok(())
            } else {
                match st.body.next().await {
                    Some(Ok(chunk)) => {
                        st.parser.records(&chunk).into_iter().try_for_each(|event| st.decoder.on_event(event, &mut out))
                    }
                    Some(Err(e)) => {
                        st.ended = true;
                        Err(ProviderError::StreamDropped(super::http::describe(&e)))
                    }
                    None => {
                        st.ended = true;
                        st.decoder.finish(&mut out)
                    }
                }
            };
            st.pending.extend(out.into_iter().map(Ok));
            if let Err(e) = step {
                st.ended = true;
                st.pending.push_back(Err(e));
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent { event: event.map(str::to_owned), data: data.into() }
    }

    #[test]
    fn parses_events_split_anywhere() {
        let text = b"event: message_start\ndata: {\"a\":1}\n\n: comment\ndata: x\ndata: y\n\ndata:[DONE]\n\n";
        for split in 0..text.len() {
            let mut p = SseParser::default();
            let mut events = p.feed(&text[..split]);
            events.extend(p.feed(&text[split..]));
            assert_eq!(
                events,
                vec![ev(Some("message_start"), "{\"a\":1}"), ev(None, "x\ny"), ev(None, "[DONE]")],
                "split at {split}"
            );
        }
    }

    #[test]
    fn handles_crlf_and_cr_line_breaks() {
        let mut p = SseParser::default();
        let mut events = p.feed(b"data: a\r");
        events.extend(p.feed(b"\n\r\ndata: b\r\r"));
        // A CR at the very end could be half of a CRLF: the event waits for the next byte.
        assert_eq!(events.len(), 1);
        events.extend(p.feed(b": keep-alive\n"));
        assert_eq!(events, vec![ev(None, "a"), ev(None, "b")]);
    }

    /// A wire whose answer ends with an `end` record and holds its calls back until then.
    #[derive(Default)]
    struct Wire {
        calls: Vec<ModelEvent>,
        ending: Ending,
    }

    impl WireDecoder for Wire {
        const AWAITED: &'static str = "end";

        fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
            match event.data.as_str() {
                "end" => {
                    let usage = TokenUsage { input_tokens: 3, cached_input_tokens: 0, output_tokens: 1 };
                    self.ending.complete(Some(usage), std::mem::take(&mut self.calls), out);
                }
                name => self.calls.push(ModelEvent::ToolCall {
                    provider_id: String::new(),
                    name: name.into(),
                    arguments: "{}".into(),
                }),
            }
            Ok(())
        }

        fn ending(&self) -> &Ending {
            &self.ending
        }
    }

    #[test]
    fn an_answer_ends_with_usage_then_its_calls_then_finished_and_a_cut_names_what_never_came() {
        let mut wire = Wire::default();
        let mut out = Vec::new();
        wire.on_event(ev(None, "read_file"), &mut out).unwrap();
        let cut = wire.finish(&mut out).unwrap_err();
        assert!(matches!(&cut, ProviderError::StreamDropped(m) if m == "the stream ended before end"), "{cut:?}");
        assert!(out.is_empty(), "a cut answer gives out no held call");

        wire.on_event(ev(None, "end"), &mut out).unwrap();
        let call =
            ModelEvent::ToolCall { provider_id: String::new(), name: "read_file".into(), arguments: "{}".into() };
        let usage = TokenUsage { input_tokens: 3, cached_input_tokens: 0, output_tokens: 1 };
        assert_eq!(out, vec![ModelEvent::Usage(usage), call, ModelEvent::Finished]);
        assert!(wire.is_done());
        let mut after = Vec::new();
        wire.finish(&mut after).unwrap();
        assert!(after.is_empty(), "an ended answer ends once");
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        let mut p = SseParser::default();
        assert!(p.feed(b"event: ping\n\n").is_empty());
    }
}
