//! Bucketed temporary storage: every writer appends to a file of its own, in chunks of whole
//! records, each chunk tagged with its bucket in an index kept in memory (16 bytes a chunk);
//! reading a bucket reads its chunks back. Many writers (threads) can fill the same buckets
//! without locks or one file per bucket, and a writer's chunks of one bucket stay in the
//! order it wrote them. Without a temporary folder the same chunks stay in memory (small runs,
//! tests, and callers that asked for no bound). A spill made [`Spill::compressed`] stores each
//! chunk of its files as an LZ4 block when that is smaller (the super-k-mers of a pangenome:
//! a writer's chunk of a bucket holds the same sequences from several related genomes).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::AssemblyError;
use crate::temp::TempSpace;

/// Where one chunk lies.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    file: u32,
    /// Bytes stored.
    len: u32,
    /// Bytes of records: `len` unless the chunk is stored as an LZ4 block.
    raw: u32,
    offset: u64,
}

/// The largest chunk written at once (records are never split across chunks).
const MAX_CHUNK: usize = 1 << 30;

/// The largest chunk a compressed spill stores as an LZ4 block (larger ones, written once
/// with `write_direct`, stay as they are): what a writer or a reader holds beside the records.
const MAX_BLOCK: usize = 1 << 20;

thread_local! {
    /// A reader thread's LZ4 block, read before it is inflated (at most [`MAX_BLOCK`] bytes).
    static BLOCK: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Where a writer's chunks are: a file, or memory.
#[derive(Debug)]
enum Store {
    File(PathBuf, File),
    Memory(Vec<u8>),
}

/// A set of buckets stored in temporary files (or in memory).
#[derive(Debug)]
pub(crate) struct Spill {
    name: String,
    /// The folder of the files; `None` keeps everything in memory.
    dir: Option<PathBuf>,
    index: Mutex<Vec<Vec<Chunk>>>,
    files: Mutex<Vec<Arc<Store>>>,
    /// Bytes of records per bucket (what readers hold; the files may be smaller).
    sizes: Vec<AtomicU64>,
    /// Whether chunks written to files are stored as LZ4 blocks when smaller.
    compress: bool,
}

fn disk(path: &std::path::Path, error: std::io::Error) -> AssemblyError {
    AssemblyError::Disk {
        path: path.to_path_buf(),
        error,
    }
}

impl Spill {
    /// An empty set of `buckets` buckets whose files are `<space>/<name>-<writer>`, or kept
    /// in memory without a temporary folder.
    pub(crate) fn new(space: Option<&TempSpace>, name: &str, buckets: usize) -> Spill {
        Spill {
            name: name.to_string(),
            dir: space.map(|s| s.file("")),
            index: Mutex::new(vec![Vec::new(); buckets]),
            files: Mutex::new(Vec::new()),
            sizes: (0..buckets).map(|_| AtomicU64::new(0)).collect(),
            compress: false,
        }
    }

    /// This spill, its file chunks of at most a megabyte stored as LZ4 blocks when that is
    /// smaller (in memory they stay as they are): a reader holds a chunk's block beside its
    /// records.
    pub(crate) fn compressed(mut self) -> Spill {
        self.compress = self.dir.is_some();
        self
    }

    /// The number of buckets.
    pub(crate) fn buckets(&self) -> usize {
        self.sizes.len()
    }

    /// Bytes of records in bucket `b`.
    pub(crate) fn bucket_bytes(&self, b: usize) -> u64 {
        self.sizes[b].load(Ordering::Relaxed)
    }

    /// Bytes of records in all buckets.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.sizes.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }

    /// A new writer with its own file; each bucket's records are buffered up to `cap` bytes.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when the file cannot be created.
    pub(crate) fn writer(&self, cap: usize) -> Result<SpillWriter<'_>, AssemblyError> {
        let mut files = self.files.lock().expect("spill files");
        let id = files.len() as u32;
        let out = match &self.dir {
            Some(dir) => {
                let path = dir.join(format!("{}-{id}", self.name));
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&path)
                    .map_err(|e| disk(&path, e))?;
                let reader = file.try_clone().map_err(|e| disk(&path, e))?;
                files.push(Arc::new(Store::File(path.clone(), reader)));
                Store::File(path, file)
            }
            None => {
                // filled in by `finish`
                files.push(Arc::new(Store::Memory(Vec::new())));
                Store::Memory(Vec::new())
            }
        };
        drop(files);
        Ok(SpillWriter {
            spill: self,
            id,
            out,
            offset: 0,
            bufs: vec![Vec::new(); self.buckets()],
            cap: cap.max(64),
            chunks: Vec::new(),
            block: Vec::new(),
            combine: None,
            combined: Vec::new(),
        })
    }

    /// Calls `f` with each chunk of bucket `b` in turn (whole records, in the order each
    /// writer wrote them), read into `scratch`.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for a failed read; the first error of `f`.
    pub(crate) fn for_each_chunk(
        &self,
        b: usize,
        scratch: &mut Vec<u8>,
        f: &mut dyn FnMut(&[u8]) -> Result<(), AssemblyError>,
    ) -> Result<(), AssemblyError> {
        let chunks = self.index.lock().expect("spill index")[b].clone();
        for c in chunks {
            self.read_chunk(c, scratch)?;
            f(scratch)?;
        }
        Ok(())
    }

    /// The number of chunks of bucket `b`.
    pub(crate) fn chunk_count(&self, b: usize) -> usize {
        self.index.lock().expect("spill index")[b].len()
    }

    /// Chunk `i` of bucket `b` (whole records), into `into`.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for a failed read.
    pub(crate) fn read_chunk_of(
        &self,
        b: usize,
        i: usize,
        into: &mut Vec<u8>,
    ) -> Result<(), AssemblyError> {
        let c = self.index.lock().expect("spill index")[b][i];
        self.read_chunk(c, into)
    }

    /// Bytes `offset..offset + out.len()` of bucket `b` (its chunks back to back) into `out`.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for a failed read; [`AssemblyError::Internal`] past the end.
    pub(crate) fn read_range(
        &self,
        b: usize,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), AssemblyError> {
        let chunks = self.index.lock().expect("spill index")[b].clone();
        let mut at = 0u64; // bucket offset of the current chunk
        let mut done = 0usize;
        let mut whole = Vec::new();
        for c in chunks {
            let end = at + c.raw as u64;
            let want = offset + done as u64;
            if done < out.len() && want < end {
                let from = (want - at) as usize;
                let take = ((end - want) as usize).min(out.len() - done);
                let dst = &mut out[done..done + take];
                if c.len == c.raw {
                    let part = Chunk {
                        len: take as u32,
                        raw: take as u32,
                        offset: c.offset + from as u64,
                        ..c
                    };
                    self.load(part, dst)?;
                } else {
                    whole.resize(c.raw as usize, 0);
                    self.load(c, &mut whole)?;
                    dst.copy_from_slice(&whole[from..from + take]);
                }
                done += take;
            }
            at = end;
            if done == out.len() {
                return Ok(());
            }
        }
        Err(AssemblyError::Internal(format!(
            "read past the end of bucket {b} of {}",
            self.name
        )))
    }

    /// All of bucket `b`, its chunks back to back, into `out` (cleared first).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for a failed read.
    pub(crate) fn read(&self, b: usize, out: &mut Vec<u8>) -> Result<(), AssemblyError> {
        let chunks = self.index.lock().expect("spill index")[b].clone();
        let total: usize = chunks.iter().map(|c| c.raw as usize).sum();
        out.clear();
        out.resize(total, 0);
        let mut at = 0;
        for c in chunks {
            self.load(c, &mut out[at..at + c.raw as usize])?;
            at += c.raw as usize;
        }
        Ok(())
    }

    fn read_chunk(&self, c: Chunk, into: &mut Vec<u8>) -> Result<(), AssemblyError> {
        into.clear();
        into.resize(c.raw as usize, 0);
        self.load(c, into)
    }

    /// The records of chunk `c` into `dst` (`c.raw` bytes), inflated when stored as a block.
    fn load(&self, c: Chunk, dst: &mut [u8]) -> Result<(), AssemblyError> {
        let f = Arc::clone(&self.files.lock().expect("spill files")[c.file as usize]);
        let range = c.offset as usize..c.offset as usize + c.len as usize;
        if c.len == c.raw {
            return match &*f {
                Store::File(path, file) => {
                    file.read_exact_at(dst, c.offset).map_err(|e| disk(path, e))
                }
                Store::Memory(v) => {
                    dst.copy_from_slice(&v[range]);
                    Ok(())
                }
            };
        }
        let Store::File(path, file) = &*f else {
            return Err(AssemblyError::Internal(format!(
                "a compressed chunk in memory in {}",
                self.name
            )));
        };
        BLOCK.with_borrow_mut(|block| {
            block.resize(c.len as usize, 0);
            file.read_exact_at(block, c.offset)
                .map_err(|e| disk(path, e))?;
            match lz4_flex::block::decompress_into(block, dst) {
                Ok(n) if n == dst.len() => Ok(()),
                _ => Err(disk(
                    path,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "a block of this temporary file does not inflate to its records",
                    ),
                )),
            }
        })
    }

    /// Removes the files now (they are removed with the temporary folder anyway).
    pub(crate) fn remove(self) {
        drop(self);
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        if let Ok(files) = self.files.lock() {
            for f in files.iter() {
                if let Store::File(p, _) = &**f {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }
}

/// What a writer does to a full buffer before it writes it out ([`SpillWriter::combining`]):
/// rewrites its records as fewer that its readers take for the same (the occurrences of equal
/// keys merged into one record).
pub(crate) trait Combine: Send {
    /// Rewrites the whole records of `records` in place.
    fn combine(&mut self, records: &mut Vec<u8>);
}

/// One writer of a [`Spill`]: a buffer per bucket, flushed as a chunk to the writer's file
/// when it reaches the cap; [`SpillWriter::finish`] flushes the rest and publishes the chunks.
pub(crate) struct SpillWriter<'s> {
    spill: &'s Spill,
    id: u32,
    out: Store,
    offset: u64,
    bufs: Vec<Vec<u8>>,
    cap: usize,
    chunks: Vec<(u32, Chunk)>,
    /// An LZ4 block being made, for a compressed spill.
    block: Vec<u8>,
    /// Applied to a full buffer before it is written ([`SpillWriter::combining`]).
    combine: Option<Box<dyn Combine>>,
    /// Per bucket, the length of its buffer after the last combination (0 after a flush), or
    /// `usize::MAX` once it is no longer combined: after a combination that failed to remove
    /// half of the bytes added since the one before (the records of such a bucket seldom
    /// repeat within a buffer, and combining them again would only cost time).
    combined: Vec<usize>,
}

impl SpillWriter<'_> {
    /// This writer, each full buffer first rewritten by `c`: written out only when that leaves
    /// it at least half full, so that each record is combined at most about twice on average
    /// (a buffer's records before the rest of it fills again). A bucket where `c` removes
    /// less than half of the bytes added since its last combination is no longer combined.
    pub(crate) fn combining(mut self, c: Box<dyn Combine>) -> Self {
        self.combine = Some(c);
        self.combined = vec![0; self.bufs.len()];
        self
    }

    /// Rewrites bucket `b`'s buffer with the combiner, if the bucket is still combined;
    /// returns whether it did.
    fn combine(&mut self, b: usize) -> bool {
        let Some(c) = &mut self.combine else {
            return false;
        };
        let last = self.combined[b];
        if last == usize::MAX {
            return false;
        }
        let before = self.bufs[b].len();
        c.combine(&mut self.bufs[b]);
        let after = self.bufs[b].len();
        self.combined[b] = if 2 * (before - after) < before - last {
            usize::MAX
        } else {
            after
        };
        true
    }

    /// Appends one record to bucket `b` (flushed with the bucket's buffer once it is full).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when a flush fails.
    #[inline]
    pub(crate) fn push(&mut self, b: usize, record: &[u8]) -> Result<(), AssemblyError> {
        let buf = &mut self.bufs[b];
        if buf.capacity() == 0 {
            buf.reserve_exact(self.cap + record.len());
        }
        buf.extend_from_slice(record);
        if buf.len() >= self.cap {
            self.full(b)?;
        }
        Ok(())
    }

    /// Bucket `b`'s buffer is full: combined, and flushed unless that left it under half full.
    fn full(&mut self, b: usize) -> Result<(), AssemblyError> {
        if self.combine(b) && self.bufs[b].len() < self.cap / 2 {
            return Ok(());
        }
        self.flush(b)
    }

    /// The buffer of bucket `b`, to append one whole record to; call
    /// [`SpillWriter::record_done`] after each record.
    #[inline]
    pub(crate) fn buffer(&mut self, b: usize) -> &mut Vec<u8> {
        let buf = &mut self.bufs[b];
        if buf.capacity() == 0 {
            buf.reserve_exact(self.cap + 256);
        }
        buf
    }

    /// Flushes bucket `b`'s buffer when it is full.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when the flush fails.
    #[inline]
    pub(crate) fn record_done(&mut self, b: usize) -> Result<(), AssemblyError> {
        if self.bufs[b].len() >= self.cap {
            self.full(b)?;
        }
        Ok(())
    }

    /// Flushes bucket `b`'s buffer and frees it (a writer that fills one bucket at a time
    /// then holds one buffer, not one per bucket).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when the write fails.
    pub(crate) fn close_bucket(&mut self, b: usize) -> Result<(), AssemblyError> {
        if !self.bufs[b].is_empty() {
            self.combine(b);
            self.flush(b)?;
        }
        self.bufs[b] = Vec::new();
        Ok(())
    }

    /// Writes `bytes` (whole records) to bucket `b` directly, unbuffered (large arrays written
    /// once).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when the write fails.
    pub(crate) fn write_direct(&mut self, b: usize, bytes: &[u8]) -> Result<(), AssemblyError> {
        for piece in bytes.chunks(MAX_CHUNK) {
            self.write_chunk(b, piece)?;
        }
        Ok(())
    }

    fn write_chunk(&mut self, b: usize, bytes: &[u8]) -> Result<(), AssemblyError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut stored = bytes;
        // (`compress` is set only for spills with files)
        if self.spill.compress && bytes.len() <= MAX_BLOCK {
            self.block
                .resize(lz4_flex::block::get_maximum_output_size(bytes.len()), 0);
            if let Ok(n) = lz4_flex::block::compress_into(bytes, &mut self.block)
                && n < bytes.len()
            {
                stored = &self.block[..n];
            }
        }
        match &mut self.out {
            Store::File(path, file) => file.write_all(stored).map_err(|e| disk(path, e))?,
            Store::Memory(v) => v.extend_from_slice(stored),
        }
        self.chunks.push((
            b as u32,
            Chunk {
                file: self.id,
                len: stored.len() as u32,
                raw: bytes.len() as u32,
                offset: self.offset,
            },
        ));
        self.offset += stored.len() as u64;
        self.spill.sizes[b].fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn flush(&mut self, b: usize) -> Result<(), AssemblyError> {
        if let Some(last) = self.combined.get_mut(b)
            && *last != usize::MAX
        {
            *last = 0;
        }
        let buf = std::mem::take(&mut self.bufs[b]);
        let r = self.write_chunk(b, &buf);
        let mut buf = buf;
        buf.clear();
        self.bufs[b] = buf;
        r
    }

    /// Flushes every buffer, frees them and publishes the chunks to the spill's index.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when a write fails.
    pub(crate) fn finish(mut self) -> Result<(), AssemblyError> {
        for b in 0..self.bufs.len() {
            if !self.bufs[b].is_empty() {
                self.combine(b);
                self.flush(b)?;
            }
            self.bufs[b] = Vec::new();
        }
        if let Store::Memory(v) = &mut self.out {
            let v = std::mem::take(v);
            self.spill.files.lock().expect("spill files")[self.id as usize] =
                Arc::new(Store::Memory(v));
        }
        let mut index = self.spill.index.lock().expect("spill index");
        for (b, c) in self.chunks.drain(..) {
            index[b as usize].push(c);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A combiner that counts its calls and keeps every `keep`-th record of one byte.
    struct Thin {
        keep: usize,
        calls: Arc<AtomicU64>,
    }

    impl Combine for Thin {
        fn combine(&mut self, records: &mut Vec<u8>) {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let kept: Vec<u8> = records.iter().copied().step_by(self.keep).collect();
            *records = kept;
        }
    }

    /// A bucket stays combined while its combinations remove at least half of what came since
    /// the last one, and stops being combined after one that does not.
    #[test]
    fn a_bucket_is_combined_while_it_pays() {
        for (keep, most_calls) in [(1usize, 1u64), (4, u64::MAX)] {
            let s = Spill::new(None, "t", 1);
            let calls = Arc::new(AtomicU64::new(0));
            let thin = Thin {
                keep,
                calls: Arc::clone(&calls),
            };
            let mut w = s.writer(64).unwrap().combining(Box::new(thin));
            for i in 0..1000u32 {
                w.push(0, &[i as u8]).unwrap();
            }
            w.finish().unwrap();
            let n = calls.load(Ordering::Relaxed);
            assert!(
                n >= 1 && n <= most_calls,
                "keep 1 of {keep}: {n} combinations"
            );
            if keep == 4 {
                assert!(n > 10, "a combination that pays is repeated: {n}");
            }
        }
    }

    #[test]
    fn buckets_read_back_as_written_from_several_writers() {
        let s = Spill::new(None, "t", 3);
        let mut a = s.writer(8).unwrap();
        let mut b = s.writer(8).unwrap();
        for i in 0..20u8 {
            a.push((i % 3) as usize, &[i, i]).unwrap();
            b.push(2, &[100 + i]).unwrap();
        }
        a.finish().unwrap();
        b.finish().unwrap();
        let mut out = Vec::new();
        s.read(0, &mut out).unwrap();
        assert_eq!(out, [0, 0, 3, 3, 6, 6, 9, 9, 12, 12, 15, 15, 18, 18]);
        s.read(2, &mut out).unwrap();
        let mut from_a: Vec<u8> = out.iter().copied().filter(|&x| x < 100).collect();
        let from_b: Vec<u8> = out.iter().copied().filter(|&x| x >= 100).collect();
        from_a.dedup();
        assert_eq!(from_a, [2, 5, 8, 11, 14, 17]);
        assert_eq!(
            from_b,
            (100..120).collect::<Vec<u8>>(),
            "one writer's order kept"
        );
        assert_eq!(s.total_bytes(), 40 + 20);
    }

    #[test]
    fn compressed_chunks_read_back_as_written() {
        let dir = std::env::temp_dir().join(format!("warpath-spill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let space = TempSpace::create(&dir).unwrap();
        let s = Spill::new(Some(&space), "z", 2).compressed();
        let mut w = s.writer(4096).unwrap();
        // bucket 0: the same records again and again (compressible), bucket 1: noise
        let mut want = [Vec::new(), Vec::new()];
        let mut x = 12345u64;
        for i in 0..5000u32 {
            let r = [(i % 7) as u8, 1, 2, 3, 4, 5, 6, 7];
            w.push(0, &r).unwrap();
            want[0].extend_from_slice(&r);
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = (x >> 32).to_le_bytes();
            w.push(1, &n).unwrap();
            want[1].extend_from_slice(&n);
        }
        w.finish().unwrap();
        let mut out = Vec::new();
        for (b, want) in want.iter().enumerate() {
            s.read(b, &mut out).unwrap();
            assert_eq!(&out, want, "bucket {b}");
            assert_eq!(s.bucket_bytes(b), want.len() as u64);
            let mut chunks = Vec::new();
            let mut scratch = Vec::new();
            s.for_each_chunk(b, &mut scratch, &mut |c| {
                chunks.extend_from_slice(c);
                Ok(())
            })
            .unwrap();
            assert_eq!(&chunks, want);
            // a range across chunk boundaries
            let mut part = vec![0u8; 10_000];
            s.read_range(b, 3_000, &mut part).unwrap();
            assert_eq!(part, want[3_000..13_000]);
        }
        let stored: u64 = std::fs::read_dir(space.file(""))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(
            stored < 40_000 + 4 * 5000,
            "the repeated bucket is stored in blocks: {stored} bytes"
        );
        drop(s);
        drop(space);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_full_disk_is_an_error_naming_the_file() {
        // /dev/full fails every write with ENOSPC, as a full disk does
        let Ok(file) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let s = Spill::new(None, "t", 1);
        let mut w = SpillWriter {
            spill: &s,
            id: 0,
            out: Store::File(PathBuf::from("/dev/full"), file),
            offset: 0,
            bufs: vec![Vec::new()],
            cap: 64,
            chunks: Vec::new(),
            block: Vec::new(),
            combine: None,
            combined: Vec::new(),
        };
        let e = (0..100)
            .map(|_| w.push(0, &[0u8; 16]))
            .find_map(Result::err)
            .expect("a write fails");
        assert!(
            matches!(&e, AssemblyError::Disk { error, .. } if error.raw_os_error() == Some(28)),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(text.starts_with("/dev/full: "), "{text}");
        assert!(text.contains("the disk is full"), "{text}");
    }
}
