#![allow(clippy::unwrap_used)]

use bridle_protocol::{HistoryItem, ToolCall, ToolResult};
use pretty_assertions::assert_eq;

use super::*;

fn user(text: &str) -> HistoryItem {
    HistoryItem::User { text: text.into() }
}

fn call(id: &str) -> HistoryItem {
    let call = ToolCall { id: id.into(), provider_id: id.into(), name: "read_file".into(), arguments: "{}".into() };
    HistoryItem::Assistant { text: String::new(), tool_calls: vec![call], cut_off: false }
}

fn result(id: &str, size: usize) -> HistoryItem {
    HistoryItem::ToolResult {
        result: ToolResult {
            tool_call_id: id.into(),
            output: "x".repeat(size),
            is_error: false,
            details: None,
            data: None,
            diff: None,
        },
    }
}

fn said(text: &str) -> HistoryItem {
    HistoryItem::Assistant { text: text.into(), tool_calls: Vec::new(), cut_off: false }
}

/// Four turns, each reading a big file.
fn history() -> Vec<HistoryItem> {
    (0..4)
        .flat_map(|t| {
            let id = format!("c{t}");
            vec![user(&format!("turn {t}")), call(&id), result(&id, 4_000), said(&format!("done {t}"))]
        })
        .collect()
}

#[test]
fn the_view_hides_masked_outputs_and_summarised_items_only() {
    let h = history();
    let view = View { summarized: 4, summary: Some("earlier: turn 0 read a file".into()), masked: [6].into() };
    let request = view.apply("system", &h, Vec::new());
    assert!(request.system.contains("earlier: turn 0 read a file"));
    assert_eq!(request.history.len(), h.len() - 4);
    assert_eq!(request.history[0], user("turn 1"));
    let HistoryItem::ToolResult { result } = &request.history[2] else { panic!() };
    assert!(result.output.starts_with("[output hidden to save context: 4000 characters"));
    assert_eq!(request.history[6], h[10], "unmasked results stay whole");
    assert_eq!((view.mark(0), view.mark(6), view.mark(10)), (Some(Marked::Summarized), Some(Marked::Masked), None));
}

#[test]
fn masking_goes_middle_out_and_never_touches_the_last_batch() {
    let h = history();
    let candidates = mask_candidates(&h, &View::default());
    assert_eq!(candidates.len(), 3, "the last batch (index 14) is the model's current work");
    assert!(!candidates.contains(&14));
    assert_eq!(candidates[0], 6, "nearest the middle first");
    assert_eq!(keep_from(&h, 2), Some(8));
    assert_eq!(keep_from(&h, 4), None);
}

#[test]
fn the_estimate_learns_this_sessions_ratio_within_bounds() {
    let request = View::default().apply("s", &history(), Vec::new());
    let mut e = Estimator::default();
    let chars = estimate::request_chars(&request);
    assert_eq!(e.tokens(&request), (chars as f64 / 4.0).ceil() as u64);
    e.observe(&request, (chars / 3) as u64);
    assert!((e.chars_per_token() - 3.0).abs() < 0.01, "{}", e.chars_per_token());
    e.observe(&request, 0);
    assert!((e.chars_per_token() - 3.0).abs() < 0.01, "a zero count teaches nothing");
    e.observe(&request, 1);
    assert!(e.chars_per_token() <= 8.0);
}

#[test]
fn a_transcript_keeps_the_newest_items_that_fit() {
    let h = history();
    let text = summary::transcript(Some("before all this"), &h, 1_500);
    assert!(text.contains("before all this"));
    assert!(text.contains("USER: turn 3") && !text.contains("USER: turn 0"), "{text}");
    assert!(text.contains("older items did not fit"));
    assert!(text.len() < 2_500, "{}", text.len());
}
