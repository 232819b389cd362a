//! Tool names as the model sees them: `mcp__<server>__<tool>`, only `A-Za-z0-9_-`, at most 64
//! characters (providers' limit): a longer one keeps its start and ends with a hash of the whole.

use sha2::{Digest, Sha256};

/// Longest name the providers accept.
pub const MAX_NAME: usize = 64;

/// The model-facing name of `tool` of `server`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean =
        |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect::<String>();
    let name = format!("mcp__{}__{}", clean(server), clean(tool));
    if name.len() <= MAX_NAME {
        return name;
    }
    let hash = Sha256::digest(name.as_bytes());
    let suffix: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{}_{suffix}", &name[..MAX_NAME - suffix.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_cleaned_and_capped() {
        assert_eq!(tool_name("time", "get_current_time"), "mcp__time__get_current_time");
        assert_eq!(tool_name("my server", "a.b/c"), "mcp__my_server__a_b_c");
        let long = tool_name("everything", &"x".repeat(80));
        assert_eq!(long.len(), MAX_NAME);
        assert_ne!(long, tool_name("everything", &"x".repeat(81)), "the hash tells them apart");
    }
}
