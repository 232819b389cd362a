//! Content-addressed blobs under `<data-dir>/blobs/`: the bytes a checkpoint keeps.
//!
//! Rules: a blob's name is the SHA-256 of its content, so the same content is stored once
//! however often it is kept; it is stored deflated (fast level: source text shrinks several
//! times for a few milliseconds per megabyte); a blob is written to a temp file, fsynced and
//! renamed, so a crash leaves a whole blob or none (a batch streamed for one command is synced
//! once, with [`BlobStore::sync`], before anything it protects is written); a blob read back is inflated and checked
//! against its name; blobs no row refers to any more are collected with the sessions that kept
//! them.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::Digest as _;

use super::blob_name;

/// Content up to this size is read whole before it is kept (so known content is not written).
const SMALL: u64 = 1 << 20;

/// The blob folder of one data dir.
#[derive(Debug, Clone)]
pub struct BlobStore {
    root: PathBuf,
}

impl BlobStore {
    /// The store in `<data_dir>/blobs` (created on first write).
    pub fn new(data_dir: &Path) -> Self {
        Self { root: data_dir.join("blobs") }
    }

    fn path(&self, hash: &str) -> Option<PathBuf> {
        let valid = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        valid.then(|| self.root.join(&hash[..2]).join(&hash[2..]))
    }

    /// Keeps `bytes`; returns their hash (hex). Already kept content is not written again.
    pub fn put(&self, bytes: &[u8]) -> io::Result<String> {
        self.put_bytes(bytes, true)
    }

    /// [`Self::put`], synced at once only when `sync`.
    fn put_bytes(&self, bytes: &[u8], sync: bool) -> io::Result<String> {
        let hash = blob_name(bytes);
        let path = self.path(&hash).ok_or_else(|| io::Error::other("bad blob hash"))?;
        if path.exists() {
            return Ok(hash);
        }
        let dir = path.parent().ok_or_else(|| io::Error::other("blob without a folder"))?;
        std::fs::create_dir_all(dir)?;
        let temp = dir.join(format!(".{}.{:016x}.tmp", &hash[2..], rand::random::<u64>()));
        let written = (|| {
            let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
            let mut deflate = flate2::write::DeflateEncoder::new(file, flate2::Compression::fast());
            deflate.write_all(bytes)?;
            let file = deflate.finish()?;
            if sync {
                file.sync_all()?;
            }
            std::fs::rename(&temp, &path)?;
            if sync {
                std::fs::File::open(dir)?.sync_all()?;
            }
            Ok(())
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written.map(|()| hash)
    }

    /// Keeps what `reader` holds, streamed (never loaded whole); returns its hash (hex). Not
    /// synced: [`Self::sync`] makes a batch of them durable.
    pub fn put_stream(&self, reader: impl io::Read) -> io::Result<String> {
        // Most content is small: read whole, it is named first and not written when already kept.
        let mut head = Vec::new();
        let mut reader = reader;
        io::Read::read_to_end(&mut io::Read::take(&mut reader, SMALL + 1), &mut head)?;
        if head.len() as u64 <= SMALL {
            return self.put_bytes(&head, false);
        }
        let mut reader = io::Read::chain(&head[..], reader);
        std::fs::create_dir_all(&self.root)?;
        let temp = self.root.join(format!(".stream.{:016x}.tmp", rand::random::<u64>()));
        let written = (|| {
            let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
            let mut deflate = flate2::write::DeflateEncoder::new(file, flate2::Compression::fast());
            let mut hasher = sha2::Sha256::new();
            let mut buf = vec![0u8; 256 * 1024];
            loop {
                let n = io::Read::read(&mut reader, &mut buf)?;
                if n == 0 {
                    break;
                }
                sha2::Digest::update(&mut hasher, &buf[..n]);
                deflate.write_all(&buf[..n])?;
            }
            deflate.finish()?;
            let hash = super::hex(&sha2::Digest::finalize(hasher));
            let path = self.path(&hash).ok_or_else(|| io::Error::other("bad blob hash"))?;
            let dir = path.parent().ok_or_else(|| io::Error::other("blob without a folder"))?;
            std::fs::create_dir_all(dir)?;
            if path.exists() {
                std::fs::remove_file(&temp)?;
            } else {
                std::fs::rename(&temp, &path)?;
            }
            Ok(hash)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    /// The content named `hash`; an error when it is missing or does not match its name.
    pub fn get(&self, hash: &str) -> io::Result<Vec<u8>> {
        let path = self.path(hash).ok_or_else(|| io::Error::other(format!("`{hash}` is not a blob name")))?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut flate2::read::DeflateDecoder::new(std::fs::File::open(&path)?), &mut bytes)
            .map_err(|e| io::Error::other(format!("blob {hash} is corrupt ({e})")))?;
        if blob_name(&bytes) != hash {
            return Err(io::Error::other(format!("blob {hash} is corrupt (its content does not match its name)")));
        }
        Ok(bytes)
    }

    /// Makes every blob written so far durable: one `syncfs` of the file system they are on.
    pub fn sync(&self) -> io::Result<()> {
        match std::fs::File::open(&self.root) {
            Ok(dir) => rustix::fs::syncfs(&dir).map_err(io::Error::from),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The content named `hash`, streamed: its reader fails at the end when what it read does
    /// not match the name (so a write from it is never completed with a corrupt blob).
    pub fn reader(&self, hash: &str) -> io::Result<impl io::Read> {
        let path = self.path(hash).ok_or_else(|| io::Error::other(format!("`{hash}` is not a blob name")))?;
        let file = std::fs::File::open(&path)?;
        Ok(Checked {
            inner: flate2::read::DeflateDecoder::new(file),
            hasher: Some(sha2::Sha256::new()),
            want: hash.to_string(),
        })
    }

    /// Removes every blob not in `referenced`, and temp files left by a crash; returns how
    /// many blobs went.
    pub fn collect(&self, referenced: &HashSet<String>) -> io::Result<usize> {
        let mut removed = 0;
        let shards = match std::fs::read_dir(&self.root) {
            Ok(shards) => shards,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        for shard in shards {
            let shard = shard?;
            let prefix = shard.file_name().to_string_lossy().into_owned();
            if !shard.file_type()?.is_dir() {
                // A large blob streamed when its process crashed.
                if prefix.starts_with(".stream.") && prefix.ends_with(".tmp") {
                    std::fs::remove_file(shard.path())?;
                }
                continue;
            }
            for entry in std::fs::read_dir(shard.path())? {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let hash = format!("{prefix}{name}");
                if name.starts_with('.') || !referenced.contains(&hash) {
                    std::fs::remove_file(entry.path())?;
                    removed += usize::from(!name.starts_with('.'));
                }
            }
            // An empty shard goes too (fails harmlessly when not empty).
            let _ = std::fs::remove_dir(shard.path());
        }
        Ok(removed)
    }

    /// Bytes the blobs take on disk (for the benchmark and `bridle` figures).
    pub fn size(&self) -> io::Result<u64> {
        let mut total = 0;
        let Ok(shards) = std::fs::read_dir(&self.root) else { return Ok(0) };
        for shard in shards.flatten() {
            if let Ok(entries) = std::fs::read_dir(shard.path()) {
                for entry in entries.flatten() {
                    total += entry.metadata()?.len();
                }
            }
        }
        Ok(total)
    }
}

/// A blob's content as it is inflated, checked against its name at the end.
struct Checked<R> {
    inner: R,
    hasher: Option<sha2::Sha256>,
    want: String,
}

impl<R: io::Read> io::Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf).map_err(|e| io::Error::other(format!("blob {} is corrupt ({e})", self.want)))?;
        if n > 0 {
            if let Some(hasher) = &mut self.hasher {
                sha2::Digest::update(hasher, &buf[..n]);
            }
        } else if let Some(hasher) = self.hasher.take() {
            if super::hex(&sha2::Digest::finalize(hasher)) != self.want {
                return Err(io::Error::other(format!(
                    "blob {} is corrupt (its content does not match its name)",
                    self.want
                )));
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn read_all(mut r: impl io::Read) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        r.read_to_end(&mut out).map(|_| out)
    }

    #[test]
    fn streamed_content_small_or_large_comes_back_whole_and_a_corrupt_blob_fails_its_reader() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobStore::new(dir.path());
        let large: Vec<u8> = (0..3 * (1u32 << 20)).map(|i| (i % 251) as u8).collect();
        let small = b"small content".to_vec();
        for content in [&large, &small] {
            let hash = blobs.put_stream(&content[..]).unwrap();
            assert_eq!(hash, blob_name(content));
            assert_eq!(&read_all(blobs.reader(&hash).unwrap()).unwrap(), content);
            // Kept again: the same name, nothing new on disk.
            let before = blobs.size().unwrap();
            assert_eq!(blobs.put_stream(&content[..]).unwrap(), hash);
            assert_eq!(blobs.size().unwrap(), before);
        }
        blobs.sync().unwrap();
        // What a crash mid-stream leaves is collected; kept blobs are not.
        std::fs::write(dir.path().join("blobs/.stream.0123456789abcdef.tmp"), b"partial").unwrap();
        let kept: HashSet<String> = [blob_name(&large), blob_name(&small)].into_iter().collect();
        assert_eq!(blobs.collect(&kept).unwrap(), 0);
        assert!(!dir.path().join("blobs/.stream.0123456789abcdef.tmp").exists());
        assert!(blobs.reader(&blob_name(&large)).is_ok());
        // A blob whose content no longer matches its name: the reader fails at its end.
        let hash = blob_name(&small);
        let path = blobs.path(&hash).unwrap();
        let other = blobs.put(b"other content").unwrap();
        std::fs::copy(blobs.path(&other).unwrap(), &path).unwrap();
        assert!(read_all(blobs.reader(&hash).unwrap()).unwrap_err().to_string().contains("corrupt"));
    }
}
