//! `bridle mcp list [--json]`: every configured MCP server, started as a session would start it,
//! with its status (`ready`, `failed`, `disabled`), its error and its tools; then stopped.

use crate::cli::{Global, McpAction, McpArgs};
use crate::setup;
use crate::terminal::safe;

pub async fn mcp(global: &Global, args: &McpArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    let McpAction::List { json } = &args.action;
    let hub = setup.mcp();
    hub.settled().await;
    let reports = hub.reports();
    hub.shutdown().await;
    if *json {
        println!("{}", serde_json::json!({ "servers": reports }));
        return Ok(0);
    }
    if reports.is_empty() {
        eprintln!("no MCP servers are configured ([mcp.servers.NAME] in the config)");
    }
    for r in &reports {
        println!("{}  {}  {} tools", safe(&r.name), r.status.as_str(), r.tools.len());
        if let Some(error) = &r.error {
            println!("    {}", safe(error));
        }
        for tool in &r.tools {
            println!("    {}", safe(tool));
        }
    }
    Ok(0)
}
