//! What a captured command changed, sorted into what lands how (DESIGN §4.3): its layer's
//! effects ([`super::read_layer`]) become a [`Landing`].
//!
//! - Ignored paths (`.gitignore`, `.ignore`, the scratch folders) and git's own data land at
//!   once, without checkpoints, summarised ([`Landing::land_free`]).
//! - Everything else is a list of [`Step`]s — each path's state before and after, a symlink as a
//!   link, a mode as a mode — that lands only through [`Landing::land_held`], with checkpoints,
//!   when the call's owner lets it (at once, or after a person approved its diff), or is
//!   dropped with the layer.
//! - What can make the user's git run code is held with the steps, and named: git's
//!   code-running files, a nested repository, a gitlink added to the index, a link where git
//!   reads a file. Files that make code run later are held even in ignored paths. A folder that
//!   holds any of these never lands whole: each child is judged first.
//!
//! Rule: a path the user (or anything else) changed while the command ran is never landed over:
//! it is refused by name, and the user's version stays. What the layer refused (special files,
//! hard links) never lands.

mod apply;
mod git;
mod ignored;

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use super::{shown, Effect, EffectKind, LayerRead};
use crate::fs::{Entry, WorkspaceFs};

pub use apply::Landed;

/// What stands at a path, before or after a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Nothing.
    Absent,
    /// A regular file with these permission bits and size.
    File {
        /// Permission bits.
        mode: u32,
        /// Size in bytes.
        size: u64,
    },
    /// A symlink with this target, as written.
    Link(PathBuf),
    /// A folder with these permission bits.
    Folder {
        /// Permission bits.
        mode: u32,
    },
}

impl State {
    /// What `entry` is (`None`: a FIFO, socket or device, which no change lands on).
    pub(crate) fn of(entry: Option<Entry>) -> Option<State> {
        Some(match entry {
            None => State::Absent,
            Some(Entry::File { mode, size }) => State::File { mode, size },
            Some(Entry::Link(target)) => State::Link(target),
            Some(Entry::Folder { mode }) => State::Folder { mode },
            Some(Entry::Special) => return None,
        })
    }

    /// The mode a checkpoint row keeps: permission bits for a file, with the type for a link
    /// or a folder (`None`: absent).
    pub(crate) fn row_mode(&self) -> Option<u32> {
        match self {
            State::Absent => None,
            State::File { mode, .. } => Some(*mode),
            State::Link(_) => Some(libc::S_IFLNK | 0o777),
            State::Folder { mode } => Some(libc::S_IFDIR | mode),
        }
    }
}

/// One path a command changed, to land with a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Workspace-relative path.
    pub rel: PathBuf,
    /// What stood there when the command ended.
    pub before: State,
    /// What the command left.
    pub after: State,
    /// Whether the content after is the layer's (not only a mode change).
    pub content: bool,
    /// A new folder that lands whole, with all it holds (no step for what is below it).
    pub whole: bool,
    /// For a folder that lands whole: the files (links count) and bytes it holds.
    inside: (usize, u64),
    /// When what stood there last changed (ns), to tell an edit made since.
    changed_at: Option<i128>,
}

impl Step {
    /// The workspace-relative POSIX path.
    pub fn shown(&self) -> String {
        shown(&self.rel)
    }

    /// Whether a symlink stands there before or after.
    pub fn is_link(&self) -> bool {
        matches!(self.before, State::Link(_)) || matches!(self.after, State::Link(_))
    }
}

/// A command's layer, sorted.
#[derive(Debug)]
pub struct Landing {
    upper: PathBuf,
    root: PathBuf,
    started_ns: i128,
    /// Checkpointed changes, in path order.
    pub steps: Vec<Step>,
    /// What can make the user's git run code: its code-running files, a nested repository, a
    /// gitlink added to the index, a link where git reads a file. Held with the steps.
    pub git_config: Vec<Step>,
    /// Files in ignored paths that make code run later (`node_modules/.bin/`, a `.pth` file, a
    /// virtualenv's `activate`, `.vscode/`): held with the steps rather than landed unseen.
    pub ignored_code: Vec<Step>,
    /// Ignored paths and git's data: landed without checkpoints.
    free: Vec<Step>,
    /// Paths below `.git` among `free`.
    git_changed: Vec<String>,
    /// Each path that will not land, and why.
    pub refused: Vec<(String, String)>,
}

/// What landed without a question.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Free {
    /// Files (and links) written to ignored paths.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// What git's own files amount to.
    pub git: Vec<String>,
    /// What could not land, and why.
    pub refused: Vec<(String, String)>,
}

impl Landing {
    /// Sorts `read`, the layer at `upper` over `fs`'s workspace, for a command started at
    /// `started_ns` (ns since the epoch); `scratch` are the folders written through.
    pub fn sort(read: LayerRead, upper: &Path, fs: &WorkspaceFs, scratch: &[String], started_ns: i128) -> Landing {
        let mut landing = Landing {
            upper: upper.to_path_buf(),
            root: fs.root_path().to_path_buf(),
            started_ns,
            steps: Vec::new(),
            git_config: Vec::new(),
            ignored_code: Vec::new(),
            free: Vec::new(),
            git_changed: Vec::new(),
            refused: read.refused.iter().map(|r| (shown(&r.rel), r.why.to_string())).collect(),
        };
        let mut rules = ignored::Rules::new(fs.root_path(), scratch);
        // What must be judged wherever it lands, and the folders that hold it: such a folder is
        // never moved whole, so each child is judged first.
        let judged: Vec<PathBuf> =
            read.effects.iter().map(|e| e.rel.clone()).filter(|rel| must_be_judged(rel)).collect();
        let holds_judged = |folder: &Path| judged.iter().any(|j| j.starts_with(folder) && *j != folder);
        // A new folder that lands whole (ignored output, git's data): what is below it needs
        // no step of its own. Not when the layer refused something in it.
        let mut whole: Option<PathBuf> = None;
        for effect in read.effects {
            if whole.as_ref().is_some_and(|w| effect.rel.starts_with(w)) {
                if let (Some(folder), false) = (landing.free.last_mut(), effect.kind == EffectKind::Folder) {
                    folder.inside.0 += 1;
                    folder.inside.1 += effect.bytes;
                }
                continue;
            }
            let mut steps = match landing.steps_of(&effect, fs) {
                Ok(steps) => steps,
                Err(why) => {
                    landing.refused.push((shown(&effect.rel), why));
                    continue;
                }
            };
            let git_inner = effect.rel.strip_prefix(".git").ok().map(shown).filter(|s| !s.is_empty());
            let is_dir = matches!(effect.kind, EffectKind::Folder);
            let movable =
                is_dir && !read.refused.iter().any(|r| r.rel.starts_with(&effect.rel)) && !holds_judged(&effect.rel);
            let is_link = matches!(effect.kind, EffectKind::Link(_));
            let mut free = |landing: &mut Landing, mut steps: Vec<Step>| {
                if movable {
                    whole = Some(effect.rel.clone());
                    steps.iter_mut().for_each(|s| s.whole = true);
                }
                landing.free.extend(steps);
            };
            if effect.rel == Path::new(".git") && !is_dir || git::nested_repository(&effect.rel) {
                // `.git` as a file names another repository; a repository below the root is one
                // the user's git would enter (and run its config's commands): held.
                landing.git_config.append(&mut steps);
            } else if let Some(inner) = git_inner {
                // A link where git reads a file (`HEAD` to `/dev/zero`) is never git's own doing.
                if git::runs_code(&inner) || is_link {
                    landing.git_config.append(&mut steps);
                } else {
                    if !is_dir {
                        landing.git_changed.push(inner);
                    }
                    free(&mut landing, steps);
                }
            } else if effect.rel == Path::new(".git") {
                // A new repository: its data lands, its config and hooks are held (so it is
                // never moved whole).
                landing.free.extend(steps);
            } else if rules.ignores(&effect.rel, is_dir) {
                if !is_dir && crate::config::is_exec_config(&shown(&effect.rel)) {
                    landing.ignored_code.append(&mut steps);
                } else {
                    free(&mut landing, steps);
                }
            } else {
                landing.steps.extend(steps);
            }
        }
        landing.hold_new_gitlinks(fs);
        landing
    }

    /// A gitlink added to the index makes the user's git enter that path as a submodule (and
    /// run what its repository's config names): the index is then held with git's config. An
    /// index that cannot be read is held too.
    fn hold_new_gitlinks(&mut self, fs: &WorkspaceFs) {
        let Some(at) = self.free.iter().position(|s| s.rel == Path::new(".git/index")) else { return };
        let index = Path::new(".git/index");
        // Each beneath its own root: no link out of the workspace or the layer is followed, and
        // nothing waits on a special file or reads past the index's limit.
        let read =
            |fs: &WorkspaceFs| fs.read_at_most(index, MAX_INDEX_BYTES).ok().flatten().and_then(|b| git::gitlinks(&b));
        let before = read(fs).unwrap_or_default();
        let layer = WorkspaceFs::open(&self.upper).ok().and_then(|upper| read(&upper));
        let added = match layer {
            Some(after) => after.difference(&before).next().is_some(),
            None => true,
        };
        if added {
            let step = self.free.remove(at);
            self.git_changed.retain(|c| c != "index");
            self.git_config.push(step);
        }
    }

    /// The steps one effect needs: a deleted or replaced folder's content is deleted path by
    /// path (deepest first), so undo can bring each back.
    fn steps_of(&self, effect: &Effect, fs: &WorkspaceFs) -> Result<Vec<Step>, String> {
        let rel = &effect.rel;
        let entry = fs.entry(rel).map_err(|e| e.to_string())?;
        let before = State::of(entry).ok_or("a FIFO, socket or device stands there in the workspace")?;
        let changed_at = fs.changed_at(rel).ok().flatten();
        let upper = self.upper.join(rel);
        let after = match &effect.kind {
            EffectKind::Deleted => State::Absent,
            EffectKind::Link(target) => State::Link(target.clone()),
            EffectKind::Folder => State::Folder { mode: effect.mode.unwrap_or(0o755) },
            EffectKind::Created | EffectKind::Modified | EffectKind::ModeChanged | EffectKind::Replaced => {
                let meta = upper.symlink_metadata().map_err(|e| e.to_string())?;
                if meta.is_dir() {
                    State::Folder { mode: meta.mode() & 0o7777 }
                } else {
                    State::File { mode: meta.mode() & 0o7777, size: meta.len() }
                }
            }
        };
        let content = !matches!(effect.kind, EffectKind::ModeChanged);
        let mut steps = Vec::new();
        if matches!(before, State::Folder { .. }) && !matches!(after, State::Folder { .. }) {
            below(fs, rel, &mut steps);
        }
        steps.push(Step { rel: rel.clone(), before, after, content, whole: false, inside: (0, 0), changed_at });
        Ok(steps)
    }

    /// The held part: the steps, git's code-running files, then ignored files that run code.
    fn held(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().chain(&self.git_config).chain(&self.ignored_code)
    }

    /// The held paths.
    pub fn held_paths(&self) -> Vec<String> {
        self.held().map(Step::shown).collect()
    }

    /// The diff a person approving reads (what is not text is named, with its size).
    pub fn diff(&self) -> String {
        let open = |root: &Path| WorkspaceFs::open(root).map_err(|e| e.to_string());
        let (layer, workspace) = (open(&self.upper), open(&self.root));
        let (layer, workspace) = (layer.as_ref().map_err(String::as_str), workspace.as_ref().map_err(String::as_str));
        self.held().filter_map(|s| apply::diff_of(s, layer, workspace)).collect()
    }
}

/// Whether a path in a layer is judged wherever it lands (ignored or not): a nested repository
/// or a file that makes code run later.
fn must_be_judged(rel: &Path) -> bool {
    git::nested_repository(rel) || crate::config::is_exec_config(&shown(rel))
}

/// An index is read whole to find its gitlinks; one larger than this is held unread.
const MAX_INDEX_BYTES: u64 = 256 << 20;

/// Every path below the workspace folder `rel`, as deleted steps, deepest first (read through
/// `fs/`: a link below is a link, never a way further down).
fn below(fs: &WorkspaceFs, rel: &Path, steps: &mut Vec<Step>) {
    let Ok(Some(names)) = fs.names(rel) else { return };
    for name in names {
        let child = rel.join(name);
        let before = match fs.entry(&child) {
            Ok(Some(Entry::Link(target))) => State::Link(target),
            Ok(Some(Entry::Folder { mode })) => {
                below(fs, &child, steps);
                State::Folder { mode }
            }
            Ok(Some(Entry::File { mode, size })) => State::File { mode, size },
            _ => continue,
        };
        steps.push(Step {
            rel: child.clone(),
            before,
            after: State::Absent,
            content: true,
            whole: false,
            inside: (0, 0),
            changed_at: fs.changed_at(&child).ok().flatten(),
        });
    }
}

/// A command's changes waiting for the call's owner (keeps the command's layer alive).
pub struct Held {
    /// The changes, sorted.
    pub landing: Arc<Landing>,
    /// What must live until they land or are dropped (the layer they are read from).
    pub keep: Box<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").field("landing", &self.landing).finish_non_exhaustive()
    }
}
