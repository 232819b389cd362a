//! The ids tool calls carry on the wire back to the provider.
//!
//! Providers' ids are not trusted: some reuse one id for several calls of an answer, some send
//! none. Each call keeps its provider id where that id is unique in the conversation; a repeat
//! or a missing one gets a derived id. The mapping depends only on the history, so the same
//! history always produces the same payload (prompt caches stay warm).

use std::collections::{HashMap, HashSet};

use bridle_protocol::HistoryItem;

/// Bridle call id -> id to use on the wire, for every call in `history`.
pub fn wire_ids(history: &[HistoryItem]) -> HashMap<String, String> {
    let mut used = HashSet::new();
    let mut ids = HashMap::new();
    for item in history {
        let HistoryItem::Assistant { tool_calls, .. } = item else { continue };
        for call in tool_calls {
            let base = if call.provider_id.is_empty() { "call".to_string() } else { sanitise(&call.provider_id) };
            let mut wire = base.clone();
            let mut n = 2;
            while !used.insert(wire.clone()) {
                wire = format!("{base}_{n}");
                n += 1;
            }
            ids.insert(call.id.clone(), wire);
        }
    }
    ids
}

/// Anthropic requires `^[a-zA-Z0-9_-]+$`; OpenAI accepts anything. Keep both happy.
fn sanitise(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridle_protocol::ToolCall;

    fn call(id: &str, provider_id: &str) -> ToolCall {
        ToolCall { id: id.into(), provider_id: provider_id.into(), name: "t".into(), arguments: "{}".into() }
    }

    #[test]
    fn repeated_and_missing_ids_become_unique() {
        let history = vec![
            HistoryItem::Assistant {
                text: String::new(),
                tool_calls: vec![call("a", "call_1"), call("b", "call_1"), call("c", "")],
                cut_off: false,
            },
            HistoryItem::Assistant {
                text: String::new(),
                tool_calls: vec![call("d", "call_1"), call("e", "toolu.9")],
                cut_off: false,
            },
        ];
        let ids = wire_ids(&history);
        assert_eq!(ids["a"], "call_1");
        assert_eq!(ids["b"], "call_1_2");
        assert_eq!(ids["c"], "call");
        assert_eq!(ids["d"], "call_1_3");
        assert_eq!(ids["e"], "toolu_9");
    }
}
