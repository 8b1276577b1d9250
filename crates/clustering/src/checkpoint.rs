//! Checkpoints of a k-means run: the centroids after an iteration and the iteration count,
//! written atomically (to a temporary file in the same folder, synced, then renamed over the
//! old checkpoint), so a crash leaves either the old or the new checkpoint, never half of one.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::KMeansError;

/// The state a run needs to continue: enough to check that a resumed run is the same job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Format version (2; version 1 had no `weights_digest`).
    pub version: u32,
    /// Points in the whole data set.
    pub n: u64,
    /// Dimensions.
    pub d: usize,
    /// Clusters.
    pub k: usize,
    /// Iterations done.
    pub iteration: usize,
    /// Absolute tolerance of the run.
    pub tol_abs: f64,
    /// Whether the run had converged when this was written.
    pub converged: bool,
    /// The centroids (`k * d`, row-major) as `f64` bit patterns, so they survive exactly.
    pub centroid_bits: Vec<u64>,
    /// The initial centroids as bit patterns (to compare runs; a resumed run with given
    /// centroids must have started from these).
    pub initial_bits: Vec<u64>,
    /// A digest of the sample weights (each weight with its row index), or `None` for an
    /// unweighted run: a run resumed with other weights (or none) is refused. Missing in
    /// version-1 checkpoints, which are read as unweighted.
    #[serde(default)]
    pub weights_digest: Option<u64>,
}

/// `f64` values as their bit patterns.
pub fn to_bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Bit patterns back to `f64` values.
pub fn from_bits(v: &[u64]) -> Vec<f64> {
    v.iter().map(|&b| f64::from_bits(b)).collect()
}

impl Checkpoint {
    /// The centroids as `f64`.
    pub fn centroids(&self) -> Vec<f64> {
        from_bits(&self.centroid_bits)
    }

    /// Writes the checkpoint atomically: temporary file, `fsync`, rename.
    ///
    /// # Errors
    /// [`KMeansError::Io`] when the file cannot be written or renamed.
    ///
    /// # Examples
    /// ```
    /// use clustering::checkpoint::{Checkpoint, to_bits};
    /// let dir = std::env::temp_dir().join(format!("km-ck-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("ck.json");
    /// let ck = Checkpoint { version: 2, n: 3, d: 1, k: 1, iteration: 2, tol_abs: 0.0,
    ///     converged: false, centroid_bits: to_bits(&[0.1]), initial_bits: to_bits(&[0.0]),
    ///     weights_digest: None };
    /// ck.write_atomic(&path)?;
    /// assert_eq!(Checkpoint::read(&path)?, ck);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn write_atomic(&self, path: &Path) -> Result<(), KMeansError> {
        let tmp = temp_path(path);
        let text = serde_json::to_vec(self).map_err(|e| KMeansError::io(path, e))?;
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&text)?;
            f.sync_all()?;
            drop(f);
            std::fs::rename(&tmp, path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            KMeansError::io(path, e)
        })
    }

    /// Reads a checkpoint.
    ///
    /// # Errors
    /// [`KMeansError::Io`] when it cannot be read, [`KMeansError::Format`] when it is not a
    /// checkpoint or is inconsistent (`k * d` centroids).
    pub fn read(path: &Path) -> Result<Self, KMeansError> {
        let text = std::fs::read(path).map_err(|e| KMeansError::io(path, e))?;
        let ck: Checkpoint = serde_json::from_slice(&text)
            .map_err(|e| KMeansError::format(path, format!("not a k-means checkpoint: {e}")))?;
        if ck.centroid_bits.len() != ck.k * ck.d || ck.initial_bits.len() != ck.k * ck.d {
            return Err(KMeansError::format(
                path,
                format!(
                    "{} centroid values for k = {}, d = {}",
                    ck.centroid_bits.len(),
                    ck.k,
                    ck.d
                ),
            ));
        }
        Ok(ck)
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp.{}", std::process::id()));
    path.with_file_name(name)
}
