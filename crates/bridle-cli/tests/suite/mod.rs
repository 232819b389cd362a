//! The CLI suite: one module per subcommand, plus the real-process and aimock helpers.

mod aimock;
mod bridle;

mod acp;
mod adversarial;
mod approvals;
mod audit;
mod boundary;
mod brief;
mod checkpoints;
mod crash;
mod edges;
mod effects;
mod export;
mod files;
mod guard;
mod held;
mod keychain;
mod llama;
mod local_servers;
mod long_sessions;
mod managed;
mod mcp;
mod network;
mod patches;
mod processes;
mod run;
mod sandbox;
mod seams;
mod secrets;
mod streams;
mod telemetry;
mod tool;
mod walkers;
