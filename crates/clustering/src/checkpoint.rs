//! Checkpoints of a k-means run: the centroids after an iteration and the iteration count,
//! written atomically (to a temporary file in the same folder, synced, then renamed over the
//! old checkpoint), so a crash leaves either the old or the new checkpoint, never half of one.
//!
//! A checkpoint also says which job wrote it, so that a run resumed with another job is
//! refused ([`Checkpoint::check_resume`], [`KMeansError::CheckpointMismatch`]) instead of
//! silently continuing someone else's centroids. The number of ranks is not part of a job:
//! resuming on another number of ranks is allowed.
//!
//! # Versions
//! - **3** (written now): `n`, `d`, `k`, the initial centroids, the weights digest, and
//!   [`JobParams`]: the init (`k-means++`, `random`, `given`), the seed (of k-means++ and
//!   random init), the relative `tol`, and a digest of the data values.
//! - **2**: no [`JobParams`]: a resumed run is checked for `n`, `d`, `k`, the weights and
//!   (when the run gives its centroids) the initial centroids only; init, seed, tol and the
//!   data values are not checked (the data could not be: it was never recorded).
//! - **1**: as 2, without the weights digest: read as an unweighted run.
//!
//! Every version is checked for `max_iter`: a checkpoint past this run's `max_iter` is
//! refused; any `max_iter` at or above the checkpoint's iteration continues exactly as an
//! uninterrupted run with that `max_iter` would, so a run may be resumed to go further.

use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Init, KMeans, KMeansError};

/// The checkpoint format version this crate writes (it reads 1 to 3).
pub const CHECKPOINT_VERSION: u32 = 3;

/// The state a run needs to continue: enough to check that a resumed run is the same job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Format version (1 to [`CHECKPOINT_VERSION`]; see the module docs).
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
    /// A digest of the sample weights ([`digest_part`] over the weights), or `None` for an
    /// unweighted run: a run resumed with other weights (or none) is refused. Missing in
    /// version-1 checkpoints, which are read as unweighted.
    #[serde(default)]
    pub weights_digest: Option<u64>,
    /// The rest of the job's identity (version 3); `None` in versions 1 and 2, whose runs
    /// are then not checked for it.
    #[serde(default)]
    pub job: Option<JobParams>,
}

/// How a job was started, beyond its shape, weights and initial centroids (checkpoint
/// version 3): a run resumed with other values is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobParams {
    /// `k-means++`, `random` or `given`.
    pub init: String,
    /// The seed of k-means++ or random init; `None` with given centroids (the seed plays no
    /// part then).
    pub seed: Option<u64>,
    /// `tol`, relative to the data's variance.
    pub tol: f64,
    /// A digest of the data values ([`digest_part`] over the rows, row-major), so the same
    /// values in an `f32`, `f64` or raw file are the same data.
    pub data_digest: u64,
}

/// The job a run is about to do, to compare with a checkpoint before resuming from it.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// Clusters, init, seed, `tol`, `max_iter`.
    pub params: &'a KMeans,
    /// Points.
    pub n: u64,
    /// Dimensions.
    pub d: usize,
    /// [`digest_part`] over all data values.
    pub data_digest: u64,
    /// [`digest_part`] over the sample weights, `None` for an unweighted run.
    pub weights_digest: Option<u64>,
}

impl Job<'_> {
    /// What a checkpoint of this job records in [`Checkpoint::job`].
    ///
    /// # Complexity
    /// `O(1)`.
    ///
    /// # Examples
    /// ```
    /// use clustering::checkpoint::Job;
    /// use clustering::{Init, KMeans};
    /// let p = KMeans::new(2).init(Init::Random).seed(4);
    /// let job = Job { params: &p, n: 10, d: 1, data_digest: 0, weights_digest: None };
    /// assert_eq!((job.recorded().init.as_str(), job.recorded().seed), ("random", Some(4)));
    /// ```
    pub fn recorded(&self) -> JobParams {
        let p = self.params;
        let (init, seed) = match &p.init {
            Init::KMeansPlusPlus => ("k-means++".to_owned(), Some(p.seed)),
            Init::Random => ("random".to_owned(), Some(p.seed)),
            Init::KMeansParallel { rounds } => {
                (format!("k-means|| ({rounds} rounds)"), Some(p.seed))
            }
            Init::Given(_) => ("given".to_owned(), None),
            Init::Drawn(_) => ("drawn".to_owned(), None),
        };
        JobParams {
            init,
            seed,
            tol: p.tol,
            data_digest: self.data_digest,
        }
    }
}

/// SplitMix64's finaliser: a bijective 64-bit mix.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// An order-sensitive digest of a sequence of 64-bit values (parameters, bit patterns).
///
/// # Complexity
/// `O(len)`.
///
/// # Examples
/// ```
/// use clustering::checkpoint::digest;
/// assert_eq!(digest([1, 2]), digest([1, 2]));
/// assert_ne!(digest([1, 2]), digest([2, 1]));
/// ```
pub fn digest(values: impl IntoIterator<Item = u64>) -> u64 {
    values
        .into_iter()
        .fold(0x9e37_79b9_7f4a_7c15, |h, v| mix(h ^ mix(v)))
}

/// One shard's part of the digest of a long vector of values (the data, the weights): the
/// XOR over the shard of a hash of (global index, value), where the shard starts at global
/// index `first_index`. XOR-ing the parts of all shards gives the same digest for any
/// sharding, so ranks combine their parts with one all-reduce. `-0.0` and `0.0` are the same
/// value.
///
/// # Complexity
/// `O(len)` work, in parallel.
///
/// # Examples
/// ```
/// use clustering::checkpoint::digest_part;
/// let v = [0.5, 1.0, -2.0, 4.0];
/// assert_eq!(digest_part(0, &v), digest_part(0, &v[..1]) ^ digest_part(1, &v[1..]));
/// assert_ne!(digest_part(0, &v), digest_part(0, &[1.0, 0.5, -2.0, 4.0]));
/// ```
pub fn digest_part(first_index: u64, values: &[f64]) -> u64 {
    values
        .par_iter()
        .enumerate()
        // `+ 0.0` makes -0.0 and 0.0 the same value.
        .map(|(i, v)| mix(mix(first_index + i as u64) ^ (v + 0.0).to_bits()))
        .reduce(|| 0, |a, b| a ^ b)
}

/// `f64` values as their bit patterns.
pub fn to_bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Bit patterns back to `f64` values.
pub fn from_bits(v: &[u64]) -> Vec<f64> {
    v.iter().map(|&b| f64::from_bits(b)).collect()
}

/// Everything every rank of a distributed run must agree on before it starts: the digest of
/// the parameters and the given centroids (their values in logical order, whatever the
/// layout), checked by every rank and kept in the checkpoint.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn job_digest(p: &KMeans, weighted: bool) -> u64 {
    let (tag, given) = match &p.init {
        Init::KMeansPlusPlus => (0, None),
        Init::Random => (1, None),
        Init::Given(c) => (2, Some(c)),
        // Refused by the distributed fits (`check_given`); a tag of its own all the same.
        Init::Drawn(_) => (u64::MAX, None),
        Init::KMeansParallel { rounds } => (3 + *rounds as u64, None),
    };
    let head = [
        p.k as u64,
        p.max_iter as u64,
        p.tol.to_bits(),
        p.seed,
        tag,
        u64::from(weighted),
    ];
    digest(
        head.into_iter().chain(
            given
                .into_iter()
                .flat_map(|c| c.iter().map(|v| v.to_bits())),
        ),
    )
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
    /// use clustering::checkpoint::{Checkpoint, JobParams, to_bits};
    /// let dir = std::env::temp_dir().join(format!("km-ck-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("ck.json");
    /// let job = JobParams { init: "random".into(), seed: Some(1), tol: 1e-4, data_digest: 7 };
    /// let ck = Checkpoint { version: 3, n: 3, d: 1, k: 1, iteration: 2, tol_abs: 0.0,
    ///     converged: false, centroid_bits: to_bits(&[0.1]), initial_bits: to_bits(&[0.0]),
    ///     weights_digest: None, job: Some(job) };
    /// ck.write_atomic(&path)?;
    /// assert_eq!(Checkpoint::read(&path)?, ck);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn write_atomic(&self, path: &Path) -> Result<(), KMeansError> {
        let tmp = temp_path(path);
        let text = self.to_json().map_err(|e| KMeansError::io(path, e))?;
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
    /// checkpoint, has an unknown version (or a version-3 checkpoint lacks its `job`), or is
    /// inconsistent (`k * d` centroids).
    pub fn read(path: &Path) -> Result<Self, KMeansError> {
        let text = std::fs::read(path).map_err(|e| KMeansError::io(path, e))?;
        Self::parse(&text, path)
    }

    /// The checkpoint's file contents (JSON; what [`Checkpoint::write_atomic`] writes).
    ///
    /// # Errors
    /// An I/O error when a float is not finite (JSON has no infinities or NaN).
    ///
    /// # Examples
    /// ```
    /// use clustering::checkpoint::{Checkpoint, to_bits};
    /// let ck = Checkpoint { version: 2, n: 1, d: 1, k: 1, iteration: 0, tol_abs: 0.0,
    ///     converged: true, centroid_bits: to_bits(&[0.5]), initial_bits: to_bits(&[0.5]),
    ///     weights_digest: None, job: None };
    /// let text = ck.to_json()?;
    /// assert_eq!(Checkpoint::parse(&text, "ck.json".as_ref())?, ck);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json(&self) -> std::io::Result<Vec<u8>> {
        for (what, v) in [
            ("tol_abs", self.tol_abs),
            ("tol", self.job.as_ref().map_or(0.0, |j| j.tol)),
        ] {
            if !v.is_finite() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("checkpoint {what} = {v} is not finite"),
                ));
            }
        }
        serde_json::to_vec(self).map_err(std::io::Error::other)
    }

    /// Parses and checks the contents of a checkpoint file (what [`Checkpoint::read`] does
    /// once the file is read); `path` names it in errors.
    ///
    /// # Complexity
    /// `O(len)`: the JSON is parsed once, and nothing is allocated beyond what its text
    /// holds.
    ///
    /// # Errors
    /// [`KMeansError::Format`] as [`Checkpoint::read`].
    ///
    /// # Examples
    /// ```
    /// use clustering::checkpoint::Checkpoint;
    /// let e = Checkpoint::parse(b"{\"version\": 9}", "ck.json".as_ref()).unwrap_err();
    /// assert!(e.to_string().contains("ck.json"));
    /// ```
    pub fn parse(text: &[u8], path: &Path) -> Result<Self, KMeansError> {
        let ck: Checkpoint = serde_json::from_slice(text)
            .map_err(|e| KMeansError::format(path, format!("not a k-means checkpoint: {e}")))?;
        if !(1..=CHECKPOINT_VERSION).contains(&ck.version) {
            return Err(KMeansError::format(
                path,
                format!(
                    "checkpoint version {} (this build reads 1 to {CHECKPOINT_VERSION})",
                    ck.version
                ),
            ));
        }
        if ck.version >= 3 && ck.job.is_none() {
            return Err(KMeansError::format(
                path,
                "version-3 checkpoint without its job parameters",
            ));
        }
        // `k * d` from the file may overflow: a checked product, compared with the lengths.
        let values = ck.k.checked_mul(ck.d);
        if values != Some(ck.centroid_bits.len()) || values != Some(ck.initial_bits.len()) {
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

impl Checkpoint {
    /// Checks that this checkpoint (read from `path`) was written by `job`, so that resuming
    /// from it continues the same run: the same `n`, `d`, `k`, sample weights, given
    /// centroids (when `job` gives them) and, for version 3, the same init, seed, `tol` and
    /// data values; and the checkpoint's iteration is not past `job`'s `max_iter`. What a
    /// version-1 or -2 checkpoint does not record is not checked (module docs). The number of
    /// ranks is no part of a job.
    ///
    /// # Complexity
    /// `O(k d)`.
    ///
    /// # Errors
    /// [`KMeansError::CheckpointMismatch`] naming the first difference found, with what the
    /// checkpoint says and what this run says.
    ///
    /// # Examples
    /// ```
    /// use clustering::checkpoint::{Checkpoint, Job, to_bits};
    /// use clustering::{KMeans, KMeansError};
    /// let params = KMeans::new(1).seed(7);
    /// let job = Job { params: &params, n: 3, d: 1, data_digest: 42, weights_digest: None };
    /// let ck = Checkpoint { version: 3, n: 3, d: 1, k: 1, iteration: 2, tol_abs: 0.0,
    ///     converged: false, centroid_bits: to_bits(&[0.1]), initial_bits: to_bits(&[0.0]),
    ///     weights_digest: None, job: Some(job.recorded()) };
    /// ck.check_resume("ck.json".as_ref(), &job)?;
    /// let other = KMeans::new(1).seed(8);
    /// let e = ck.check_resume("ck.json".as_ref(), &Job { params: &other, ..job }).unwrap_err();
    /// assert!(matches!(e, KMeansError::CheckpointMismatch { what: "seed", .. }));
    /// assert!(e.to_string().contains("checkpoint says 7, this run says 8"));
    /// # Ok::<(), KMeansError>(())
    /// ```
    pub fn check_resume(&self, path: &Path, job: &Job<'_>) -> Result<(), KMeansError> {
        let differ = |what: &'static str, checkpoint: String, run: String| {
            Err(KMeansError::CheckpointMismatch {
                path: path.display().to_string(),
                what,
                checkpoint,
                run,
            })
        };
        let p = job.params;
        for (what, ck, run) in [
            ("n (points)", self.n, job.n),
            ("d (dimensions)", self.d as u64, job.d as u64),
            ("k (clusters)", self.k as u64, p.k as u64),
        ] {
            if ck != run {
                return differ(what, ck.to_string(), run.to_string());
            }
        }
        let recorded = job.recorded();
        if let Some(ck) = &self.job
            && ck.data_digest != recorded.data_digest
        {
            return differ(
                "data values",
                format!("digest {:016x}", ck.data_digest),
                format!("digest {:016x}", recorded.data_digest),
            );
        }
        if self.weights_digest != job.weights_digest {
            let says = |w: Option<u64>| match w {
                None => "no sample weights".to_string(),
                Some(h) => format!("sample weights with digest {h:016x}"),
            };
            return differ(
                "sample weights",
                says(self.weights_digest),
                says(job.weights_digest),
            );
        }
        if let Some(ck) = &self.job {
            if ck.init != recorded.init {
                return differ("init", ck.init.clone(), recorded.init);
            }
            if ck.seed != recorded.seed {
                let says = |s: Option<u64>| s.map_or("none".to_string(), |s| s.to_string());
                return differ("seed", says(ck.seed), says(recorded.seed));
            }
            if ck.tol.to_bits() != recorded.tol.to_bits() {
                return differ("tol", ck.tol.to_string(), recorded.tol.to_string());
            }
        }
        if let Init::Given(c) = &p.init
            && !c
                .iter()
                .map(|v| v.to_bits())
                .eq(self.initial_bits.iter().copied())
        {
            return differ(
                "given centroids",
                format!("digest {:016x}", digest(self.initial_bits.iter().copied())),
                format!("digest {:016x}", digest(c.iter().map(|v| v.to_bits()))),
            );
        }
        if self.iteration > p.max_iter {
            return differ(
                "max_iter",
                format!("{} iterations done", self.iteration),
                format!("max_iter = {}", p.max_iter),
            );
        }
        Ok(())
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp.{}", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_digest_sees_parameters_and_given_centroids() {
        let c = ndarray::array![[0.0, 1.0], [2.0, 3.0]];
        let p = KMeans::new(2).init(Init::Given(c.clone()));
        let base = job_digest(&p, false);
        assert_eq!(job_digest(&p.clone(), false), base);
        assert_ne!(job_digest(&p, true), base);
        assert_ne!(job_digest(&p.clone().seed(1), false), base);
        let mut moved = c.clone();
        moved[[1, 0]] = 2.5;
        assert_ne!(job_digest(&p.clone().init(Init::Given(moved)), false), base);
        // The same values in Fortran order are the same centroids.
        let fortran = c.t().as_standard_layout().t().to_owned();
        assert_eq!(
            job_digest(&p.clone().init(Init::Given(fortran)), false),
            base
        );
    }

    fn parse(text: &str) -> Result<Checkpoint, KMeansError> {
        Checkpoint::parse(text.as_bytes(), Path::new("ck.json"))
    }

    fn sample(tol_abs: f64, tol: f64) -> Checkpoint {
        Checkpoint {
            version: 3,
            n: 10,
            d: 2,
            k: 1,
            iteration: 3,
            tol_abs,
            converged: false,
            centroid_bits: to_bits(&[1.0, -0.0]),
            initial_bits: to_bits(&[0.5, f64::MIN_POSITIVE]),
            weights_digest: Some(9),
            job: Some(JobParams {
                init: "random".into(),
                seed: Some(1),
                tol,
                data_digest: 12345,
            }),
        }
    }

    /// Found by the `checkpoint` fuzz target: serde_json's default float parsing is not
    /// correctly rounded, so a `tol_abs` read, written and read again changed by one ulp (and
    /// a resumed run's `tol`, compared bit for bit, could be refused). Read with
    /// `float_roundtrip`, floats are the nearest doubles and survive a write and a read.
    #[test]
    fn regression_floats_are_read_correctly_rounded() {
        let digits = "0.000122222222222222222222222222222222222222222222222222222222222222";
        let text = serde_json::to_string(&sample(0.0, 1.0))
            .unwrap()
            .replace("\"tol_abs\":0.0", &format!("\"tol_abs\":{digits}"));
        let ck = parse(&text).unwrap();
        assert_eq!(
            ck.tol_abs.to_bits(),
            digits.parse::<f64>().unwrap().to_bits()
        );
        let back = Checkpoint::parse(&ck.to_json().unwrap(), Path::new("ck.json")).unwrap();
        assert_eq!(back.tol_abs.to_bits(), ck.tol_abs.to_bits());
    }

    /// A `k * d` that overflows is an inconsistent checkpoint, not a panic (or, wrapped, a
    /// match with the lengths).
    #[test]
    fn overflowing_k_times_d_is_a_format_error() {
        let text = serde_json::to_string(&sample(0.0, 1.0))
            .unwrap()
            .replace("\"d\":2,\"k\":1", "\"d\":4294967296,\"k\":4294967296");
        let e = parse(&text).unwrap_err();
        assert!(matches!(e, KMeansError::Format { .. }), "{e}");
        let text = text.replace("4294967296", "1");
        assert!(parse(&text).is_err(), "2 values for k = d = 1");
    }

    #[test]
    fn non_finite_floats_are_refused_by_the_writer() {
        assert!(sample(f64::INFINITY, 1.0).to_json().is_err());
        assert!(sample(0.0, f64::NAN).to_json().is_err());
    }

    proptest::proptest! {
        /// Any finite floats survive a write and a read bit for bit.
        #[test]
        fn prop_floats_round_trip(a in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
                                  b in proptest::num::f64::ANY) {
            proptest::prop_assume!(b.is_finite());
            let ck = sample(a, b);
            let back = Checkpoint::parse(&ck.to_json().unwrap(), Path::new("ck.json")).unwrap();
            proptest::prop_assert_eq!(back.tol_abs.to_bits(), a.to_bits());
            proptest::prop_assert_eq!(back.job.unwrap().tol.to_bits(), b.to_bits());
        }

        /// Arbitrary bytes, and checkpoints with one byte changed: a format error or a
        /// consistent checkpoint that round-trips, never a panic.
        #[test]
        fn prop_arbitrary_bytes_fail_typed_or_round_trip(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            at in 0usize..400,
            byte in proptest::num::u8::ANY,
        ) {
            let mut mutated = sample(1e-4, 1e-3).to_json().unwrap();
            let i = at % mutated.len();
            mutated[i] = byte;
            for text in [&bytes[..], &mutated[..]] {
                match Checkpoint::parse(text, Path::new("ck.json")) {
                    Ok(ck) => {
                        proptest::prop_assert_eq!(Some(ck.centroid_bits.len()), ck.k.checked_mul(ck.d));
                        let back = Checkpoint::parse(&ck.to_json().unwrap(), Path::new("ck.json"));
                        proptest::prop_assert_eq!(back.unwrap(), ck);
                    }
                    Err(e) => proptest::prop_assert!(matches!(e, KMeansError::Format { .. }), "{}", e),
                }
            }
        }
    }
}
