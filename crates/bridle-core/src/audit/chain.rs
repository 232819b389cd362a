//! The hash chain: how a stored row is encoded and hashed, and how it reads back.
//!
//! Rule: `hash = sha256("bridle-audit-v1" ‖ id ‖ at ‖ session ‖ turn ‖ call ‖ tool ‖ kind ‖
//! decision ‖ source ‖ status ‖ latency ‖ payload ‖ prevHash)` where every field is tagged
//! (absent, text or integer) and text is length-prefixed, so no two different rows encode to
//! the same bytes. The payload is hashed as the exact JSON text stored; the first row's
//! `prevHash` is [`GENESIS`].

use bridle_protocol::AuditEvent;
use rusqlite::Row;
use sha2::{Digest, Sha256};

use super::record::{parse_decision, parse_source};
use super::AuditError;

/// The `prevHash` of the first row.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The columns of the `audit` table, in [`StoredRow`] order.
pub(crate) const COLUMNS: &str =
    "id, at, session_id, turn_id, call_id, tool, kind, decision, source, status, latency_ms, payload, prev_hash, hash";

/// A row as stored: every column in its text form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredRow {
    pub id: i64,
    pub at: i64,
    pub session_id: Option<String>,
    pub turn_id: Option<String>,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub kind: String,
    pub decision: Option<String>,
    pub source: Option<String>,
    pub status: Option<String>,
    pub latency_ms: Option<i64>,
    pub payload: String,
    pub prev_hash: String,
    pub hash: String,
}

impl StoredRow {
    /// Reads a row selected with [`COLUMNS`].
    pub fn from_row(row: &Row<'_>) -> rusqlite::Result<StoredRow> {
        Ok(StoredRow {
            id: row.get(0)?,
            at: row.get(1)?,
            session_id: row.get(2)?,
            turn_id: row.get(3)?,
            call_id: row.get(4)?,
            tool: row.get(5)?,
            kind: row.get(6)?,
            decision: row.get(7)?,
            source: row.get(8)?,
            status: row.get(9)?,
            latency_ms: row.get(10)?,
            payload: row.get(11)?,
            prev_hash: row.get(12)?,
            hash: row.get(13)?,
        })
    }

    /// The hash this row's content and `prev_hash` call for (not the stored `hash`).
    pub fn compute_hash(&self) -> String {
        let mut h = Encoder(Sha256::new());
        h.0.update(b"bridle-audit-v1");
        h.int(Some(self.id));
        h.int(Some(self.at));
        h.text(self.session_id.as_deref());
        h.text(self.turn_id.as_deref());
        h.text(self.call_id.as_deref());
        h.text(self.tool.as_deref());
        h.text(Some(&self.kind));
        h.text(self.decision.as_deref());
        h.text(self.source.as_deref());
        h.text(self.status.as_deref());
        h.int(self.latency_ms);
        h.text(Some(&self.payload));
        h.text(Some(&self.prev_hash));
        hex(&h.0.finalize())
    }

    /// The wire form. A payload that is not JSON (only possible if someone edited the file)
    /// is shown as a JSON string rather than hidden.
    pub fn into_event(self) -> Result<AuditEvent, AuditError> {
        let corrupt =
            |what: &str, value: &str| AuditError::Corrupt { id: self.id, message: format!("{what} `{value}`") };
        let decision = match self.decision.as_deref() {
            None => None,
            Some(d) => Some(parse_decision(d).ok_or_else(|| corrupt("unknown decision", d))?),
        };
        let source = match self.source.as_deref() {
            None => None,
            Some(s) => Some(parse_source(s).ok_or_else(|| corrupt("unknown decision source", s))?),
        };
        let payload =
            serde_json::from_str(&self.payload).unwrap_or_else(|_| serde_json::Value::String(self.payload.clone()));
        Ok(AuditEvent {
            id: self.id,
            at: self.at,
            session_id: self.session_id,
            turn_id: self.turn_id,
            call_id: self.call_id,
            tool: self.tool,
            kind: self.kind,
            decision,
            source,
            status: self.status,
            latency_ms: self.latency_ms,
            payload,
            prev_hash: self.prev_hash,
            hash: self.hash,
        })
    }
}

/// Tagged, length-prefixed fields into the hasher.
struct Encoder(Sha256);

impl Encoder {
    fn text(&mut self, value: Option<&str>) {
        match value {
            None => self.0.update([0u8]),
            Some(s) => {
                self.0.update([1u8]);
                self.0.update((s.len() as u64).to_be_bytes());
                self.0.update(s.as_bytes());
            }
        }
    }

    fn int(&mut self, value: Option<i64>) {
        match value {
            None => self.0.update([0u8]),
            Some(n) => {
                self.0.update([2u8]);
                self.0.update(n.to_be_bytes());
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> StoredRow {
        StoredRow {
            id: 1,
            at: 5,
            session_id: Some("s".into()),
            turn_id: None,
            call_id: None,
            tool: Some("bash".into()),
            kind: "tool_call".into(),
            decision: None,
            source: None,
            status: None,
            latency_ms: None,
            payload: "{}".into(),
            prev_hash: GENESIS.into(),
            hash: String::new(),
        }
    }

    #[test]
    fn every_field_changes_the_hash() {
        let base = row().compute_hash();
        assert_eq!(base.len(), 64);
        let edits: [fn(&mut StoredRow); 13] = [
            |r| r.id = 2,
            |r| r.at = 6,
            |r| r.session_id = None,
            |r| r.turn_id = Some(String::new()),
            |r| r.call_id = Some("c".into()),
            |r| r.tool = Some("bas".into()),
            |r| r.kind = "tool_started".into(),
            |r| r.decision = Some("allow".into()),
            |r| r.source = Some("mode".into()),
            |r| r.status = Some("ok".into()),
            |r| r.latency_ms = Some(0),
            |r| r.payload = "{ }".into(),
            |r| r.prev_hash = "1".into(),
        ];
        for edit in edits {
            let mut r = row();
            edit(&mut r);
            assert_ne!(r.compute_hash(), base, "{r:?}");
        }
    }

    #[test]
    fn moving_text_between_fields_changes_the_hash() {
        let mut a = row();
        a.session_id = Some("ab".into());
        a.turn_id = Some("c".into());
        let mut b = row();
        b.session_id = Some("a".into());
        b.turn_id = Some("bc".into());
        assert_ne!(a.compute_hash(), b.compute_hash());
    }
}
