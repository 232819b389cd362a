//! The path guardian, for shell commands: the paths in a command's words and redirections.
//!
//! Rule (DESIGN §6): a sensitive path — credentials, Bridle's own data, the user's protected
//! paths — is critical whether read or written; writing or deleting outside the workspace is
//! high; reading outside it is low. Devices that hold nothing (`/dev/null`, `/dev/stdout`, ...)
//! are nothing; scratch space (`/tmp/...`) is nothing to read and low to write (see
//! [`super::super::places`]). A path a command writes that is only known when it runs (a
//! substitution's output, `read`, `~-` before any `cd`, a variable from the environment in
//! front: `$DIR/x` is neither `/x` nor the workspace's `x`) is high: it could be anything; one
//! whose known part names a credential (`$DIR/.ssh/id_rsa`) is sensitive wherever it leads (the
//! shell-rule guardian weighs `rm -rf $DIR/`). File tools' paths are judged by the sandbox
//! before the guard, not here.

use bridle_protocol::{Finding, Severity};

use super::{finding, list, ShellView};
use crate::guard::places::Place;

const GUARDIAN: &str = "path";

pub(crate) fn judge(view: &ShellView) -> Vec<Finding> {
    let mut sensitive = Vec::new();
    let mut why = Vec::new();
    let mut written = Vec::new();
    let mut read = Vec::new();
    let mut scratch = Vec::new();
    let mut unknown: Vec<String> = view.unknown_writes.iter().flatten().cloned().collect();
    for (_, paths, _) in view.commands() {
        for p in paths {
            match &p.located.place {
                Place::Sensitive(reason) => {
                    sensitive.push(p.text.clone());
                    if !why.contains(reason) {
                        why.push(reason.clone());
                    }
                }
                _ if p.located.via_empty_variable => {
                    if p.writes {
                        unknown.push(p.text.clone());
                    }
                }
                Place::Outside if p.writes => written.push(p.text.clone()),
                Place::Outside => read.push(p.text.clone()),
                Place::Scratch if p.writes => scratch.push(p.text.clone()),
                Place::Scratch | Place::Inside(_) | Place::Device => {}
            }
        }
    }
    let mut out = Vec::new();
    if !unknown.is_empty() {
        out.push(finding(
            GUARDIAN,
            "unknown-target",
            Severity::High,
            format!("writes or deletes a path only known when it runs: {}", list(&unknown)),
        ));
    }
    if !sensitive.is_empty() {
        out.push(finding(
            GUARDIAN,
            "sensitive-path",
            Severity::Critical,
            format!("touches a protected path: {} ({})", list(&sensitive), why.join(", ")),
        ));
    }
    if !written.is_empty() {
        out.push(finding(
            GUARDIAN,
            "write-outside-workspace",
            Severity::High,
            format!("writes or deletes outside the workspace: {}", list(&written)),
        ));
    }
    if !read.is_empty() {
        out.push(finding(
            GUARDIAN,
            "read-outside-workspace",
            Severity::Low,
            format!("reads outside the workspace: {}", list(&read)),
        ));
    }
    if !scratch.is_empty() {
        out.push(finding(
            GUARDIAN,
            "write-scratch",
            Severity::Low,
            format!("writes to shared scratch space: {}", list(&scratch)),
        ));
    }
    out
}
