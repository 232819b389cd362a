//! `get_current_time`: the current date and time, in UTC or an IANA time zone.

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use chrono::SecondsFormat;
use serde::Deserialize;

use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Returns the current date and time. Without a time zone the answer is in UTC.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCurrentTimeArgs {
    /// An IANA time zone name such as `Europe/Paris` or `America/New_York`.
    #[serde(default)]
    pub timezone: Option<String>,
}

/// The `get_current_time` tool.
pub struct GetCurrentTime;

#[async_trait]
impl Tool for GetCurrentTime {
    type Args = GetCurrentTimeArgs;
    const NAME: &'static str = "get_current_time";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Read;

    fn title(args: &Self::Args) -> String {
        match &args.timezone {
            Some(zone) => format!("Get the time in {}", quoted(zone)),
            None => "Get the time".to_string(),
        }
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let now = ctx.clock.now();
        let zone_name = args.timezone.as_deref().map(str::trim).filter(|z| !z.is_empty()).unwrap_or("UTC");
        let zone: chrono_tz::Tz = zone_name.parse().map_err(|_| {
            ToolError::new(format!("unknown time zone `{zone_name}`; use an IANA name such as Europe/Paris or UTC"))
        })?;
        let local = now.with_timezone(&zone);
        let iso = local.to_rfc3339_opts(SecondsFormat::Secs, true);
        let output = format!("{} ({zone_name})", local.format("%A %Y-%m-%d %H:%M:%S %:z"));
        Ok(ToolOutput {
            output,
            details: Some(ToolDetails::Time { iso, timezone: zone_name.to_string(), unix_ms: now.timestamp_millis() }),
            ..ToolOutput::default()
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ctx() -> ToolContext {
        // 2026-11-21T12:00:00Z, a Saturday (the test context's fixed clock).
        // A project folder of its own (`/tmp` itself is no workspace); the tool touches nothing.
        let ws = std::env::temp_dir().join("bridle-current-time-test");
        std::fs::create_dir_all(&ws).unwrap();
        crate::tools::testing::context(&ws)
    }

    #[tokio::test]
    async fn answers_in_the_asked_zone() {
        let out =
            GetCurrentTime.run(&GetCurrentTimeArgs { timezone: Some("Asia/Tokyo".into()) }, &ctx()).await.unwrap();
        assert_eq!(out.output, "Saturday 2026-11-21 21:00:00 +09:00 (Asia/Tokyo)");
        assert_eq!(crate::tools::testing::details(&out)["iso"], "2026-11-21T21:00:00+09:00");
    }

    #[tokio::test]
    async fn defaults_to_utc_and_rejects_unknown_zones() {
        let out = GetCurrentTime.run(&GetCurrentTimeArgs { timezone: None }, &ctx()).await.unwrap();
        assert_eq!(out.output, "Saturday 2026-11-21 12:00:00 +00:00 (UTC)");
        let err = GetCurrentTime
            .run(&GetCurrentTimeArgs { timezone: Some("Mars/Olympus".into()) }, &ctx())
            .await
            .unwrap_err();
        assert!(err.0.contains("Mars/Olympus"));
    }
}
