//! The model's catalog of skills: the name and description of each skill it may load, within a
//! token budget; the bodies stay out until the model loads one (`skill`).
//!
//! Rule: only skills that are offered (well-formed and trusted) and model-invocable are listed;
//! past the budget the rest are counted, never cut mid-line.

use super::Skill;

/// The most tokens the catalog takes in the system prompt.
pub const CATALOG_BUDGET: u64 = 2_000;

/// The catalog section of the system prompt; `None` when no skill is offered to the model.
pub fn catalog(skills: &[Skill], budget: u64) -> Option<String> {
    let listed: Vec<_> = skills.iter().filter_map(Skill::offered).filter(|p| p.model_invocable).collect();
    if listed.is_empty() {
        return None;
    }
    let mut text = String::from(
        "\n# Skills\nSkills hold instructions for particular tasks. When a task matches a skill's description, load it \
         with the `skill` tool before you start: it returns the instructions and the skill's files (read them with \
         `read_file`, run its scripts with `bash`).\n\n",
    );
    let mut used = crate::compaction::count_text_tokens(&text);
    let mut left_out = 0;
    for parsed in &listed {
        let line = format!("- {}: {}\n", parsed.name, parsed.description.replace('\n', " "));
        let cost = crate::compaction::count_text_tokens(&line);
        if left_out > 0 || used + cost > budget {
            left_out += 1;
            continue;
        }
        used += cost;
        text.push_str(&line);
    }
    if left_out > 0 {
        text.push_str(&format!("({left_out} more skills are not listed here, to keep this list short.)\n"));
    }
    Some(text)
}
