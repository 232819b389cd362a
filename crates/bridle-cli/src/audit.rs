//! `bridle audit`: the audit log of the data dir, listed with filters, verified, exported.
//!
//! Rule: reading the log needs only the data dir — not the workspace, not a valid config — so
//! `bridle audit verify` works from any folder, even when the config is what someone broke.
//! Listings print the newest `--limit` matching rows, oldest first (like `tail`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use bridle_core::audit::{AuditFilter, AuditKind, AuditLog};
use bridle_core::config::paths;
use bridle_protocol::{AuditEvent, Decision};
use clap::{Args, Subcommand};

use crate::cli::{Global, EXIT_ERROR};
use crate::terminal::safe;

/// Rows listed when `--limit` is not given.
const DEFAULT_LIMIT: u32 = 50;
/// Payload text shown per row in the table.
const PAYLOAD_WIDTH: usize = 80;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub action: Option<AuditAction>,
    #[command(flatten)]
    pub list: ListArgs,
}

#[derive(Subcommand, Debug)]
pub enum AuditAction {
    /// Check the hash chain and the head; exit 1 and name the first bad row if broken. With
    /// --export, check a session export against the log and name its first item that differs.
    Verify {
        /// A file written by `bridle sessions export`.
        #[arg(long)]
        export: Option<PathBuf>,
    },
    /// Write every row as one JSON line to FILE (atomically); prints the row count.
    Export {
        /// The JSONL file to write.
        file: PathBuf,
    },
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Only this tool.
    #[arg(long)]
    pub tool: Option<String>,
    /// Only this kind (tool_call, guard_decision, approval_resolved, …).
    #[arg(long, value_parser = parse_kind)]
    pub kind: Option<AuditKind>,
    /// Only this decision (allow, ask, deny).
    #[arg(long, value_parser = parse_decision)]
    pub decision: Option<Decision>,
    /// Only rows whose payload contains this text.
    #[arg(long)]
    pub text: Option<String>,
    /// How many of the newest matching rows to show.
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    pub limit: u32,
    /// One AuditEvent JSON object per line.
    #[arg(long)]
    pub json: bool,
}

pub fn audit(global: &Global, args: &AuditArgs) -> anyhow::Result<u8> {
    let data_dir = paths::data_dir(global.data_dir.clone(), |name| std::env::var_os(name));
    let log =
        AuditLog::open(&data_dir).with_context(|| format!("cannot open the audit log in {}", data_dir.display()))?;
    match &args.action {
        None => list(&log, &args.list),
        Some(AuditAction::Verify { export: None }) => verify(&log),
        Some(AuditAction::Verify { export: Some(file) }) => verify_export(&log, file),
        Some(AuditAction::Export { file }) => export(&log, file),
    }
}

fn list(log: &AuditLog, args: &ListArgs) -> anyhow::Result<u8> {
    let filter = AuditFilter {
        session_id: args.session.clone(),
        tool: args.tool.clone(),
        kind: args.kind,
        decision: args.decision,
        text: args.text.clone(),
        limit: Some(args.limit),
        ..AuditFilter::default()
    };
    let mut events = log.query(&filter)?;
    events.reverse();
    let mut out = std::io::stdout().lock();
    for event in &events {
        if args.json {
            writeln!(out, "{}", serde_json::to_string(event)?)?;
        } else {
            writeln!(out, "{}", table_row(event))?;
        }
    }
    Ok(0)
}

fn table_row(e: &AuditEvent) -> String {
    let when = chrono::DateTime::from_timestamp_millis(e.at)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S%.3f").to_string())
        .unwrap_or_else(|| e.at.to_string());
    let decision = match (e.decision, e.source) {
        (Some(d), Some(s)) => format!("{}/{}", wire(&d), wire(&s)),
        (Some(d), None) => wire(&d),
        _ => "-".into(),
    };
    let latency = e.latency_ms.map(|ms| format!("{ms}ms")).unwrap_or_else(|| "-".into());
    let mut payload = e.payload.to_string();
    if let Some((cut, _)) = payload.char_indices().nth(PAYLOAD_WIDTH) {
        payload.truncate(cut);
        payload.push('…');
    }
    format!(
        "{:>6}  {when}  {:<12}  {:<18}  {:<12}  {:<14}  {:<6}  {:>7}  {payload}",
        e.id,
        short(e.session_id.as_deref()),
        e.kind,
        safe(e.tool.as_deref().unwrap_or("-")),
        decision,
        e.status.as_deref().unwrap_or("-"),
        latency,
    )
}

/// A serialised enum's wire name (`"deny"` → `deny`).
fn wire(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn short(id: Option<&str>) -> String {
    match id {
        None => "-".into(),
        Some(id) if id.chars().count() > 12 => id.chars().take(12).collect(),
        Some(id) => id.into(),
    }
}

fn verify(log: &AuditLog) -> anyhow::Result<u8> {
    let report = log.verify()?;
    println!("{}", serde_json::to_string(&report)?);
    eprintln!("bridle audit verify: {}", report.summary());
    Ok(if report.intact { 0 } else { EXIT_ERROR })
}

fn verify_export(log: &AuditLog, file: &Path) -> anyhow::Result<u8> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let chain = log.verify()?;
    if !chain.intact {
        println!("{}", serde_json::to_string(&chain)?);
        eprintln!("bridle audit verify: the audit log itself is damaged: {}", chain.summary());
        return Ok(EXIT_ERROR);
    }
    let check = log.check_export(&text)?;
    println!("{}", serde_json::to_string(&check)?);
    match &check.first_bad {
        None => eprintln!("bridle audit verify: {} matches the audit log ({} items)", file.display(), check.items),
        Some(bad) => eprintln!("bridle audit verify: {}: {}", file.display(), safe(&bad.reason)),
    }
    Ok(if check.intact { 0 } else { EXIT_ERROR })
}

fn export(log: &AuditLog, file: &Path) -> anyhow::Result<u8> {
    let rows = log.export(file).with_context(|| format!("cannot export the audit log to {}", file.display()))?;
    println!("{rows}");
    eprintln!("exported {rows} audit rows to {}", file.display());
    Ok(0)
}

fn parse_kind(s: &str) -> Result<AuditKind, String> {
    s.parse()
}

fn parse_decision(s: &str) -> Result<Decision, String> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|_| format!("unknown decision `{s}` (expected allow, ask or deny)"))
}
