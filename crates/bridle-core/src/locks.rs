//! Per-path read/write locks for the file tools.
//!
//! Rules: locks are keyed by the resolved path; reads of one file share, a write excludes;
//! different paths never wait on each other, and a set of paths is locked in path order; an entry lives only while someone holds or waits
//! for it, so the table does not grow without bound.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

type Table = Mutex<HashMap<PathBuf, Arc<RwLock<()>>>>;

/// The lock table of one workspace.
#[derive(Debug, Default, Clone)]
pub struct PathLocks {
    table: Arc<Table>,
}

enum Held {
    Read(#[allow(dead_code)] OwnedRwLockReadGuard<()>),
    Write(#[allow(dead_code)] OwnedRwLockWriteGuard<()>),
}

/// A held lock; dropping it releases the lock and, if nobody else wants the path, its entry.
pub struct PathGuard {
    held: Option<Held>,
    key: PathBuf,
    table: Arc<Table>,
}

impl Drop for PathGuard {
    fn drop(&mut self) {
        // Release first: the guard owns one reference to the entry.
        self.held = None;
        if let Ok(mut table) = self.table.lock() {
            if table.get(&self.key).is_some_and(|entry| Arc::strong_count(entry) == 1) {
                table.remove(&self.key);
            }
        }
    }
}

impl PathLocks {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    fn entry(&self, path: &Path) -> Arc<RwLock<()>> {
        // A poisoned table only means another thread panicked while holding it; the map itself
        // is still consistent (every operation on it is a single insert or remove).
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        table.entry(path.to_path_buf()).or_default().clone()
    }

    /// Shared access to `path`.
    pub async fn read(&self, path: &Path) -> PathGuard {
        let lock = self.entry(path);
        let held = Held::Read(lock.read_owned().await);
        PathGuard { held: Some(held), key: path.to_path_buf(), table: self.table.clone() }
    }

    /// Exclusive access to `path`.
    pub async fn write(&self, path: &Path) -> PathGuard {
        let lock = self.entry(path);
        let held = Held::Write(lock.write_owned().await);
        PathGuard { held: Some(held), key: path.to_path_buf(), table: self.table.clone() }
    }

    /// Exclusive access to every one of `paths`, taken in path order (each once), so two callers
    /// locking overlapping sets never wait on each other in a circle.
    pub async fn write_all(&self, paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathGuard> {
        let mut paths: Vec<PathBuf> = paths.into_iter().collect();
        paths.sort();
        paths.dedup();
        let mut guards = Vec::with_capacity(paths.len());
        for path in &paths {
            guards.push(self.write(path).await);
        }
        guards
    }

    /// Entries in the table (held or awaited paths).
    pub fn len(&self) -> usize {
        self.table.lock().map(|t| t.len()).unwrap_or(0)
    }

    /// Whether no path is held or awaited.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn readers_share_and_a_writer_excludes() {
        let locks = PathLocks::new();
        let p = Path::new("/w/a.txt");
        let r1 = locks.read(p).await;
        // A second reader gets in at once.
        let r2 = tokio::time::timeout(Duration::from_secs(5), locks.read(p)).await.unwrap();
        // A writer waits for both readers.
        let writer = {
            let locks = locks.clone();
            tokio::spawn(async move { locks.write(Path::new("/w/a.txt")).await })
        };
        tokio::task::yield_now().await;
        assert!(!writer.is_finished());
        drop(r1);
        tokio::task::yield_now().await;
        assert!(!writer.is_finished());
        drop(r2);
        let w = tokio::time::timeout(Duration::from_secs(5), writer).await.unwrap().unwrap();
        // And a reader waits for the writer.
        let reader = {
            let locks = locks.clone();
            tokio::spawn(async move { locks.read(Path::new("/w/a.txt")).await })
        };
        tokio::task::yield_now().await;
        assert!(!reader.is_finished());
        drop(w);
        tokio::time::timeout(Duration::from_secs(5), reader).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn different_paths_never_wait_on_each_other() {
        let locks = PathLocks::new();
        let _a = locks.write(Path::new("/w/a")).await;
        let b = tokio::time::timeout(Duration::from_secs(5), locks.write(Path::new("/w/b"))).await;
        assert!(b.is_ok());
    }

    #[tokio::test]
    async fn the_table_is_empty_after_a_burst() {
        let locks = PathLocks::new();
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let locks = locks.clone();
                tokio::spawn(async move {
                    let path = PathBuf::from(format!("/w/{}", i % 7));
                    let _g = if i % 3 == 0 { locks.write(&path).await } else { locks.read(&path).await };
                    tokio::task::yield_now().await;
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert!(locks.is_empty(), "{} entries left", locks.len());
    }
}
