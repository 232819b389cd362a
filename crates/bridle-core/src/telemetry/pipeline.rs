//! The worker's side of the export: audit rows turned into OTel log records, spans and metric
//! points with the `opentelemetry` SDK, and sent with `opentelemetry-otlp`'s HTTP exporters.
//!
//! Rule: a row's record carries what the row carries, nothing else: its kind, decision,
//! source, ids, `bridle.audit.seq` and `bridle.audit.hash`, and its (already sanitised) payload
//! with the content keys — prompts, model text, tool arguments and output, diffs — removed
//! unless `include_content` is on. Spans and metrics are derived from the same rows: a turn
//! span from its `user_message` row to its last row, an `execute_tool <name>` span per ended
//! call, a `chat` span per model request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bridle_protocol::AuditEvent;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter as _, LogProcessor, SdkLogRecord, SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanData, SpanExporter as _, SpanProcessor};
use opentelemetry_sdk::Resource;
use serde_json::Value;

/// Payload keys that hold content: left out unless `include_content`.
const CONTENT: &[&str] =
    &["text", "output", "arguments", "diff", "preview", "feedback", "editedArguments", "subject", "summary", "content"];
/// How often metric points go out (and once more at exit).
const METRICS_EVERY: Duration = Duration::from_secs(5);

type Shared<T> = Arc<Mutex<Vec<T>>>;

/// Collects emitted records for the worker to export itself, so it learns each export's result.
#[derive(Debug, Default)]
struct Collect<T>(Shared<T>);

impl LogProcessor for Collect<SdkLogRecord> {
    fn emit(&self, data: &mut SdkLogRecord, _scope: &InstrumentationScope) {
        super::lock(&self.0).push(data.clone());
    }
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

impl SpanProcessor for Collect<SpanData> {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &Context) {}
    fn on_end(&self, span: SpanData) {
        super::lock(&self.0).push(span);
    }
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

struct Instruments {
    tokens: Histogram<u64>,
    tool_duration: Histogram<f64>,
    decisions: Counter<u64>,
    requests: Histogram<f64>,
}

/// An open turn span, ended at its last row's time when the next turn of its session starts or
/// the pipeline shuts down.
struct OpenTurn {
    cx: Context,
    session: Option<String>,
    last_at: i64,
}

pub(super) struct Pipeline {
    scope: InstrumentationScope,
    logger: SdkLogger,
    logger_provider: SdkLoggerProvider,
    log_exporter: opentelemetry_otlp::LogExporter,
    logs: Shared<SdkLogRecord>,
    tracer: SdkTracer,
    tracer_provider: SdkTracerProvider,
    span_exporter: opentelemetry_otlp::SpanExporter,
    spans: Shared<SpanData>,
    meters: SdkMeterProvider,
    instruments: Instruments,
    turns: HashMap<String, OpenTurn>,
    include_content: bool,
}

impl Pipeline {
    pub(super) fn new(
        endpoint: &str,
        headers: HashMap<String, String>,
        include_content: bool,
        timeout: Duration,
    ) -> Result<Pipeline, String> {
        let base = endpoint.trim_end_matches('/');
        let resource = Resource::builder_empty()
            .with_service_name("bridle")
            .with_attributes([KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))])
            .build();
        let mut log_exporter = opentelemetry_otlp::LogExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/logs"))
            .with_headers(headers.clone())
            .with_timeout(timeout)
            .build()
            .map_err(|e| e.to_string())?;
        log_exporter.set_resource(&resource);
        let mut span_exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/traces"))
            .with_headers(headers.clone())
            .with_timeout(timeout)
            .build()
            .map_err(|e| e.to_string())?;
        span_exporter.set_resource(&resource);
        let metric_exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/metrics"))
            .with_headers(headers)
            .with_timeout(timeout)
            .build()
            .map_err(|e| e.to_string())?;

        let scope = InstrumentationScope::builder("bridle").with_version(env!("CARGO_PKG_VERSION")).build();
        let logs = Shared::default();
        let logger_provider = SdkLoggerProvider::builder()
            .with_log_processor(Collect(logs.clone()))
            .with_resource(resource.clone())
            .build();
        let spans = Shared::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_span_processor(Collect(spans.clone()))
            .with_resource(resource.clone())
            .build();
        let meters = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metric_exporter).with_interval(METRICS_EVERY).build())
            .with_resource(resource)
            .build();
        let meter = meters.meter_with_scope(scope.clone());
        let instruments = Instruments {
            tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Tokens per model request, by gen_ai.token.type")
                .build(),
            tool_duration: meter
                .f64_histogram("bridle.tool.duration")
                .with_unit("s")
                .with_description("How long tool calls ran")
                .build(),
            decisions: meter
                .u64_counter("bridle.decisions")
                .with_description("Guard and approval decisions, by decision and source")
                .build(),
            requests: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("How long model requests took")
                .build(),
        };
        Ok(Pipeline {
            logger: logger_provider.logger_with_scope(scope.clone()),
            tracer: tracer_provider.tracer_with_scope(scope.clone()),
            scope,
            logger_provider,
            log_exporter,
            logs,
            tracer_provider,
            span_exporter,
            spans,
            meters,
            instruments,
            turns: HashMap::new(),
            include_content,
        })
    }

    /// Turns `rows` into records, spans and points and sends the records and spans; an error
    /// when the collector did not take them.
    pub(super) fn export(&mut self, rows: impl Iterator<Item = AuditEvent>) -> Result<(), String> {
        for row in rows {
            self.spans_of(&row);
            self.metrics_of(&row);
            self.log(&row);
        }
        self.send()
    }

    /// Ends the open turns, sends what is left, and stops the metric reader (its last export).
    pub(super) fn shutdown(&mut self) {
        for (_, turn) in self.turns.drain() {
            turn.cx.span().end_with_timestamp(time(turn.last_at));
        }
        if let Err(e) = self.send() {
            tracing::debug!("telemetry: the last export failed: {e}");
        }
        if let Err(e) = self.meters.shutdown() {
            tracing::debug!("telemetry: the last metrics export failed: {e}");
        }
        let _ = self.logger_provider.shutdown();
        let _ = self.tracer_provider.shutdown();
    }

    fn send(&mut self) -> Result<(), String> {
        let records = std::mem::take(&mut *super::lock(&self.logs));
        if !records.is_empty() {
            let pairs: Vec<(&SdkLogRecord, &InstrumentationScope)> = records.iter().map(|r| (r, &self.scope)).collect();
            futures::executor::block_on(self.log_exporter.export(LogBatch::new(&pairs))).map_err(|e| e.to_string())?;
        }
        let spans = std::mem::take(&mut *super::lock(&self.spans));
        if !spans.is_empty() {
            futures::executor::block_on(self.span_exporter.export(spans)).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn log(&self, row: &AuditEvent) {
        let mut record = self.logger.create_log_record();
        record.set_event_name("bridle.audit");
        record.set_timestamp(time(row.at));
        record.set_observed_timestamp(SystemTime::now());
        let warning = matches!(row.kind.as_str(), "warning" | "error" | "tool_failed");
        record.set_severity_number(if warning { Severity::Warn } else { Severity::Info });
        record.set_severity_text(if warning { "WARN" } else { "INFO" });
        record.set_body(AnyValue::from(row.kind.clone()));
        record.add_attribute("bridle.audit.kind", row.kind.clone());
        record.add_attribute("bridle.audit.seq", row.id);
        record.add_attribute("bridle.audit.hash", row.hash.clone());
        record.add_attribute("bridle.audit.prev_hash", row.prev_hash.clone());
        let mut text = |key: &'static str, value: &Option<String>| {
            if let Some(v) = value {
                record.add_attribute(key, v.clone());
            }
        };
        text("gen_ai.conversation.id", &row.session_id);
        text("bridle.turn.id", &row.turn_id);
        text("gen_ai.tool.call.id", &row.call_id);
        text("gen_ai.tool.name", &row.tool);
        text("bridle.status", &row.status);
        text("bridle.decision", &row.decision.and_then(wire));
        text("bridle.decision.source", &row.source.and_then(wire));
        if let Some(ms) = row.latency_ms {
            record.add_attribute("bridle.latency_ms", ms);
        }
        let payload = if self.include_content { row.payload.clone() } else { without_content(&row.payload) };
        record.add_attribute("bridle.audit.payload", payload.to_string());
        if let Some(turn) = row.turn_id.as_ref().and_then(|t| self.turns.get(t)) {
            let span = turn.cx.span();
            let context = span.span_context();
            record.set_trace_context(context.trace_id(), context.span_id(), Some(context.trace_flags()));
        }
        self.logger.emit(record);
    }

    fn spans_of(&mut self, row: &AuditEvent) {
        if row.kind == "user_message" {
            if let Some(turn_id) = &row.turn_id {
                // A session's new turn ends its previous one.
                let ended: Vec<String> =
                    self.turns.iter().filter(|(_, t)| t.session == row.session_id).map(|(k, _)| k.clone()).collect();
                for key in ended {
                    if let Some(turn) = self.turns.remove(&key) {
                        turn.cx.span().end_with_timestamp(time(turn.last_at));
                    }
                }
                let mut attributes = vec![
                    KeyValue::new("gen_ai.operation.name", "invoke_agent"),
                    KeyValue::new("gen_ai.agent.name", "bridle"),
                    KeyValue::new("bridle.turn.id", turn_id.clone()),
                ];
                if let Some(session) = &row.session_id {
                    attributes.push(KeyValue::new("gen_ai.conversation.id", session.clone()));
                }
                let span = self
                    .tracer
                    .span_builder("invoke_agent bridle")
                    .with_kind(SpanKind::Internal)
                    .with_start_time(time(row.at))
                    .with_attributes(attributes)
                    .start(&self.tracer);
                let cx = Context::new().with_span(span);
                self.turns.insert(turn_id.clone(), OpenTurn { cx, session: row.session_id.clone(), last_at: row.at });
            }
        }
        let parent = match row.turn_id.as_ref().and_then(|t| self.turns.get_mut(t)) {
            Some(turn) => {
                turn.last_at = turn.last_at.max(row.at);
                turn.cx.clone()
            }
            None => Context::new(),
        };
        let Some(latency) = row.latency_ms else { return };
        let (name, mut attributes) = match row.kind.as_str() {
            "tool_completed" | "tool_failed" => {
                let tool = row.tool.clone().unwrap_or_default();
                let mut attributes = vec![
                    KeyValue::new("gen_ai.operation.name", "execute_tool"),
                    KeyValue::new("gen_ai.tool.name", tool.clone()),
                ];
                if let Some(call) = &row.call_id {
                    attributes.push(KeyValue::new("gen_ai.tool.call.id", call.clone()));
                }
                (format!("execute_tool {tool}"), attributes)
            }
            "model_request" => {
                let model = row.payload["model"].as_str().unwrap_or_default().to_string();
                let mut attributes = vec![
                    KeyValue::new("gen_ai.operation.name", "chat"),
                    KeyValue::new("gen_ai.request.model", model.clone()),
                ];
                let usage = &row.payload["usage"];
                for (key, field) in
                    [("gen_ai.usage.input_tokens", "inputTokens"), ("gen_ai.usage.output_tokens", "outputTokens")]
                {
                    if let Some(n) = usage[field].as_i64() {
                        attributes.push(KeyValue::new(key, n));
                    }
                }
                (format!("chat {model}").trim_end().to_string(), attributes)
            }
            _ => return,
        };
        if let Some(status) = &row.status {
            attributes.push(KeyValue::new("bridle.status", status.clone()));
        }
        attributes.push(KeyValue::new("bridle.audit.seq", row.id));
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(if row.kind == "model_request" { SpanKind::Client } else { SpanKind::Internal })
            .with_start_time(time(row.at - latency))
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &parent);
        if row.kind == "tool_failed" || row.status.as_deref() == Some("error") {
            span.set_status(Status::error(row.status.clone().unwrap_or_default()));
        }
        span.end_with_timestamp(time(row.at));
    }

    fn metrics_of(&self, row: &AuditEvent) {
        let i = &self.instruments;
        match row.kind.as_str() {
            "model_request" => {
                let model = row.payload["model"].as_str().unwrap_or_default().to_string();
                let usage = &row.payload["usage"];
                for (kind, field) in [("input", "inputTokens"), ("output", "outputTokens")] {
                    if let Some(n) = usage[field].as_u64() {
                        i.tokens.record(
                            n,
                            &[
                                KeyValue::new("gen_ai.token.type", kind),
                                KeyValue::new("gen_ai.operation.name", "chat"),
                                KeyValue::new("gen_ai.request.model", model.clone()),
                            ],
                        );
                    }
                }
                if let Some(ms) = row.latency_ms {
                    i.requests.record(ms as f64 / 1000.0, &[KeyValue::new("gen_ai.request.model", model)]);
                }
            }
            "tool_completed" | "tool_failed" => {
                if let Some(ms) = row.latency_ms {
                    let tool = row.tool.clone().unwrap_or_default();
                    let status = row.status.clone().unwrap_or_default();
                    i.tool_duration.record(
                        ms as f64 / 1000.0,
                        &[KeyValue::new("gen_ai.tool.name", tool), KeyValue::new("bridle.status", status)],
                    );
                }
            }
            _ => {}
        }
        if let Some(decision) = row.decision.and_then(wire) {
            let source = row.source.and_then(wire).unwrap_or_default();
            let tool = row.tool.clone().unwrap_or_default();
            i.decisions.add(
                1,
                &[
                    KeyValue::new("bridle.decision", decision),
                    KeyValue::new("bridle.decision.source", source),
                    KeyValue::new("gen_ai.tool.name", tool),
                ],
            );
        }
    }
}

/// A wire enum's text (`deny`, `rule`).
fn wire<T: serde::Serialize>(value: T) -> Option<String> {
    serde_json::to_value(value).ok()?.as_str().map(String::from)
}

fn time(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

/// `payload` with every content key removed, at any depth.
fn without_content(payload: &Value) -> Value {
    match payload {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !CONTENT.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), without_content(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_content).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_keys_are_left_out_at_any_depth() {
        let payload = serde_json::json!({"text": "my prompt", "usage": {"inputTokens": 3},
            "calls": [{"arguments": {"path": "a"}, "name": "read_file"}], "executed": true, "output": "file body"});
        assert_eq!(
            without_content(&payload),
            serde_json::json!({"usage": {"inputTokens": 3}, "calls": [{"name": "read_file"}], "executed": true})
        );
    }
}
