//! What reviewing a turn hunk by hunk costs (DESIGN §10.1, issue 40): listing a turn of 200 files
//! with 5,000 hunks (the first time, when the hunks are made and stored, and again), and
//! rejecting one hunk of a 100,000-line file (the reject and its undo, through the commit path).
//!
//! `cargo bench -p bridle-core --bench review`; prints the median of a few runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridle_core::changes::{self, BlobStore, ChangePlan, CommitScope, Reviewer, SessionFiles};
use bridle_core::clock::SystemClock;
use bridle_core::store::Store;
use bridle_core::workspace::Workspace;
use bridle_protocol::ReviewDecision;

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    store: Arc<Store>,
    files: Arc<SessionFiles>,
    workspace: Arc<Workspace>,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    let store = Arc::new(Store::open(&data.join("bridle.db")).unwrap());
    store.create_session("bench", &root.display().to_string(), 0).unwrap();
    let files = Arc::new(SessionFiles::new("bench", store.clone(), &data, Arc::new(SystemClock)));
    let workspace = Arc::new(Workspace::open(&root, None, &data, &[]).unwrap());
    World { _tmp: tmp, root, data, store, files, workspace }
}

impl World {
    /// One call of turn `t1` writing `after` over `rel`, through the commit path.
    async fn write(&self, rel: &str, after: String, call: usize) {
        let before = std::fs::read(self.root.join(rel)).ok();
        let plan = ChangePlan::one(PathBuf::from(rel), before, Some(after.into_bytes()));
        let scope = CommitScope {
            workspace: self.workspace.clone(),
            session_id: "bench".into(),
            turn_id: "t1".into(),
            call_id: format!("c{call}"),
            files: Some(self.files.clone()),
            writes: Arc::default(),
        };
        changes::commit(&plan, scope).await.unwrap();
    }
}

fn lines(n: usize, tag: &str, every: usize) -> String {
    (0..n)
        .map(|i| {
            if every > 0 && i % every == every / 2 {
                format!("{tag} line {i} changed\n")
            } else {
                format!("line {i} of the file, with some words\n")
            }
        })
        .collect()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    // A turn of 200 files, 25 hunks each.
    let w = world();
    for f in 0..200 {
        std::fs::write(w.root.join(format!("f{f}.txt")), lines(250, "", 0)).unwrap();
    }
    for f in 0..200 {
        w.write(&format!("f{f}.txt"), lines(250, "agent", 10), f).await;
    }
    let blobs = BlobStore::new(&w.data);
    let r = Reviewer { store: &w.store, blobs: &blobs, workspace: &w.workspace, session_id: "bench" };
    let started = Instant::now();
    let first = changes::review_turn(r, Some("t1")).unwrap();
    let made = started.elapsed();
    assert_eq!(first.hunks.len(), 5000);
    let again: Vec<Duration> = (0..5)
        .map(|_| {
            let started = Instant::now();
            let listed = changes::review_turn(r, Some("t1")).unwrap();
            assert_eq!(listed.hunks.len(), 5000);
            started.elapsed()
        })
        .collect();
    let json = serde_json::to_string(&first).unwrap().len();
    println!("list a turn of 200 files / 5,000 hunks: first (made and stored) {made:.2?}, again (median of 5) {:.2?}; answer {} KB of JSON", median(again), json / 1024);

    // One hunk of a 100,000-line file.
    let w = world();
    std::fs::write(w.root.join("big.txt"), lines(100_000, "", 0)).unwrap();
    let edited = lines(100_000, "", 0)
        .replace("line 10 of the file", "line ten of the file")
        .replace("line 50000 of the file", "line fifty thousand of the file")
        .replace("line 99990 of the file", "line 99990 of the edited file");
    w.write("big.txt", edited, 0).await;
    let blobs = BlobStore::new(&w.data);
    let r = Reviewer { store: &w.store, blobs: &blobs, workspace: &w.workspace, session_id: "bench" };
    let listed = changes::review_turn(r, Some("t1")).unwrap();
    assert_eq!(listed.hunks.len(), 3);
    let id = vec![listed.hunks[1].id.clone()];
    let mut rejects = Vec::new();
    let mut unrejects = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        changes::decide(r, w.files.clone(), ReviewDecision::Reject, &id, 0).await.unwrap();
        rejects.push(started.elapsed());
        let started = Instant::now();
        changes::decide(r, w.files.clone(), ReviewDecision::Unreject, &id, 0).await.unwrap();
        unrejects.push(started.elapsed());
    }
    println!(
        "reject one hunk of a 100,000-line file (median of 5): reject {:.2?}, undo the reject {:.2?}",
        median(rejects),
        median(unrejects)
    );
}
