//! The desktop shell: wiring only. It builds one engine for the window's session, exposes its
//! commands (`submit`, `session_info`, `pending_approvals`, `session_snapshot`, `audit_query`,
//! `audit_export`) and
//! forwards every engine event to
//! the window on `engine-event`, in order, from one task.
//!
//! Rule: no engine logic lives here; anything the UI can do goes through an `Op`, so the CLI
//! and the app behave the same. Set-up goes through core's one wiring. Commands that touch
//! SQLite or files run on the blocking pool, never on the window's main thread.

mod launch;
mod logs;
mod state;

use tauri::{Emitter, Manager, WebviewUrl, WebviewWindowBuilder};

use state::AppState;

/// The Tauri event name the window listens on.
pub const ENGINE_EVENT: &str = "engine-event";

#[tauri::command]
async fn submit(state: tauri::State<'_, AppState>, op: bridle_protocol::Op) -> Result<(), String> {
    state.engine.submit(op).await.map_err(|e| e.to_string())
}

#[tauri::command]
async fn session_info(state: tauri::State<'_, AppState>) -> Result<bridle_protocol::SessionSummary, String> {
    Ok(state.summary.clone())
}

/// Runs `work` on the blocking pool with a copy of the state.
async fn blocking<T: Send + 'static>(
    state: tauri::State<'_, AppState>,
    work: impl FnOnce(AppState) -> anyhow::Result<T> + Send + 'static,
) -> Result<T, String> {
    let state = state.inner().clone();
    match tauri::async_runtime::spawn_blocking(move || work(state)).await {
        Ok(result) => result.map_err(|e| format!("{e:#}")),
        Err(e) => Err(format!("the command failed: {e}")),
    }
}

#[tauri::command]
async fn pending_approvals(state: tauri::State<'_, AppState>) -> Result<Vec<bridle_protocol::ApprovalRequest>, String> {
    blocking(state, |s| s.pending_approvals()).await
}

#[tauri::command]
async fn session_snapshot(state: tauri::State<'_, AppState>) -> Result<bridle_protocol::SessionSnapshot, String> {
    blocking(state, |s| s.session_snapshot()).await
}

#[tauri::command]
async fn audit_query(
    state: tauri::State<'_, AppState>,
    query: bridle_protocol::AuditQuery,
) -> Result<Vec<bridle_protocol::AuditEvent>, String> {
    blocking(state, move |s| s.audit_query(query)).await
}

#[tauri::command]
async fn audit_export(state: tauri::State<'_, AppState>) -> Result<String, String> {
    blocking(state, |s| s.audit_export()).await
}

/// Only the app's own pages may load in the window; model-controlled text can never navigate
/// it elsewhere.
fn is_app_url(url: &tauri::Url) -> bool {
    matches!(url.scheme(), "tauri") || matches!(url.host_str(), Some("tauri.localhost"))
}

/// Starts the app; returns when the window closes.
pub fn run() -> anyhow::Result<()> {
    // Commands the agent runs are this user's processes: without this, any of them could read
    // the app's memory (API keys, the conversation) through /proc or ptrace.
    if let Err(e) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
        eprintln!("bridle-app: cannot mark the process non-dumpable: {e}");
    }
    let wiring = launch::wiring()?;
    // Kept for the life of the app: dropping it stops the log writer.
    let _log = logs::install(&wiring.data_dir);
    tauri::Builder::default()
        .setup(move |app| {
            let (state, mut events) = tauri::async_runtime::block_on(AppState::start(&wiring))?;
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                while let Some(event) = events.recv().await {
                    if let Err(e) = handle.emit(ENGINE_EVENT, &event) {
                        tracing::error!("cannot forward an engine event: {e}");
                    }
                }
            });
            app.manage(state);
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
            audit_query,
            audit_export
        ])
        .run(tauri::generate_context!())?;
    Ok(())
}
