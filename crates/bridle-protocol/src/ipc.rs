//! The desktop shell's command list, defined once: each command's name, arguments and answer.
//! [`with_commands!`] hands the list to a macro of the caller's: the TypeScript side
//! (`ui/src/api/bindings/commands.ts`: one typed function per command) is rendered from it here,
//! and the desktop shell expands its Tauri commands and handler list from it, so a command without
//! a handler, or with arguments of other types, does not compile.
//!
//! The channels the shell pushes on (engine events, the MCP servers' list) are declared here
//! too, each with its payload's type: the shell emits through [`Channel`], and the window's typed
//! listeners are rendered into the same file, so a name or a payload cannot drift.
//!
//! Rule: every command answers `Result<T, ErrorInfo>`; the generated functions resolve to `T`
//! and reject with the [`crate::ErrorInfo`], never a bare string.

use ts_rs::{Config, TS};

/// One command: its name, its arguments (name, type) and its answer's type, in TypeScript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// The Tauri command name (snake_case, as the shell's function is named).
    pub name: &'static str,
    /// What it does, for the generated comment.
    pub doc: &'static str,
    /// Arguments as `(camelCase name, TypeScript type)`.
    pub args: Vec<(String, String)>,
    /// The answer's TypeScript type.
    pub answer: String,
    /// The types to import from the bindings.
    pub imports: Vec<String>,
}

macro_rules! commands {
    ($( $(#[doc = $doc:literal])+ $name:ident ( $( $arg:ident : $ty:ty ),* ) -> $answer:ty; )*) => {
        /// Every command of the shell, in a stable order.
        pub fn commands() -> Vec<CommandSpec> {
            let cfg = Config::default();
            let mut all = Vec::new();
            $(
                let mut imports = Vec::new();
                $( collect::<$ty>(&cfg, &mut imports); )*
                collect::<$answer>(&cfg, &mut imports);
                all.push(CommandSpec {
                    name: stringify!($name),
                    doc: concat!($($doc),+).trim(),
                    args: vec![$( (camel_fn(stringify!($arg)), <$ty as TS>::name(&cfg)) ),*],
                    answer: <$answer as TS>::name(&cfg),
                    imports,
                });
            )*
            all
        }
    };
}

/// Hands the shell's command list to `$callback!`, once: each command as its doc comment, then
/// `name(arg: Type, ...) -> Answer;`. The TypeScript bindings ([`crate::ipc::commands`]) and the shell's
/// Tauri commands and handler list are both expanded from it, so they cannot drift; protocol
/// types are named by full path, so the callback needs no imports.
#[macro_export]
macro_rules! with_commands {
    ($callback:ident) => {
        $callback! {
            /// Queues one op: an answer on the engine of the session that asked (opened when no
            /// process runs it), any other op on the shown session's; resolves once accepted.
            submit(op: $crate::Op) -> ();
            /// The open session, as the header shows it.
            session_info() -> $crate::SessionSummary;
            /// The open session's approval requests still waiting for an answer.
            pending_approvals() -> Vec<$crate::ApprovalRequest>;
            /// The open session as stored, with the `seq` of the last event it already holds.
            session_snapshot() -> $crate::SessionSnapshot;
            /// Every stored session, most recently updated first.
            sessions_list() -> Vec<$crate::SessionInfo>;
            /// Shows a stored session in the window, starting it when it is not live (the sessions
            /// live already go on).
            session_open(session_id: String) -> $crate::SessionSummary;
            /// Starts a new session in the window's workspace.
            session_new() -> $crate::SessionSummary;
            /// Deletes a stored session (closing it when live); answers the session shown after.
            session_delete(session_id: String) -> $crate::SessionSummary;
            /// Every question waiting in the data dir, of every session, oldest first (DESIGN §16).
            inbox() -> Vec<$crate::ApprovalRequest>;
            /// Starts a new session in a worktree of the window's workspace, on `bridle/<name>`.
            session_new_worktree(name: Option<String>) -> $crate::SessionSummary;
            /// Archives a session's worktree (closing the session; refused while it works or waits).
            session_archive(session_id: String) -> ();
            /// Brings an archived (or removed) session worktree back.
            session_restore(session_id: String) -> ();
            /// Brings a worktree session's changes into the main checkout, uncommitted (a dry run
            /// writes nothing); answers the change as a patch.
            session_apply(session_id: String, dry_run: bool) -> String;
            /// Merges a worktree session's branch into the clean main checkout; answers the commit.
            session_merge(session_id: String) -> String;
            /// Audit rows matching the query, newest first.
            audit_query(query: $crate::AuditQuery) -> Vec<$crate::AuditEvent>;
            /// Writes the whole audit log as JSON lines into the data dir; answers the file's path.
            audit_export() -> String;
            /// Writes one session's export with proof (`md` or `json`: its audit rows, their hashes
            /// and the chain head) into the data dir's `exports` folder; answers the file's path.
            session_export(session_id: String, format: String) -> String;
            /// The settings as the config holds them, and where the provider's key is.
            settings_get() -> $crate::Settings;
            /// Saves the settings (the key into the OS keychain) and reopens the session with them.
            settings_save(update: $crate::SettingsUpdate) -> $crate::Settings;
            /// The models a server offers, with the key given or the stored one: "test connection".
            models_list(provider: $crate::ProviderSettings, api_key: Option<String>) -> Vec<$crate::ModelInfo>;
            /// What each rule of one list means, or why it is invalid.
            rules_explain(list: $crate::RuleList, patterns: Vec<String>) -> Vec<$crate::RuleMeaning>;
            /// The open session's MCP servers with their state and tools, numbered like the lists
            /// pushed on `mcp-status` (the window keeps the newest).
            mcp_status() -> $crate::McpServerList;
            /// Stops one MCP server and starts it again; answers once it is ready or has failed.
            mcp_restart(name: String) -> $crate::McpServerList;
            /// Adds or edits one MCP server in the config (`previous` names the one being renamed or
            /// edited) and starts it as it now stands; the others keep running.
            mcp_save(server: $crate::McpServerSettings, previous: Option<String>) -> $crate::Settings;
            /// Removes one MCP server from the config and stops it.
            mcp_remove(name: String) -> $crate::Settings;
            /// The open session's background processes, oldest first, each with its output's tail.
            processes_list() -> Vec<$crate::ProcessInfo>;
            /// Stops one background process of the open session (SIGTERM, then SIGKILL after 2 s);
            /// answers once it has ended.
            process_stop(process_id: String) -> $crate::ProcessInfo;
            /// The skills the open session found (offered or not), with their source, trust and error.
            skills_list() -> Vec<$crate::SkillInfo>;
            /// Trusts the workspace's skills as their files are now and reopens the session.
            skills_trust() -> Vec<$crate::SkillInfo>;
            /// The slash commands the open session offers, for the composer's completion.
            slash_commands() -> Vec<$crate::SlashCommandInfo>;
            /// The hunks of one turn of the open session (its last turn with changes when none is
            /// named), with their states.
            review_turn(turn_id: Option<String>) -> $crate::TurnReview;
            /// Keeps, rejects or unrejects hunks of the open session, all or none (a conflict
            /// changes nothing); answers the turn's hunks as they stand after.
            review_decide(decision: $crate::ReviewDecision, hunk_ids: Vec<String>) -> $crate::TurnReview;
        }
    };
}

with_commands!(commands);

/// A channel the shell pushes to the window on: its Tauri event name and its payload's type.
#[derive(Debug)]
pub struct Channel<T> {
    /// The Tauri event name.
    pub name: &'static str,
    payload: std::marker::PhantomData<fn() -> T>,
}

impl<T> Channel<T> {
    const fn new(name: &'static str) -> Self {
        Channel { name, payload: std::marker::PhantomData }
    }
}

/// Every engine event of the open session, numbered (`seq`).
pub const ENGINE_EVENT: Channel<crate::SequencedEvent> = Channel::new("engine-event");
/// The open session's MCP servers' list, numbered, after every change.
pub const MCP_STATUS: Channel<crate::McpServerList> = Channel::new("mcp-status");

/// One channel as the window's bindings render it.
struct ChannelSpec {
    constant: &'static str,
    listener: &'static str,
    doc: &'static str,
    name: &'static str,
    payload: String,
    imports: Vec<String>,
}

/// Every channel, in a stable order. (`SequencedEvent` is written by hand in the bindings:
/// `Event & { seq: number }`, so it is named here rather than derived.)
fn channels() -> Vec<ChannelSpec> {
    let cfg = Config::default();
    let mut mcp_imports = Vec::new();
    collect::<crate::McpServerList>(&cfg, &mut mcp_imports);
    vec![
        ChannelSpec {
            constant: "ENGINE_EVENT",
            listener: "onEngineEvent",
            doc: "every engine event",
            name: ENGINE_EVENT.name,
            payload: "SequencedEvent".into(),
            imports: vec!["SequencedEvent".into()],
        },
        ChannelSpec {
            constant: "MCP_STATUS",
            listener: "onMcpStatus",
            doc: "the MCP servers' list after every change",
            name: MCP_STATUS.name,
            payload: <crate::McpServerList as TS>::name(&cfg),
            imports: mcp_imports,
        },
    ]
}

/// Adds the binding files `T` needs (itself and its type arguments), skipping built-ins.
fn collect<T: TS + ?Sized>(cfg: &Config, imports: &mut Vec<String>) {
    let name = T::name(cfg);
    for word in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let builtin = matches!(word, "" | "Array" | "string" | "number" | "boolean" | "null" | "void" | "bigint");
        if !builtin && word.starts_with(|c: char| c.is_ascii_uppercase()) && !imports.iter().any(|i| i == word) {
            imports.push(word.to_string());
        }
    }
}

/// `commands.ts`: one typed function per command over Tauri's `invoke`.
pub fn render_ts() -> String {
    let all = commands();
    let pushed = channels();
    let mut imports: Vec<String> =
        all.iter().flat_map(|c| c.imports.clone()).chain(pushed.iter().flat_map(|c| c.imports.clone())).collect();
    imports.sort();
    imports.dedup();
    let mut out = String::from(
        "// Generated from bridle-protocol's ipc.rs (the shell's command list and channels); do not edit.\n\
         // Every function rejects with an ErrorInfo.\n\
         import { invoke } from \"@tauri-apps/api/core\";\n\
         import { listen } from \"@tauri-apps/api/event\";\n",
    );
    for import in &imports {
        out.push_str(&format!("import type {{ {import} }} from \"./{import}\";\n"));
    }
    for c in &all {
        let params: Vec<String> = c.args.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        let names: Vec<&str> = c.args.iter().map(|(n, _)| n.as_str()).collect();
        let answer = if c.answer == "null" { "void".to_string() } else { c.answer.clone() };
        let call = if names.is_empty() {
            format!("invoke<{answer}>(\"{}\")", c.name)
        } else {
            format!("invoke<{answer}>(\"{}\", {{ {} }})", c.name, names.join(", "))
        };
        out.push_str(&format!(
            "\n/** {} */\nexport function {}({}): Promise<{answer}> {{\n  return {call};\n}}\n",
            c.doc,
            camel_fn(c.name),
            params.join(", ")
        ));
    }
    for c in &pushed {
        out.push_str(&format!(
            "\n/** The Tauri event name of {doc}. */\nexport const {constant} = \"{name}\";\n\n\
             /** Calls `cb` with {doc}; resolves to a function that stops listening. */\n\
             export function {listener}(cb: (payload: {payload}) => void): Promise<() => void> {{\n  \
             return listen<{payload}>({constant}, (msg) => cb(msg.payload));\n}}\n",
            doc = c.doc,
            constant = c.constant,
            name = c.name,
            listener = c.listener,
            payload = c.payload,
        ));
    }
    out
}

/// `session_open` → `sessionOpen`: TypeScript's names, and the keys Tauri maps onto snake_case
/// arguments.
fn camel_fn(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
