//! Where a path written in a shell command leads: inside the workspace, scratch space, a
//! harmless device, outside, or somewhere sensitive; and whether it is the root, a home folder,
//! a system directory or a folder holding the workspace.
//!
//! Rule: a path is judged after `~`, `$HOME`, `$PWD` and `$TMPDIR` expansion, after `cd` (the
//! command's working directory is followed through the line), with a trailing glob cut off
//! (`/etc/*` is `/etc`), lexically and — when the workspace sandbox is known — through
//! [`PathSandbox::classify`], so a symlink inside the workspace that leads out is outside and
//! the sandbox's sensitive list applies to shell commands too. Credentials are also recognised
//! by name anywhere outside the workspace (`/root/.ssh`, another user's `.aws`). With no
//! workspace known, relative paths are inside and absolute ones outside.
//!
//! A glob outside the workspace is matched against where secrets live (`~/.ss*/id_*` is SSH
//! keys). Compiling a matcher costs about a millisecond in a debug build, so a glob whose literal
//! start and end no secret's path has is decided without one (`/etc/*/x`), each distinct glob is
//! compiled once per line ([`GlobChecks`]), and each compilation is charged to the line's
//! [`Budget`]: a glob the budget cannot pay for is judged as its cut path, and the spent budget
//! makes the line ask (`too-large`), as every line the guard stopped following does.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::shell::budget::Budget;
use crate::sandbox::{lexical_normalise, PathClass, PathSandbox, SECRET_NAMES};

/// The working directory a command runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cwd {
    /// The workspace root (where `bash` starts).
    Workspace,
    /// After a `cd` to a known place (shared: every command after the `cd` runs there).
    At(Arc<Path>),
    /// After a `cd` to a place only known at run time: relative paths lead somewhere outside.
    Unknown,
}

/// Where a path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// Inside the workspace; the relative POSIX path (empty for the root).
    Inside(String),
    /// Below `/tmp`, `/var/tmp` or `/dev/shm`: shared scratch space.
    Scratch,
    /// `/dev/null`, `/dev/stdout`, `/dev/fd/N` and the like.
    Device,
    /// Outside the workspace.
    Outside,
    /// A credential store or Bridle's own data; what it protects.
    Sensitive(String),
}

/// A path located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    /// Absolute and lexically normalised, `~` expanded (`/~` when the home is unknown).
    pub absolute: PathBuf,
    /// Where it leads.
    pub place: Place,
    /// `/`, a home folder or a system directory.
    pub system: bool,
    /// An unknown variable was read as empty to get here (`$DIR/` became `/`).
    pub via_empty_variable: bool,
    /// A folder that holds credentials or Bridle's data somewhere beneath it (`~`, `/`,
    /// `~/.config`): reading it recursively reads them.
    pub holds_secrets: bool,
}

/// Stands for the home folder when it is not known.
const UNKNOWN_HOME: &str = "/~";

/// Stands for the working directory after a `cd` to a place only known at run time.
const UNKNOWN_CWD: &str = "/?";

/// Top-level directories whose loss breaks the system.
const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "tmp",
    "mnt",
    "media",
    "snap",
    "nix",
    "Applications",
    "Library",
    "System",
    "Users",
    "Volumes",
    "private",
    "cores",
];

/// Second-level system directories.
const SYSTEM_SUBDIRS: &[&str] = &[
    "/usr/bin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local",
    "/usr/sbin",
    "/usr/share",
    "/usr/include",
    "/usr/libexec",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    "/var/mail",
    "/var/db",
    "/var/www",
    "/private/etc",
    "/private/var",
    "/private/tmp",
    "/usr/local/bin",
    "/usr/local/lib",
];

const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
];

/// Scratch space: writing below it is low, reading it is nothing. It is shared and meant for
/// throwaway files (`cargo build > /tmp/build.log` is everyday work), but it is still outside
/// the workspace, so writes there are recorded rather than waved through silently; the
/// directories themselves are system directories (`rm -rf /tmp` is not scratch work).
const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm"];

/// Files inside a secret folder a glob is also tried against (`~/.ss?/id_*` names no folder).
const SECRET_FILES: &[&str] = &["id_rsa", "id_ed25519", "config", "credentials", "authorized_keys", "hosts.yml"];

/// What compiling one glob's matcher is charged, beyond its text (kept for the line's other
/// mentions of the glob). Its cost is time: about a millisecond in a debug build, much the same
/// for a long glob (what it allocates, some 15 KB plus 230 bytes per byte of glob, is freed at
/// once). Priced so [`FLOOR`](super::shell::budget::FLOOR) pays for 64 compilations, and a long
/// line for one per 256 of its bytes.
pub(crate) const GLOB_WEIGHT: usize = 4 * 1024;

/// The globs of one line already matched against where secrets live, and those places.
#[derive(Debug, Default)]
pub(crate) struct GlobChecks {
    /// Each glob compiled (expanded and absolute) and the secret it reaches.
    reached: HashMap<String, Option<&'static str>>,
    /// Where the secrets of this home and of a typical other one live, with what they hold;
    /// listed at the first glob that needs them.
    secrets: Vec<(PathBuf, &'static str)>,
}

/// Locates paths for one guard.
#[derive(Debug, Clone)]
pub(crate) struct Places {
    sandbox: Option<PathSandbox>,
    /// Where credentials and protected paths are, as bytes, listed once: every path located
    /// is asked whether it holds one ([`Places::holds_secrets`]).
    secret_paths: Arc<[Vec<u8>]>,
}

impl Default for Places {
    fn default() -> Self {
        Self::new(None)
    }
}

impl Places {
    pub(crate) fn new(sandbox: Option<PathSandbox>) -> Self {
        let home =
            sandbox.as_ref().and_then(|s| s.home()).map_or_else(|| PathBuf::from(UNKNOWN_HOME), Path::to_path_buf);
        let homes = [home, PathBuf::from("/root")];
        let named = homes.iter().flat_map(|h| SECRET_NAMES.iter().map(move |(name, _)| h.join(name)));
        let protected = sandbox.iter().flat_map(|s| s.protected_with_reasons().map(|(p, _)| p.to_path_buf()));
        let secret_paths = named.chain(protected).map(|p| p.into_os_string().into_encoded_bytes()).collect();
        Self { sandbox, secret_paths }
    }

    pub(crate) fn sandbox(&self) -> Option<&PathSandbox> {
        self.sandbox.as_ref()
    }

    fn home(&self) -> PathBuf {
        self.sandbox.as_ref().and_then(|s| s.home()).map_or_else(|| PathBuf::from(UNKNOWN_HOME), Path::to_path_buf)
    }

    fn base(&self, cwd: &Cwd) -> PathBuf {
        match cwd {
            Cwd::At(dir) => dir.to_path_buf(),
            Cwd::Unknown => PathBuf::from(UNKNOWN_CWD),
            Cwd::Workspace => self.sandbox.as_ref().map_or_else(|| PathBuf::from("."), |s| s.root().to_path_buf()),
        }
    }

    /// Where `text` leads from `cwd`; `None` when it depends on a variable this guard cannot
    /// know and `certain` is false (a guess not worth judging).
    ///
    /// A glob is matched against secrets through `globs`, its matcher charged to `budget`.
    pub(crate) fn locate(
        &self,
        text: &str,
        cwd: &Cwd,
        certain: bool,
        globs: &mut GlobChecks,
        budget: &mut Budget,
    ) -> Option<Located> {
        let cut = cut_glob(text);
        let Some((expanded, via_empty_variable)) = self.expand(&cut, cwd) else {
            return known_tail_secret(text);
        };
        let joined = if expanded.is_absolute() { expanded } else { self.base(cwd).join(expanded) };
        let absolute = lexical_normalise(&joined);
        let mut place = self.place(&absolute);
        // A guess behind a variable is only worth judging when it names a credential.
        if via_empty_variable && !certain && !matches!(place, Place::Sensitive(_)) {
            return None;
        }
        if cut != text && matches!(place, Place::Outside | Place::Scratch) {
            // `/home/*/.ssh/id_rsa`, `~/.ss?/*`: the glob may reach a secret the cut path hides.
            if let Some(why) = self.glob_reaches_secret(text, cwd, globs, budget) {
                place = Place::Sensitive(why.to_string());
            }
        }
        let system = self.is_system(&absolute);
        let holds_secrets = self.holds_secrets(&absolute);
        Some(Located { absolute, place, system, via_empty_variable, holds_secrets })
    }

    /// Whether a secret lives at or below `folder`: the home folders that hold them (this one,
    /// another user's, root's) and every folder above them.
    fn holds_secrets(&self, folder: &Path) -> bool {
        if !folder.is_absolute() {
            return false;
        }
        if matches!(folder.to_str(), Some("/" | "/home" | "/Users")) {
            return true;
        }
        // Compared as bytes (the paths are absolute and normalised): a prefix that ends at a
        // separator.
        let folder = folder.as_os_str().as_encoded_bytes();
        self.secret_paths.iter().any(|secret| {
            secret.starts_with(folder) && (secret.len() == folder.len() || secret.get(folder.len()) == Some(&b'/'))
        })
    }

    /// Whether a globbed path could name a credential: matched against where the secrets of
    /// this home (and of a typical other one) live. `None` too when the budget cannot pay for the
    /// matcher (the budget then says so).
    fn glob_reaches_secret(
        &self,
        text: &str,
        cwd: &Cwd,
        globs: &mut GlobChecks,
        budget: &mut Budget,
    ) -> Option<&'static str> {
        let (expanded, _) = self.expand(text, cwd)?;
        let joined = if expanded.is_absolute() { expanded } else { self.base(cwd).join(expanded) };
        let pattern = lexical_normalise(&joined).to_string_lossy().into_owned();
        if let Some(known) = globs.reached.get(&pattern) {
            return *known;
        }
        if globs.secrets.is_empty() {
            globs.secrets = self.secrets();
        }
        let (start, end) = literal_ends(&pattern);
        let could = |secret: &Path| {
            // A path that is not text is left to the matcher.
            secret.to_str().is_none_or(|s| s.starts_with(start) && s.ends_with(end))
        };
        if !globs.secrets.iter().any(|(secret, _)| could(secret)) {
            return None;
        }
        if !budget.take(GLOB_WEIGHT + pattern.len()) {
            return None;
        }
        let reached = globset::GlobBuilder::new(&pattern).literal_separator(true).build().ok().and_then(|glob| {
            let glob = glob.compile_matcher();
            globs.secrets.iter().find(|(secret, _)| glob.is_match(secret)).map(|(_, why)| *why)
        });
        globs.reached.insert(pattern, reached);
        reached
    }

    /// Where secrets live, in [`SECRET_NAMES`] order: each folder and the usual files in it, in
    /// this home, `/home/user` and `/root`.
    fn secrets(&self) -> Vec<(PathBuf, &'static str)> {
        let homes = [self.home(), PathBuf::from("/home/user"), PathBuf::from("/root")];
        let mut secrets = Vec::new();
        for (name, why) in SECRET_NAMES {
            for home in &homes {
                let secret = home.join(name);
                secrets.extend(SECRET_FILES.iter().map(|file| (secret.join(file), *why)));
                secrets.push((secret, *why));
            }
        }
        // Bridle's data and the user's protected paths (`~/.local/share/bri*`).
        for (path, why) in self.sandbox.iter().flat_map(PathSandbox::protected_with_reasons) {
            secrets.push((path.join("config.toml"), why));
            secrets.push((path.to_path_buf(), why));
        }
        secrets
    }

    /// `~`, `~user`, `$HOME`, `$PWD`, `$TMPDIR` expanded; any other variable read as empty and
    /// said so (the guardians take such a path as only known when it runs, not as what it reads
    /// with the variable empty). `None` for `${X:?}` and other forms whose value cannot even be
    /// guessed.
    fn expand(&self, text: &str, cwd: &Cwd) -> Option<(PathBuf, bool)> {
        let mut out = String::new();
        let mut rest = text;
        if let Some(after) = rest.strip_prefix('~') {
            let end = after.find('/').unwrap_or(after.len());
            let user = &after[..end];
            let home = match user {
                "" => self.home(),
                "+" => self.base(cwd),
                "-" => return None,
                "root" => PathBuf::from("/root"),
                u if u.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) => {
                    PathBuf::from("/home").join(u)
                }
                _ => return None,
            };
            out.push_str(&home.to_string_lossy());
            rest = &after[end..];
        }
        let mut empty = false;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let (name, len, complex) = if let Some(braced) = after.strip_prefix('{') {
                let close = braced.find('}')?;
                let inner = &braced[..close];
                let name_len = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
                (&inner[..name_len], close + 2, name_len != inner.len())
            } else {
                let len = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
                (&after[..len], len, false)
            };
            // `${HOME#/}`: the home folder without its leading slash (`/${HOME#/}` is `~`).
            let without_slash = complex && after.strip_prefix('{').is_some_and(|b| b[name.len()..].starts_with("#/}"));
            if (complex && !without_slash) || name.is_empty() {
                return None;
            }
            let skip = usize::from(without_slash);
            match name {
                "HOME" => out.push_str(&self.home().to_string_lossy()[skip..]),
                "PWD" => out.push_str(&self.base(cwd).to_string_lossy()[skip..]),
                "TMPDIR" => out.push_str(&"/tmp"[skip..]),
                _ => empty = true,
            }
            rest = &after[len..];
        }
        out.push_str(rest);
        if out.is_empty() {
            out.push('.');
        }
        Some((PathBuf::from(out), empty))
    }

    fn place(&self, absolute: &Path) -> Place {
        let text = absolute.to_string_lossy();
        if DEVICES.contains(&text.as_ref()) || text.starts_with("/dev/fd/") || text.starts_with("/proc/self/fd/") {
            return Place::Device;
        }
        match &self.sandbox {
            Some(sandbox) => match sandbox.classify(&text) {
                PathClass::Inside(rel) => return Place::Inside(posix(&rel)),
                PathClass::Sensitive(why) => return Place::Sensitive(why),
                PathClass::Outside(_) => {}
            },
            None if !absolute.is_absolute() => {
                return if absolute.components().next() == Some(Component::ParentDir) {
                    Place::Outside
                } else {
                    Place::Inside(posix(absolute))
                };
            }
            None => {}
        }
        if let Some(why) = secret_by_name(absolute) {
            return Place::Sensitive(why.to_string());
        }
        // Not the home folder, even when it lives in /tmp (a throwaway account, a test).
        if SCRATCH.iter().any(|s| absolute.starts_with(s) && absolute != Path::new(s))
            && !absolute.starts_with(self.home())
        {
            return Place::Scratch;
        }
        Place::Outside
    }

    fn is_system(&self, absolute: &Path) -> bool {
        let text = absolute.to_string_lossy();
        if text == "/" || absolute == self.home() || text == UNKNOWN_HOME || SYSTEM_SUBDIRS.contains(&text.as_ref()) {
            return true;
        }
        // A folder that holds the workspace: deleting it deletes the project and its neighbours.
        if let Some(root) = self.sandbox.as_ref().map(PathSandbox::root) {
            if root.starts_with(absolute) && root != absolute && absolute.is_absolute() {
                return true;
            }
        }
        let mut parts = absolute.components().skip(1);
        match (parts.next(), parts.next(), parts.next()) {
            (Some(Component::Normal(top)), None, None) => SYSTEM_DIRS.iter().any(|d| top == *d),
            (Some(Component::Normal(top)), Some(Component::Normal(_)), None) => top == "home" || top == "Users",
            _ => false,
        }
    }
}

/// `src/*.rs` -> `src`, `/etc/*` -> `/etc`, `*` -> `` (the working directory).
fn cut_glob(text: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut cut = false;
    for part in text.split('/') {
        let brace = part.match_indices('{').any(|(i, _)| !part[..i].ends_with('$'));
        // `$(?)` is a value only known when it runs, not a glob.
        if (part.contains(['*', '?', '[']) && !part.contains("$(")) || brace {
            cut = true;
            break;
        }
        kept.push(part);
    }
    let joined = kept.join("/");
    // `$DIR/*` keeps its slash: with `$DIR` empty it is `/*`.
    if cut && !kept.is_empty() {
        format!("{joined}/")
    } else {
        joined
    }
}

/// Text every match of a glob starts with, and text every match ends with: what comes before
/// its first special character and after its last (an escape is special too), less the slash
/// beside a `**` (`/a/**/b` matches `/a/b`, `**/b` matches `b`).
fn literal_ends(glob: &str) -> (&str, &str) {
    let special = |c: char| matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\');
    match (glob.find(special), glob.rfind(special)) {
        (Some(first), Some(last)) => (glob[..first].trim_end_matches('/'), glob[last + 1..].trim_start_matches('/')),
        _ => (glob, ""),
    }
}

/// A path only known when it runs (`$(...)/.ssh/id_rsa`, `${X#}/.aws`) whose written tail
/// names a credential: sensitive, wherever the unknown part leads.
fn known_tail_secret(text: &str) -> Option<Located> {
    let last = text.rfind(['}', ')'])?;
    let tail = text[last + 1..].strip_prefix('/')?;
    if tail.contains('$') {
        return None;
    }
    let absolute = Path::new(UNKNOWN_CWD).join(tail);
    let why = secret_by_name(&absolute)?;
    let place = Place::Sensitive(why.to_string());
    Some(Located { absolute, place, system: false, via_empty_variable: false, holds_secrets: false })
}

fn secret_by_name(path: &Path) -> Option<&'static str> {
    let parts: Vec<&std::ffi::OsStr> = path.components().map(|c| c.as_os_str()).collect();
    SECRET_NAMES.iter().find_map(|(name, why)| {
        let wanted: Vec<&str> = name.split('/').collect();
        parts.windows(wanted.len()).any(|w| w.iter().zip(&wanted).all(|(a, b)| *a == *b)).then_some(*why)
    })
}

/// A relative path with `/` separators.
pub(crate) fn posix(path: &Path) -> String {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The cheap test may only rule out what the matcher would not match: every path a glob
    /// matches starts and ends with the glob's literal ends.
    #[test]
    fn literal_ends_never_rule_out_a_match() {
        let globs = [
            "/home/*/.ssh",
            "/home/user/.ss?/id_*",
            "/home/user/.ss[h]",
            "/home/user/.{ssh,aws}/config",
            "/home/**/.ssh",
            "/home/user/**",
            "/**/credentials",
            "**/.ssh",
            "/root/.ssh/id_\\rsa",
            "/root/.ssh/*",
            "/r*/.*/*",
            "/home/user/*1*",
            "/etc/*/x",
        ];
        let secrets = Places::default().secrets();
        let mut matched = 0;
        for glob in globs {
            let matcher = globset::GlobBuilder::new(glob).literal_separator(true).build().unwrap().compile_matcher();
            let (start, end) = literal_ends(glob);
            for (secret, _) in &secrets {
                let text = secret.to_str().unwrap();
                if matcher.is_match(secret) {
                    matched += 1;
                    assert!(text.starts_with(start) && text.ends_with(end), "{glob} matches {text}: {start:?} {end:?}");
                }
            }
        }
        assert!(matched > 20, "the globs reach secrets: {matched}");
        assert_eq!(literal_ends("/etc/*/x"), ("/etc", "x"));
        assert_eq!(literal_ends("/a/**/b"), ("/a", "b"));
    }

    #[test]
    fn each_distinct_glob_is_compiled_once_and_charged() {
        let places = Places::default();
        let mut globs = GlobChecks::default();
        let mut budget = Budget::for_len(0);
        let left = budget.left();
        let locate = |text: &str, globs: &mut GlobChecks, budget: &mut Budget| {
            places.locate(text, &Cwd::Workspace, true, globs, budget).unwrap().place
        };
        // Ruled out by its literal ends: no matcher, no charge.
        assert_eq!(locate("/etc/*/x", &mut globs, &mut budget), Place::Outside);
        assert_eq!(budget.left(), left);
        // Compiled once, found, and charged once.
        let ssh = Place::Sensitive("SSH keys".into());
        assert_eq!(locate("/root/.ss*/id_*", &mut globs, &mut budget), ssh);
        let charged = left - budget.left();
        assert!(charged >= GLOB_WEIGHT, "{charged}");
        assert_eq!(locate("/root/.ss*/id_*", &mut globs, &mut budget), ssh);
        assert_eq!(left - budget.left(), charged);
        // Past the budget a glob that could reach a secret is its cut path, and the budget says
        // so; one already compiled is still known.
        budget.give_up();
        assert_eq!(locate("/root/.aw?", &mut globs, &mut budget), Place::Outside);
        assert!(budget.exhausted());
        assert_eq!(locate("/root/.ss*/id_*", &mut globs, &mut budget), ssh);
    }
}
