//! Where the audit log meets the collector (DESIGN §17): committed rows become the
//! [`AuditEvent`]s the exporter gets, and an export outage becomes one `warning` row.
//!
//! Rule: the exporter sees a row only after it is sanitised, chained and committed, in the
//! form `bridle audit` prints, so a record in the collector can be checked against the chain.

use bridle_protocol::AuditEvent;
use serde_json::{json, Value};

use super::chain::StoredRow;
use super::{AuditKind, AuditRecord};
use crate::telemetry::Outage;

/// The exported form of a committed row; `payload` is the sanitised value it was stored from.
pub(super) fn event(row: &StoredRow, record: &AuditRecord, payload: Value) -> AuditEvent {
    AuditEvent {
        id: row.id,
        at: row.at,
        session_id: row.session_id.clone(),
        turn_id: row.turn_id.clone(),
        call_id: row.call_id.clone(),
        tool: row.tool.clone(),
        kind: row.kind.clone(),
        decision: record.decision,
        source: record.source,
        status: row.status.clone(),
        latency_ms: row.latency_ms,
        payload,
        prev_hash: row.prev_hash.clone(),
        hash: row.hash.clone(),
    }
}

/// The one `warning` row of an outage: which collector, how many rows it did not get, when.
pub fn outage_record(outage: &Outage, now_ms: i64) -> AuditRecord {
    let message = match outage.until_ms {
        Some(_) => format!(
            "telemetry: the collector at {} did not take {} audit record(s); they were dropped",
            outage.endpoint, outage.dropped
        ),
        None => format!(
            "telemetry: the collector at {} did not take {} audit record(s) before Bridle exited; they were dropped",
            outage.endpoint, outage.dropped
        ),
    };
    AuditRecord::new(AuditKind::Warning, now_ms).status("telemetry").payload(json!({
        "message": message,
        "endpoint": outage.endpoint,
        "dropped": outage.dropped,
        "since": outage.since_ms,
        "until": outage.until_ms,
    }))
}
