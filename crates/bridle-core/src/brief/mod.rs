//! The agent's brief (DESIGN §13): the system prompt a session sends, assembled from Bridle's
//! own instructions, an environment block (OS, shell, workspace, date, git, sandbox) and the
//! project's instructions (`AGENTS.md`, else `CLAUDE.md`: the user's own beside the config, then
//! the workspace root's), each file capped and named with its path.
//!
//! Rule: [`assemble`] is a pure function of what [`Environment::detect`] and
//! [`load_instructions`] found, so the assembled text is snapshot-tested as a whole; what reads
//! the machine (git, files) is bounded in time and size and never fails the session — a file
//! that cannot be read is left out, a git that does not answer is "unknown".

mod environment;
mod instructions;
mod prompt;

pub use environment::{Environment, Git};
pub use instructions::{load_instructions, InstructionFile, INSTRUCTION_FILES, INSTRUCTION_LIMIT};
pub use prompt::DEFAULT_SYSTEM_PROMPT;

/// The brief as sent: the text, and the instruction files in it with their token cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brief {
    /// The whole system prompt.
    pub text: String,
    /// The project instruction files included, in order.
    pub files: Vec<InstructionFile>,
}

/// Bridle's instructions, the environment, then the project's instructions.
pub fn assemble(own: &str, environment: &Environment, files: Vec<InstructionFile>) -> Brief {
    let mut text = own.trim_end().to_string();
    text.push_str("\n\n# Environment\n");
    text.push_str(&environment.describe());
    if !files.is_empty() {
        text.push_str(
            "\n# Project instructions\nThe user and the project keep these instructions for agents. Follow them where \
             they do not conflict with the user's messages; the more specific folder wins.\n",
        );
        for file in &files {
            text.push_str(&format!("\n## {}\n\n{}\n", file.path, file.text.trim_end()));
            if file.truncated {
                text.push_str(&format!("\n[cut here: the file is longer than {} bytes]\n", INSTRUCTION_LIMIT));
            }
        }
    }
    Brief { text, files }
}

impl Brief {
    /// The brief with the skills' catalog after the project's instructions (names and
    /// descriptions only: a skill's body is read when the model loads it).
    pub fn with_skills(mut self, catalog: Option<String>) -> Self {
        if let Some(catalog) = catalog {
            self.text.push('\n');
            self.text.push_str(catalog.trim_end());
            self.text.push('\n');
        }
        self
    }
}

#[cfg(test)]
mod tests;
