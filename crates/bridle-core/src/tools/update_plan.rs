//! `update_plan`: the model's plan for the task, as a checklist the user watches.
//!
//! Rules: the whole plan is sent each time (it replaces the last one); each step has a status
//! `pending`, `in_progress` or `done`, at most one `in_progress`; the tool touches nothing — the
//! engine stores the plan with the session and shows it (`PlanUpdated`).

use async_trait::async_trait;
use bridle_protocol::ClientKind;
use bridle_protocol::{PlanItem, PlanStatus, ToolDetails};
use serde::Deserialize;

use super::{Effect, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Replaces the task's plan: every step with its status (`pending`, `in_progress`, `done`); at
/// most one step in progress. Send the whole list each time.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePlanArgs {
    /// The steps, in order.
    pub items: Vec<PlanStep>,
}

/// One step of the plan.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    /// What the step does, in a short sentence.
    pub step: String,
    /// `pending`, `in_progress` or `done`.
    pub status: StepStatus,
}

/// Where a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
}

impl From<StepStatus> for PlanStatus {
    fn from(s: StepStatus) -> Self {
        match s {
            StepStatus::Pending => PlanStatus::Pending,
            StepStatus::InProgress => PlanStatus::InProgress,
            StepStatus::Done => PlanStatus::Done,
        }
    }
}

/// Steps a plan may hold.
const MOST_STEPS: usize = 50;

/// The `update_plan` tool.
pub struct UpdatePlan;

#[async_trait]
impl Tool for UpdatePlan {
    type Args = UpdatePlanArgs;
    const NAME: &'static str = "update_plan";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Think;
    const EFFECT: Effect = Effect::SetsPlan;

    fn title(_args: &Self::Args) -> String {
        "Update the plan".to_string()
    }

    async fn run(&self, args: &Self::Args, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.items.is_empty() {
            return Err(ToolError::new("a plan needs at least one step"));
        }
        if args.items.len() > MOST_STEPS {
            return Err(ToolError::new(format!("a plan holds at most {MOST_STEPS} steps; merge some")));
        }
        if args.items.iter().any(|i| i.step.trim().is_empty()) {
            return Err(ToolError::new("every step needs a description"));
        }
        let running = args.items.iter().filter(|i| i.status == StepStatus::InProgress).count();
        if running > 1 {
            return Err(ToolError::new(format!("{running} steps are in_progress; at most one may be")));
        }
        let items: Vec<PlanItem> =
            args.items.iter().map(|i| PlanItem { step: i.step.trim().to_string(), status: i.status.into() }).collect();
        let done = items.iter().filter(|i| i.status == PlanStatus::Done).count();
        Ok(ToolOutput {
            output: format!("Plan updated: {done} of {} steps done.", items.len()),
            details: Some(ToolDetails::Plan { items }),
            ..ToolOutput::default()
        })
    }
}
