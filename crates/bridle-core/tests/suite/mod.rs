//! The engine suite: scripted servers and test tools, then one module per behaviour.

mod harness;
mod raw_server;
mod tools;

mod approval_table;
mod approvals;
mod call_stream;
mod calls;
mod compaction;
mod interrupt;
mod layers;
mod limits;
mod local_servers;
mod mcp;
mod modes;
mod network;
mod one_door;
mod one_machine;
mod processes;
mod provider_failures;
mod sandbox;
mod source;
mod special_files;
mod typed_details;
mod undo;
