//! The desktop shell: wiring only. It opens the window at once and starts core's
//! [`SessionHost`] beside it (core's one wiring, one engine for the session the window shows;
//! commands wait for it),
//! exposes the commands of `bridle_protocol::ipc` — the list the window's typed bindings are
//! generated from — and forwards every engine event, numbered, to the window on `engine-event`,
//! and the open session's MCP servers' list after every change on `mcp-status`; an approval
//! request that arrives while the window is not focused raises a native notification.
//!
//! Rule: no engine logic lives here; anything the UI can do goes through an `Op` or core, so the
//! CLI and the app behave the same. Every command answers `Result<T, ErrorInfo>`. Commands that
//! touch SQLite, files or the keychain run on the blocking pool, never on the window's thread.

mod launch;
mod logs;

use std::sync::Arc;

use bridle_core::session_host::{self, Forward, Outgoing, SessionHost, Starting};
use bridle_protocol::{
    ApprovalRequest, AuditEvent, AuditQuery, ErrorInfo, Event, McpServerSettings, McpServerStatus, ModelInfo, Op,
    ProviderSettings, RuleMeaning, SessionInfo, SessionSnapshot, SessionSummary, Settings, SettingsUpdate,
};
use tauri::{AppHandle, Emitter, Manager, State, WebviewUrl, WebviewWindowBuilder};
use tauri_plugin_notification::NotificationExt;

/// The Tauri event name the window listens on.
pub const ENGINE_EVENT: &str = "engine-event";
/// The event the open session's MCP servers' list is sent on, after every change.
pub const MCP_STATUS: &str = "mcp-status";

type Answer<T> = Result<T, ErrorInfo>;

#[tauri::command]
async fn submit(start: State<'_, Starting>, op: Op) -> Answer<()> {
    start.get().await?.submit(op).await
}

#[tauri::command]
async fn session_info(start: State<'_, Starting>) -> Answer<SessionSummary> {
    start.get().await?.summary().await
}

#[tauri::command]
async fn pending_approvals(start: State<'_, Starting>) -> Answer<Vec<ApprovalRequest>> {
    start.get().await?.pending_approvals().await
}

#[tauri::command]
async fn session_snapshot(start: State<'_, Starting>) -> Answer<SessionSnapshot> {
    start.get().await?.session_snapshot().await
}

#[tauri::command]
async fn sessions_list(start: State<'_, Starting>) -> Answer<Vec<SessionInfo>> {
    start.get().await?.sessions_list().await
}

#[tauri::command]
async fn session_open(start: State<'_, Starting>, session_id: String) -> Answer<SessionSummary> {
    start.get().await?.session_open(session_id).await
}

#[tauri::command]
async fn session_new(start: State<'_, Starting>) -> Answer<SessionSummary> {
    start.get().await?.session_new().await
}

#[tauri::command]
async fn session_delete(start: State<'_, Starting>, session_id: String) -> Answer<SessionSummary> {
    start.get().await?.session_delete(session_id).await
}

#[tauri::command]
async fn audit_query(start: State<'_, Starting>, query: AuditQuery) -> Answer<Vec<AuditEvent>> {
    start.get().await?.audit_query(query).await
}

#[tauri::command]
async fn audit_export(start: State<'_, Starting>) -> Answer<String> {
    start.get().await?.audit_export().await
}

#[tauri::command]
async fn settings_get(start: State<'_, Starting>) -> Answer<Settings> {
    start.get().await?.settings_get().await
}

#[tauri::command]
async fn settings_save(start: State<'_, Starting>, update: SettingsUpdate) -> Answer<Settings> {
    start.get().await?.settings_save(update).await
}

#[tauri::command]
async fn models_list(
    start: State<'_, Starting>,
    provider: ProviderSettings,
    api_key: Option<String>,
) -> Answer<Vec<ModelInfo>> {
    start.get().await?.models_list(provider, api_key).await
}

#[tauri::command]
fn rules_explain(list: String, patterns: Vec<String>) -> Answer<Vec<RuleMeaning>> {
    session_host::rules_explain(&list, &patterns)
}

#[tauri::command]
async fn mcp_status(start: State<'_, Starting>) -> Answer<Vec<McpServerStatus>> {
    start.get().await?.mcp_status().await
}

#[tauri::command]
async fn mcp_restart(start: State<'_, Starting>, name: String) -> Answer<Vec<McpServerStatus>> {
    start.get().await?.mcp_restart(name).await
}

#[tauri::command]
async fn mcp_save(start: State<'_, Starting>, server: McpServerSettings, previous: Option<String>) -> Answer<Settings> {
    start.get().await?.mcp_save(server, previous).await
}

#[tauri::command]
async fn mcp_remove(start: State<'_, Starting>, name: String) -> Answer<Settings> {
    start.get().await?.mcp_remove(name).await
}

/// Only the app's own pages may load in the window; model-controlled text can never navigate
/// it elsewhere.
fn is_app_url(url: &tauri::Url) -> bool {
    matches!(url.scheme(), "tauri") || matches!(url.host_str(), Some("tauri.localhost"))
}

/// Sends one event to the window; an approval request while the window is not focused also
/// becomes a native notification (the nav badge counts it either way).
fn deliver(app: &AppHandle, outgoing: Outgoing) {
    let event = match outgoing {
        Outgoing::Engine(event) => *event,
        Outgoing::Mcp(servers) => {
            if let Err(e) = app.emit(MCP_STATUS, &servers) {
                tracing::error!("cannot forward the MCP servers' status: {e}");
            }
            return;
        }
    };
    if let Event::ApprovalRequested { request, .. } = &event.event {
        let focused = app.get_webview_window("main").and_then(|w| w.is_focused().ok()).unwrap_or(false);
        if !focused {
            let shown = app
                .notification()
                .builder()
                .title(format!("Bridle: approve {}?", request.tool))
                .body("A call waits for your answer. Open Bridle to review it.")
                .show();
            if let Err(e) = shown {
                tracing::info!("no desktop notification: {e}");
            }
        }
    }
    if let Err(e) = app.emit(ENGINE_EVENT, &event) {
        tracing::error!("cannot forward an engine event: {e}");
    }
}

/// Starts the app; returns when the window closes.
pub fn run() -> anyhow::Result<()> {
    // Commands the agent runs are this user's processes: without this, any of them could read
    // the app's memory (API keys, the conversation) through /proc or ptrace.
    if let Err(e) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
        eprintln!("bridle-app: cannot mark the process non-dumpable: {e}");
    }
    let (wiring, reload) = launch::wiring()?;
    // Kept for the life of the app: dropping it stops the log writer.
    let _log = logs::install(&wiring.data_dir);
    tauri::Builder::default()
        .plugin(tauri_plugin_notification::init())
        .setup(move |app| {
            let handle = app.handle().clone();
            let forward: Forward = Arc::new(move |outgoing| deliver(&handle, outgoing));
            // The window does not wait for the engine (the store, the sandbox probe, the
            // keychain): it opens now and its commands wait until the host is there.
            let (starting, start) = SessionHost::start_later(wiring, reload, forward);
            app.manage(starting);
            tauri::async_runtime::spawn(start);
            WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
                .title("Bridle")
                .inner_size(1200.0, 800.0)
                .min_inner_size(720.0, 480.0)
                .on_navigation(is_app_url)
                .build()?;
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            submit,
            session_info,
            pending_approvals,
            session_snapshot,
            sessions_list,
            session_open,
            session_new,
            session_delete,
            audit_query,
            audit_export,
            settings_get,
            settings_save,
            models_list,
            rules_explain,
            mcp_status,
            mcp_restart,
            mcp_save,
            mcp_remove
        ])
        .build(tauri::generate_context!())?
        .run(|app, event| {
            // The session's MCP servers run in process groups of their own: end them with the app.
            if let tauri::RunEvent::Exit = event {
                if let Some(start) = app.try_state::<Starting>() {
                    let start = start.inner().clone();
                    tauri::async_runtime::block_on(async move {
                        if let Ok(host) = start.get().await {
                            host.close().await;
                        }
                    });
                }
            }
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// The handlers registered above are exactly the protocol's command list, which the
    /// window's typed bindings are generated from.
    #[test]
    fn the_handlers_are_the_protocol_command_list() {
        let source = include_str!("lib.rs");
        let start = source.find("generate_handler![").unwrap() + "generate_handler![".len();
        let end = start + source[start..].find(']').unwrap();
        let registered: Vec<&str> = source[start..end].split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        let declared: Vec<&str> = bridle_protocol::ipc::commands().iter().map(|c| c.name).collect();
        assert_eq!(registered, declared);
        for name in &declared {
            assert!(source.contains(&format!("fn {name}(")), "no #[tauri::command] fn {name}");
        }
    }
}
