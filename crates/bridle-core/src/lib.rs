//! Bridle's engine and everything with power: the agent loop, model providers, the tool
//! registry and tools, the guard, and the conversation store.
//!
//! The rule this crate keeps: it reaches the outside world — clock, model provider, file system
//! root, data directory, the process environment — only through values passed in, never through
//! globals (the environment is read once, by [`wiring::Wiring::from_process`], and handed on), and
//! it never depends on a UI toolkit. The CLI and the desktop shell are thin wrappers that build an
//! [`engine::Engine`] and forward its events.
//!
//! Its modules stand in layers (DESIGN §1): L5 `wiring`, `settings`, `session_host`, `desk`; L4 `engine`; L3 `calls`;
//! L2 `tools`, `mcp`, `guard`, `hooks`, `provider`, `compaction`, `brief`, `audit`, `skills`; L1 `sandbox`,
//! `shell_sandbox`, `workspace`, `worktrees`, `store`, `secrets`, `changes`, `telemetry`; L0 `clock`, `fs`, `locks`,
//! `redact`, `config`. A module uses only lower layers, or its own without forming a circle; the
//! table, with why each layer is where it is, lives in `tests/suite/layers.rs`, which fails on an
//! edge that climbs or closes a circle.
//!
//! ```no_run
//! # async fn demo(deps: bridle_core::engine::EngineDeps) -> Result<(), Box<dyn std::error::Error>> {
//! use bridle_core::engine::{Engine, EngineConfig, SessionSpec};
//! use bridle_protocol::Op;
//! let (engine, mut events) = Engine::spawn(EngineConfig::default(), deps, SessionSpec::New)?;
//! engine.submit(Op::UserMessage { text: "What time is it?".into() }).await?;
//! while let Some(event) = events.recv().await {
//!     println!("{}", serde_json::to_string(&event)?);
//! }
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod audit;
pub mod brief;
pub mod calls;
pub mod changes;
pub mod clock;
pub mod compaction;
pub mod config;
pub mod desk;
pub mod engine;
pub mod fs;
pub mod guard;
pub mod hooks;
pub mod locks;
pub mod mcp;
pub mod network;
pub mod processes;
pub mod provider;
pub mod redact;
pub mod sandbox;
pub mod secrets;
pub mod session_host;
pub mod settings;
pub mod shell_sandbox;
pub mod skills;
pub mod store;
pub mod telemetry;
pub mod tools;
pub mod wiring;
pub mod workspace;
pub mod worktrees;
