//! `[telemetry]` as written: where the team's OpenTelemetry collector is (DESIGN §17). Plain
//! data; the exporter is `crate::telemetry`.
//!
//! Rule: header values are never in the file — `headers` names them, and their values come
//! from the OS keychain — so a config can be shared without sharing a collector's token.

use serde::{Deserialize, Serialize};

/// How records reach the collector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TelemetryProtocol {
    /// OTLP over HTTP with protobuf bodies (`/v1/logs`, `/v1/traces`, `/v1/metrics`).
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
}

/// `[telemetry]`: off unless `endpoint` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// The collector's OTLP base URL, e.g. `http://collector:4318`; none, no export.
    pub endpoint: Option<String>,
    /// The wire protocol.
    pub protocol: TelemetryProtocol,
    /// Names of the HTTP headers sent with every export; each value is read from the keychain.
    pub headers: Vec<String>,
    /// Whether prompts, model text and tool output go with the records (off: left out).
    pub include_content: bool,
}

impl TelemetryConfig {
    /// Whether anything is exported.
    pub fn is_on(&self) -> bool {
        self.endpoint.as_deref().is_some_and(|e| !e.trim().is_empty())
    }
}
