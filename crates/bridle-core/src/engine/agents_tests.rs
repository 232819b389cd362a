//! What a child's late events may and may not change of it.

use bridle_protocol::{AbortReason, AgentInfo, AgentState, Event};

use super::{Child, Children};

fn with_child(state: AgentState) -> Children {
    let children = Children::default();
    let info = AgentInfo { id: "c".into(), state, ..AgentInfo::default() };
    super::lock(&children.live).insert("c".into(), Child { engine: None, info, asking: Default::default() });
    children
}

fn aborted() -> Event {
    Event::TurnAborted { session_id: "c".into(), turn_id: "t".into(), reason: AbortReason::Interrupted }
}

#[test]
fn the_end_of_a_turn_its_close_interrupted_leaves_a_closed_child_closed() {
    // An interrupt closes the child, then the child's last event (its turn aborted) arrives.
    let children = with_child(AgentState::Closed);
    assert_eq!(children.observe("c", &aborted()), None);
    assert_eq!(children.list()[0].state, AgentState::Closed);
    let said = Event::AssistantMessage { session_id: "c".into(), turn_id: "t".into(), text: "last words".into() };
    let told = children.observe("c", &said).map(|i| (i.state, i.last_message));
    assert_eq!(told, Some((AgentState::Closed, Some("last words".to_string()))), "its last message is kept");
}

#[test]
fn an_interrupted_turn_of_an_open_child_leaves_it_idle() {
    let children = with_child(AgentState::Working);
    assert_eq!(children.observe("c", &aborted()).map(|i| i.state), Some(AgentState::Idle));
}
