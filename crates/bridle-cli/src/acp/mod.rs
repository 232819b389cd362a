//! `bridle acp`: Bridle as an Agent Client Protocol v1 agent on stdin and stdout (DESIGN §15), so
//! an editor (Zed, a JetBrains IDE, Neovim) or a headless client drives the same engine, guard,
//! sandbox, approvals and audit as the window and `bridle run`.
//!
//! Each ACP session is one engine, built the one way front ends build it ([`crate::drive`]) with
//! the client's `cwd` as the workspace (checked as `--workspace` is) and the client's MCP
//! servers beside the config's; a task per session turns its events into `session/update`s
//! ([`session`]), and an approval request becomes `session/request_permission`.
//!
//! Rules: stdout carries protocol messages only (logs go to stderr); a malformed message gets a
//! JSON-RPC error and the connection goes on, a frame that is not UTF-8 or is over the size
//! limit included (Bridle's own line reader, [`frames`], stands in front of the crate's); when the client closes stdin, every session is
//! shut down as the window closing does (its processes end, pending approvals stay stored).

mod frames;
mod session;
mod translate;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, InitializeRequest, InitializeResponse, LoadSessionRequest,
    LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, SessionId, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Client, Error, Responder, V1};
use bridle_core::config::{McpServerConfig, DEFAULT_MCP_STARTUP_SECS};
use bridle_core::engine::SessionSpec;
use bridle_core::wiring::Flags;

use crate::cli::Global;
use session::AcpSession;

/// The open sessions, by id.
type Sessions = Arc<Mutex<HashMap<String, Arc<AcpSession>>>>;

fn lock(sessions: &Sessions) -> std::sync::MutexGuard<'_, HashMap<String, Arc<AcpSession>>> {
    sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Serves ACP on stdin and stdout until the client closes the connection.
pub async fn acp(global: &Global) -> anyhow::Result<u8> {
    // The data dir and config the other front ends use; each session brings its own workspace.
    let flags = Flags { workspace: None, data_dir: global.data_dir.clone(), config: global.config.clone() };
    let sessions: Sessions = Arc::default();
    let (on_new, on_load, on_prompt, on_cancel, on_mode) =
        (sessions.clone(), sessions.clone(), sessions.clone(), sessions.clone(), sessions.clone());
    let (new_flags, load_flags) = (flags.clone(), flags.clone());
    let served = Agent
        .v1()
        .name("bridle")
        .on_receive_request(
            async move |request: InitializeRequest, responder: Responder<InitializeResponse, V1>, _cx| {
                responder.respond(initialize(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse, V1>,
                        cx: ConnectionTo<Client>| {
                let worktree = match asked_worktree(request.meta.as_ref()) {
                    Ok(asked) => asked,
                    Err(e) => return responder.respond_with_error(invalid(e)),
                };
                let spec = SessionSpec::New;
                let opened = open(&new_flags, &request.cwd, &request.mcp_servers, spec, worktree, cx).await;
                match opened.map_err(OpenError::message) {
                    Ok(session) => {
                        let mut response =
                            NewSessionResponse::new(SessionId::new(session.id.clone())).modes(session.modes());
                        if let Some(made) = session.worktree() {
                            response = response.meta(made);
                        }
                        lock(&on_new).insert(session.id.clone(), session.clone());
                        // After the answer: the client knows the session the update names.
                        let answered = responder.respond(response);
                        session.advertise_commands();
                        answered
                    }
                    Err(e) => responder.respond_with_error(invalid(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse, V1>,
                        cx: ConnectionTo<Client>| {
                let id = request.session_id.0.to_string();
                let old = lock(&on_load).remove(&id);
                if let Some(old) = old {
                    old.close().await;
                }
                let spec = SessionSpec::Resume(id);
                match open(&load_flags, &request.cwd, &request.mcp_servers, spec, None, cx).await {
                    Ok(session) => {
                        session.replay();
                        let response = LoadSessionResponse::new().modes(session.modes());
                        lock(&on_load).insert(session.id.clone(), session.clone());
                        let answered = responder.respond(response);
                        session.advertise_commands();
                        answered
                    }
                    Err(OpenError::NoSession(e)) => responder.respond_with_error(
                        Error::new(-32002, e).data(serde_json::json!({"sessionId": request.session_id.0.as_ref()})),
                    ),
                    Err(OpenError::Invalid(e)) => responder.respond_with_error(invalid(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder: Responder<PromptResponse, V1>, cx: ConnectionTo<Client>| {
                let Some(session) = lock(&on_prompt).get(request.session_id.0.as_ref()).cloned() else {
                    return responder.respond_with_error(unknown_session(&request.session_id));
                };
                // The turn runs outside the dispatch loop: a cancel (or a permission answer)
                // must get through while it runs.
                cx.spawn(async move {
                    match session.prompt(&request.prompt).await {
                        Ok(stop) => responder.respond(PromptResponse::new(stop)),
                        Err(e) => responder.respond_with_error(Error::internal_error().data(e)),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder: Responder<SetSessionModeResponse, V1>, _cx| {
                let Some(session) = lock(&on_mode).get(request.session_id.0.as_ref()).cloned() else {
                    return responder.respond_with_error(unknown_session(&request.session_id));
                };
                match session.set_mode(&request.mode_id.0).await {
                    Ok(()) => responder.respond(SetSessionModeResponse::new()),
                    Err(e) => responder.respond_with_error(Error::invalid_params().data(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                let session = lock(&on_cancel).get(notification.session_id.0.as_ref()).cloned();
                if let Some(session) = session {
                    session.cancel().await;
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(agent_client_protocol::Lines::new(
            Box::pin(frames::stdout_lines()),
            Box::pin(frames::stdin_lines()),
        ))
        .await;
    // The client closed the connection: every session closes as the window closing does.
    let open: Vec<Arc<AcpSession>> = lock(&sessions).drain().map(|(_, s)| s).collect();
    for session in open {
        session.close().await;
    }
    match served {
        Ok(()) => Ok(0),
        Err(e) => {
            eprintln!("bridle acp: {e}");
            Ok(crate::cli::EXIT_ERROR)
        }
    }
}

/// What Bridle offers: v1, sessions that load, text, resource links and embedded resources.
fn initialize(request: InitializeRequest) -> InitializeResponse {
    let prompt = PromptCapabilities::new().embedded_context(true);
    let mcp = McpCapabilities::new().http(true);
    let capabilities = AgentCapabilities::new().load_session(true).prompt_capabilities(prompt).mcp_capabilities(mcp);
    InitializeResponse::new(request.protocol_version).agent_capabilities(capabilities)
}

/// Why a session could not be opened.
enum OpenError {
    /// `session/load` of a session the store does not have.
    NoSession(String),
    /// Anything else the request got wrong.
    Invalid(String),
}

impl OpenError {
    fn message(self) -> String {
        match self {
            OpenError::NoSession(m) | OpenError::Invalid(m) => m,
        }
    }
}

/// The worktree a `session/new` asks for in `_meta.worktree` (DESIGN §16): `true` (named by the
/// session), a name, or `{ "name"?, "base"? }`; `None` when not asked.
fn asked_worktree(
    meta: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<Option<(String, Option<String>)>, String> {
    use serde_json::Value;
    let text = |v: &Value, key: &str| match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("_meta.worktree.{key} must be a string, not {other}")),
    };
    match meta.and_then(|m| m.get("worktree")) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some((String::new(), None))),
        Some(Value::String(name)) => Ok(Some((name.clone(), None))),
        Some(v @ Value::Object(_)) => Ok(Some((text(v, "name")?.unwrap_or_default(), text(v, "base")?))),
        Some(other) => Err(format!("_meta.worktree must be true, a name or {{\"name\", \"base\"}}, not {other}")),
    }
}

/// Opens `spec` with `cwd` as its workspace (absolute, not Bridle's data dir) and the client's MCP
/// servers added; with `worktree` (a name, empty for the session's, and a base), a new session
/// works in a worktree of `cwd` made for it.
async fn open(
    flags: &Flags,
    cwd: &std::path::Path,
    servers: &[McpServer],
    mut spec: SessionSpec,
    worktree: Option<(String, Option<String>)>,
    cx: ConnectionTo<Client>,
) -> Result<Arc<AcpSession>, OpenError> {
    if !cwd.is_absolute() {
        return Err(OpenError::Invalid(format!("cwd must be an absolute path, not `{}`", cwd.display())));
    }
    let flags = Flags { workspace: Some(cwd.to_path_buf()), ..flags.clone() };
    let mut setup = bridle_core::wiring::Wiring::from_process(flags).map_err(|e| OpenError::Invalid(e.to_string()))?;
    // Judged before anything is made (the store included): the one rule of every front end.
    if let Some(why) = bridle_core::workspace::refusal(&setup.workspace, setup.home.as_deref(), &setup.data_dir) {
        return Err(OpenError::Invalid(why));
    }
    if let SessionSpec::Resume(id) = &spec {
        let stored = setup.store().map_err(|e| OpenError::Invalid(e.to_string()))?.session(id);
        let Ok(stored) = stored else {
            return Err(OpenError::NoSession(format!("no stored session `{id}`")));
        };
        // A session answers only in its own workspace (or the checkout its worktree was made
        // from): loading it elsewhere would move what it read there into another folder's
        // conversation.
        let origin = stored.worktree.as_ref().map(|w| std::path::Path::new(&w.origin));
        if std::path::Path::new(&stored.workspace) != setup.workspace && origin != Some(setup.workspace.as_path()) {
            return Err(OpenError::Invalid(format!(
                "session `{id}` belongs to the workspace `{}`, not `{}`",
                stored.workspace,
                setup.workspace.display()
            )));
        }
    }
    if let Some((name, base)) = worktree {
        let id = crate::worktree::new_session(&mut setup, &name, base.as_deref())
            .map_err(|e| OpenError::Invalid(format!("{e:#}")))?;
        spec = SessionSpec::Resume(id);
    }
    for server in servers {
        let (name, config) = mcp_server(server).map_err(OpenError::Invalid)?;
        setup.config.mcp.servers.insert(name, config);
    }
    AcpSession::start(setup, spec, cx).await.map_err(|e| OpenError::Invalid(format!("{e:#}")))
}

/// A client's MCP server as the config would write it (stdio and HTTP; SSE is refused).
fn mcp_server(server: &McpServer) -> Result<(String, McpServerConfig), String> {
    let value = serde_json::to_value(server).map_err(|e| e.to_string())?;
    let name = value["name"].as_str().unwrap_or_default().to_string();
    if name.is_empty() {
        return Err("an MCP server without a name".into());
    }
    let pairs = |key: &str, k: &str, v: &str| {
        value[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| Some((e[k].as_str()?.to_string(), e[v].as_str()?.to_string())))
                    .collect::<std::collections::BTreeMap<_, _>>()
            })
            .unwrap_or_default()
    };
    let config = match (value.get("command").and_then(|c| c.as_str()), value.get("url").and_then(|u| u.as_str())) {
        (Some(command), _) => McpServerConfig {
            command: Some(command.to_string()),
            args: value["args"]
                .as_array()
                .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
                .unwrap_or_default(),
            env: pairs("env", "name", "value"),
            url: None,
            headers: Default::default(),
            enabled: true,
            startup_timeout_secs: DEFAULT_MCP_STARTUP_SECS,
        },
        (None, Some(url)) if value["type"] != "sse" => McpServerConfig {
            command: None,
            args: Vec::new(),
            env: Default::default(),
            url: Some(url.to_string()),
            headers: pairs("headers", "name", "value"),
            enabled: true,
            startup_timeout_secs: DEFAULT_MCP_STARTUP_SECS,
        },
        _ => return Err(format!("the MCP server `{name}` uses a transport Bridle does not speak (SSE)")),
    };
    Ok((name, config))
}

fn invalid(message: String) -> Error {
    Error::invalid_params().data(message)
}

/// ACP's "session not found": resource not found, naming the session.
fn unknown_session(id: &SessionId) -> Error {
    Error::new(-32002, format!("no open session `{}`: call session/new or session/load first", id.0))
        .data(serde_json::json!({"sessionId": id.0.as_ref()}))
}
