//! The desktop shell: wiring only. It opens the window at once and starts core's
//! [`SessionHost`] at its first command (core's one wiring, one engine for the session the
//! window shows; commands wait for it), exposes the commands of `bridle_protocol::ipc` — the one
//! list the window's typed bindings are generated from and this shell's Tauri commands and their
//! registration are expanded from, each calling its function in `handlers` — and forwards every
//! engine event, numbered, to the window on `engine-event`, and the open session's MCP servers'
//! list after every change on `mcp-status`; an approval request that arrives while the window is
//! not focused raises a native notification.
//!
//! Rule: no engine logic lives here; anything the UI can do goes through an `Op` or core, so the
//! CLI and the app behave the same. Every command answers `Result<T, ErrorInfo>`. Commands that
//! touch SQLite, files or the keychain run on the blocking pool, never on the window's thread.

mod handlers;
mod launch;
mod logs;
pub mod memory;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bridle_core::clock::Phase;
use bridle_core::session_host::{Forward, Outgoing, SessionHost, Starting};
use bridle_protocol::ipc::{Channel, ENGINE_EVENT, MCP_STATUS};
use bridle_protocol::Event;
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Emitter, Manager, WebviewUrl, WebviewWindowBuilder};
use tauri_plugin_notification::NotificationExt;

/// Sends `payload` on `channel`: the protocol's list names each channel and its payload's type.
fn push<T: serde::Serialize + Clone>(app: &AppHandle, channel: &Channel<T>, payload: &T) -> tauri::Result<()> {
    app.emit(channel.name, payload)
}

/// The Tauri commands, expanded from the protocol's one list: each takes the list's arguments
/// and hands them to the handler of its name, and the invoke handler registers exactly these.
macro_rules! tauri_commands {
    ($( $(#[doc = $doc:literal])+ $name:ident ( $( $arg:ident : $ty:ty ),* ) -> $answer:ty; )*) => {
        mod commands {
            use bridle_core::session_host::Starting;
            use bridle_protocol::ErrorInfo;
            $(
                $(#[doc = $doc])+
                #[tauri::command]
                pub async fn $name(
                    start: tauri::State<'_, Starting>,
                    engine: tauri::State<'_, crate::EngineStart>,
                    $( $arg: $ty ),*
                ) -> Result<$answer, ErrorInfo> {
                    // The window's first command comes once its first screen is drawn.
                    engine.now();
                    crate::handlers::$name(start.inner(), $( $arg ),*).await
                }
            )*
        }

        /// `builder` answering every command of the list.
        fn with_commands(builder: tauri::Builder<tauri::Wry>) -> tauri::Builder<tauri::Wry> {
            builder.invoke_handler(tauri::generate_handler![$( commands::$name ),*])
        }
    };
}

bridle_protocol::with_commands!(tauri_commands);

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
            if let Err(e) = push(app, &MCP_STATUS, &servers) {
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
                .title(format!("Bridle: approve {}?", request.subject.headline()))
                .body("A call waits for your answer. Open Bridle to review it.")
                .show();
            if let Err(e) = shown {
                tracing::info!("no desktop notification: {e}");
            }
        }
    }
    if let Err(e) = push(app, &ENGINE_EVENT, &event) {
        tracing::error!("cannot forward an engine event: {e}");
    }
}

/// How long the engine waits for the window's first command before it starts anyway.
const ENGINE_AT_THE_LATEST: std::time::Duration = std::time::Duration::from_secs(3);

/// The work that starts the engine, until it is spawned: by the window's first command or the
/// timer, whichever comes first; once only.
#[derive(Clone)]
pub(crate) struct EngineStart(Arc<Mutex<Option<StartWork>>>);

/// The engine's start, as [`SessionHost::start_later`] gives it.
type StartWork = Pin<Box<dyn Future<Output = ()> + Send>>;

impl EngineStart {
    fn new(work: impl Future<Output = ()> + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(Some(Box::pin(work)))))
    }

    fn take(&self) -> Option<StartWork> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }

    /// Spawns the work if it has not been; once it is done and the window's first commands
    /// are answered, the launch's freed memory is given back.
    pub(crate) fn now(&self) {
        if let Some(work) = self.take() {
            tauri::async_runtime::spawn(async move {
                work.await;
                tauri::async_runtime::spawn_blocking(|| {
                    std::thread::sleep(memory::SETTLE);
                    memory::give_back();
                });
            });
        }
    }

    /// Drops the work if it has not been spawned.
    fn cancel(&self) {
        drop(self.take());
    }
}

/// Starts the app; returns when the window closes.
pub fn run() -> anyhow::Result<()> {
    let phase = Phase::start("flags, config and the log");
    let (wiring, reload) = launch::wiring()?;
    // Kept for the life of the app: dropping it stops the log writer.
    let _log = logs::install(&wiring.data_dir);
    drop(phase);
    let phase = Phase::start("Tauri and GTK set up");
    with_commands(tauri::Builder::default())
        .plugin(tauri_plugin_notification::init())
        .setup(move |app| {
            drop(phase);
            let phase = Phase::start("window and webview created");
            let handle = app.handle().clone();
            let forward: Forward = Arc::new(move |outgoing| deliver(&handle, outgoing));
            // The window does not wait for the engine (the store, the sandbox probe, the
            // keychain): it opens now and its commands wait until the host is there. The engine
            // starts at the window's first command, sent once its first screen is drawn, so its
            // work does not take the CPU from the webview's first screen (or after
            // ENGINE_AT_THE_LATEST, should no command come).
            let (starting, start) = SessionHost::start_later(wiring, reload, forward);
            app.manage(starting);
            let start = EngineStart::new(start);
            app.manage(start.clone());
            std::thread::spawn(move || {
                std::thread::sleep(ENGINE_AT_THE_LATEST);
                start.now();
            });
            WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
                .title("Bridle")
                .inner_size(1200.0, 800.0)
                .min_inner_size(720.0, 480.0)
                .on_navigation(is_app_url)
                .on_page_load(|_, page| {
                    if matches!(page.event(), PageLoadEvent::Finished) {
                        bridle_core::clock::mark("page loaded");
                    }
                })
                .build()?;
            drop(phase);
            Ok(())
        })
        .build(tauri::generate_context!())?
        .run(|app, event| {
            // The session's MCP servers run in process groups of their own: end them with the app.
            if let tauri::RunEvent::Exit = event {
                // An engine that never started is not started now: its handle answers at once.
                if let Some(pending) = app.try_state::<EngineStart>() {
                    pending.cancel();
                }
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
