//! Temporary files: one folder per run (removed when the run ends, however it ends), the free
//! space check before the run, outputs written under a temporary name and renamed only when
//! complete, and the cancel flag that Ctrl-C sets.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::AssemblyError;

/// The folders and partial outputs of the runs in progress, so that a signal handler can
/// remove them ([`remove_temporary_files`]) when the process is stopped before their owners
/// are dropped.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Distinguishes the folders of several runs in one process.
static NEXT: AtomicU64 = AtomicU64::new(0);

fn register(p: &Path) {
    if let Ok(mut v) = LIVE.lock() {
        v.push(p.to_path_buf());
    }
}

fn unregister(p: &Path) {
    if let Ok(mut v) = LIVE.lock() {
        v.retain(|q| q != p);
    }
}

/// Removes the temporary folders and partial outputs of every run still in progress in this
/// process: what a Ctrl-C handler calls before it exits (a run that ends normally, or with an
/// error, removes its own).
///
/// # Examples
/// ```
/// assembly::remove_temporary_files(); // nothing in progress: nothing to do
/// ```
pub fn remove_temporary_files() {
    let paths = match LIVE.lock() {
        Ok(mut v) => std::mem::take(&mut *v),
        Err(_) => return,
    };
    for p in paths {
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// A run's temporary folder, removed with everything in it when dropped (at the end of the
/// run, on an error, or by [`remove_temporary_files`] on Ctrl-C).
#[derive(Debug)]
pub(crate) struct TempSpace {
    dir: PathBuf,
    /// The largest total size of the files in the folder seen by [`TempSpace::sample`].
    peak: AtomicU64,
}

impl TempSpace {
    /// Creates `parent/warpath-tmp-<pid>-<n>`.
    pub(crate) fn create(parent: &Path) -> Result<TempSpace, AssemblyError> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("warpath-tmp-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|error| AssemblyError::Disk {
            path: dir.clone(),
            error,
        })?;
        register(&dir);
        Ok(TempSpace {
            dir,
            peak: AtomicU64::new(0),
        })
    }

    /// A path in the folder.
    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Adds up the sizes of the files in the folder now and keeps the largest total seen.
    pub(crate) fn sample(&self) -> u64 {
        let now: u64 = std::fs::read_dir(&self.dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        self.peak.fetch_max(now, Ordering::Relaxed);
        now
    }

    /// The largest total size of the temporary files seen so far.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for TempSpace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        unregister(&self.dir);
    }
}

/// Bytes free for an unprivileged user in the file system holding `path` (`None` where the
/// system cannot say).
pub(crate) fn free_space(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut s = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: `c` is a NUL-terminated path alive across the call; `s` is written by the
        // call before it is read, and read only when the call succeeds.
        let r = unsafe { libc::statvfs(c.as_ptr(), s.as_mut_ptr()) };
        if r != 0 {
            return None;
        }
        // SAFETY: statvfs returned 0, so it filled `s`.
        let s = unsafe { s.assume_init() };
        #[allow(clippy::unnecessary_cast)] // the field widths differ between platforms
        Some(s.f_bavail as u64 * s.f_frsize as u64)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Checks that `dir` has at least `needed` bytes free.
///
/// # Errors
/// [`AssemblyError::DiskSpace`] naming the folder and both figures.
pub(crate) fn check_free_space(dir: &Path, needed: u64) -> Result<(), AssemblyError> {
    match free_space(dir) {
        Some(available) if available < needed => Err(AssemblyError::DiskSpace {
            path: dir.to_path_buf(),
            available,
            needed,
        }),
        _ => Ok(()),
    }
}

/// A cancel flag: set by a Ctrl-C handler (or the caller), checked by the pipeline between
/// batches and buckets, which then stops with [`AssemblyError::Interrupted`] and removes its
/// temporary files and partial outputs.
#[derive(Debug, Default)]
pub struct Cancel(AtomicBool);

impl Cancel {
    /// A flag not set.
    pub const fn new() -> Self {
        Cancel(AtomicBool::new(false))
    }

    /// Asks the run to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether stopping was asked for.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Interrupted)` once stopping was asked for.
    pub(crate) fn check(&self) -> Result<(), AssemblyError> {
        if self.is_cancelled() {
            Err(AssemblyError::Interrupted)
        } else {
            Ok(())
        }
    }
}

/// A file written under a temporary name beside its final path (`.NAME.partial-<pid>`) and
/// renamed to it by [`PartialFile::commit`] once complete: a run that fails or is stopped
/// leaves nothing under the output's name (and removes the partial file).
pub struct PartialFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::io::BufWriter<File>>,
}

impl PartialFile {
    /// Creates the temporary file beside `path`.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when it cannot be created.
    pub fn create(path: &Path) -> Result<PartialFile, AssemblyError> {
        let name = path
            .file_name()
            .map_or("output".into(), |n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
        let file = File::create(&tmp).map_err(|error| AssemblyError::Disk {
            path: tmp.clone(),
            error,
        })?;
        register(&tmp);
        Ok(PartialFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, syncs and renames the file to its final path.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] when a write, the sync or the rename fails (the partial file
    /// is then removed).
    pub fn commit(mut self) -> Result<(), AssemblyError> {
        let w = self.file.take().expect("committed once");
        let done = w
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .and_then(|()| std::fs::rename(&self.tmp, &self.path));
        if let Err(error) = done {
            let _ = std::fs::remove_file(&self.tmp);
            unregister(&self.tmp);
            return Err(AssemblyError::Disk {
                path: self.path.clone(),
                error,
            });
        }
        unregister(&self.tmp);
        Ok(())
    }
}

impl Write for PartialFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file.as_mut().expect("not committed").write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
            unregister(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folder `<name>-<process id>` under the system's temporary folder, created.
    fn test_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_partial_file_appears_only_when_committed() {
        let dir = test_dir("asm-partial");
        let p = dir.join("out.fa");
        let mut f = PartialFile::create(&p).unwrap();
        f.write_all(b">0\nACGT\n").unwrap();
        assert!(!p.exists(), "not under its name before the commit");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b">0\nACGT\n");
        // dropped without a commit (an error on the way): nothing is left
        let q = dir.join("other.fa");
        let mut f = PartialFile::create(&q).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert!(!q.exists());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "only the committed file");
        std::fs::remove_dir_all(&dir).unwrap();
        // (one test: `remove_temporary_files` below removes every partial file of the process)
        temporary_folders_go_when_dropped_or_on_request();
    }

    fn temporary_folders_go_when_dropped_or_on_request() {
        let parent = test_dir("asm-space");
        let s = TempSpace::create(&parent).unwrap();
        std::fs::write(s.file("x"), b"12345").unwrap();
        assert_eq!(s.sample(), 5);
        let dir = s.file("");
        drop(s);
        assert!(!dir.exists());
        // what a Ctrl-C handler does: remove the folders of the runs in progress
        let s = TempSpace::create(&parent).unwrap();
        let dir = s.file("");
        remove_temporary_files();
        assert!(!dir.exists());
        drop(s);
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
