//! The distributed worker under `mpirun` (feature `mpi`; run by `ci-mpi.sh`): 3 ranks equal
//! 1 rank, a rank killed mid-run is relaunched from the checkpoint (also with another number
//! of ranks) and reaches the same centroids as the uninterrupted run; a rank whose all-reduce
//! differs in the last bit is overruled by rank 0's bits; a resume with another seed or init
//! is refused; weighted runs from given centroids (weights from `.npy`, raw or CSV files)
//! equal the library's weighted fit; unit weights equal no weights, bit for bit; bad weights
//! and centroids fail on every rank; every `--algorithm` gives the same result, bit for bit.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clustering::checkpoint::{from_bits, to_bits};
use clustering::data::{generate_blobs, write_npy};
use clustering::distributed::{DistributedReport, PERTURB_AT_VAR};
use clustering::launch::{FAIL_AT_VAR, LaunchOutcome, MpiLaunch, launch_with_restarts};
use clustering::{Init, KMeans, KMeansResult};
use ndarray::{Array1, Array2};

#[path = "common/npy_f32.rs"]
mod npy_f32;
use npy_f32::npy_f32_bytes;

const K: usize = 6;

fn setup(name: &str) -> (PathBuf, PathBuf, Array2<f64>) {
    let dir = std::env::temp_dir().join(format!("kmeans-mpi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Overlapping clusters, so that the run takes a good number of iterations.
    let b = generate_blobs(30_011, 5, K, 0.45, 77);
    let path = dir.join("x.npy");
    write_npy(&path, &b.data).unwrap();
    (dir, path, b.data)
}

/// How a test launches its job: relaunches, `--resume`, a rank to kill, a rank whose
/// all-reduce to perturb, another seed than 5, more worker flags.
#[derive(Default)]
struct How<'a> {
    restarts: usize,
    resume: bool,
    fail_at: Option<&'a str>,
    perturb_at: Option<&'a str>,
    seed: Option<u64>,
    extra: &'a [OsString],
}

impl<'a> How<'a> {
    fn with(extra: &'a [OsString]) -> Self {
        How {
            extra,
            ..How::default()
        }
    }

    fn resume(self) -> Self {
        How {
            resume: true,
            ..self
        }
    }
}

fn launch(
    dir: &Path,
    input: &Path,
    ranks: usize,
    tag: &str,
    how: How<'_>,
) -> Result<LaunchOutcome, clustering::KMeansError> {
    let How {
        restarts,
        resume,
        fail_at,
        perturb_at,
        seed,
        extra,
    } = how;
    let opts = MpiLaunch {
        mpirun: PathBuf::from(std::env::var("MPIRUN").unwrap_or_else(|_| "mpirun".into())),
        worker: PathBuf::from(env!("CARGO_BIN_EXE_kmeans-mpi")),
        ranks,
        max_restarts: restarts,
        worker_args: [
            input.as_os_str().to_owned(),
            "--k".into(),
            K.to_string().into(),
            "--seed".into(),
            seed.unwrap_or(5).to_string().into(),
            "--tol".into(),
            "0".into(),
            "--out".into(),
            dir.join(format!("{tag}.json")).into_os_string(),
            "--labels".into(),
            dir.join(format!("{tag}.labels")).into_os_string(),
        ]
        .into_iter()
        .chain(extra.iter().cloned())
        .collect::<Vec<OsString>>(),
        checkpoint: dir.join(format!("{tag}.ck.json")),
        resume,
        first_launch_env: [(FAIL_AT_VAR, fail_at), (PERTURB_AT_VAR, perturb_at)]
            .into_iter()
            .filter_map(|(var, v)| v.map(|v| (var.into(), v.into())))
            .collect(),
    };
    launch_with_restarts(&opts, |_, why| eprintln!("{why}"))
}

fn report(dir: &Path, tag: &str) -> (DistributedReport, Vec<u32>) {
    let r: DistributedReport =
        serde_json::from_slice(&std::fs::read(dir.join(format!("{tag}.json"))).unwrap()).unwrap();
    let labels = std::fs::read_to_string(dir.join(format!("{tag}.labels")))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    (r, labels)
}

/// Writes a 1-D `f32` `.npy` file (numpy's layout).
fn write_npy_f32(path: &Path, v: &[f64]) {
    let shape = format!("({},)", v.len());
    std::fs::write(path, npy_f32_bytes(&shape, v.iter().map(|&x| x as f32))).unwrap();
}

/// Writes raw little-endian `f64`.
fn write_raw(path: &Path, v: &[f64]) {
    std::fs::write(
        path,
        v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
}

fn args(pairs: &[(&str, &Path)]) -> Vec<OsString> {
    pairs
        .iter()
        .flat_map(|(flag, p)| [OsString::from(flag), p.as_os_str().to_owned()])
        .collect()
}

/// Same job: same iterations and labels, centroids equal up to the order of the sums.
fn assert_same(a: &(DistributedReport, Vec<u32>), b: &(DistributedReport, Vec<u32>)) {
    assert_eq!(a.0.initial_bits, b.0.initial_bits, "same initial centroids");
    assert_eq!(a.0.iterations, b.0.iterations);
    assert_eq!(a.0.converged, b.0.converged);
    assert_eq!(a.1, b.1, "labels");
    for (x, y) in a.0.centroids.iter().zip(&b.0.centroids) {
        assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()), "{x} vs {y}");
    }
    assert!((a.0.inertia - b.0.inertia).abs() <= 1e-10 * a.0.inertia);
}

/// The library's fit and a distributed run: the same labels and iterations, centroids equal up
/// to the order of the sums.
fn assert_library_equals(lib: &KMeansResult<f64>, run: &(DistributedReport, Vec<u32>)) {
    assert_eq!(lib.labels, run.1);
    assert_eq!(lib.iterations, run.0.iterations);
    for (x, y) in lib.centroids.iter().zip(&run.0.centroids) {
        assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()), "{x} vs {y}");
    }
}

#[test]
fn distributed_equals_single_process_and_survives_a_killed_rank() {
    let (dir, input, data) = setup("main");
    let one = launch(&dir, &input, 1, "one", How::default()).unwrap();
    assert_eq!(one.attempts, 1);
    let single = report(&dir, "one");
    assert!(
        single.0.iterations >= 6,
        "{} iterations",
        single.0.iterations
    );
    assert!(single.0.converged);
    assert_eq!(single.1.len(), data.nrows());

    // The library on the same data from the same initial centroids.
    let init = Array2::from_shape_vec((K, 5), from_bits(&single.0.initial_bits)).unwrap();
    let lib = KMeans::new(K)
        .init(Init::Given(init))
        .tol(0.0)
        .fit(data.view())
        .unwrap();
    assert_library_equals(&lib, &single);

    // Three ranks, uninterrupted.
    launch(&dir, &input, 3, "three", How::default()).unwrap();
    let three = report(&dir, "three");
    assert_same(&single, &three);
    assert_eq!(three.0.reconciled, 0);

    // Rank 1's all-reduce of the last update's statistics differs in the last bit of every
    // value: rank 0's bits overrule it, so the result is bit-identical (without that, rank 1
    // would end with other centroids, an error).
    let last_update = format!("{}:1", single.0.iterations - 1);
    let how = How {
        perturb_at: Some(&last_update),
        ..How::default()
    };
    launch(&dir, &input, 3, "perturbed", how).unwrap();
    let perturbed = report(&dir, "perturbed");
    assert_eq!(perturbed.0.reconciled, 1);
    assert_eq!(perturbed.0.centroid_bits, three.0.centroid_bits);
    assert_eq!(perturbed.1, three.1);

    // Resuming the finished job with another seed or init is refused, naming the difference.
    let other_seed = How {
        seed: Some(6),
        ..How::default().resume()
    };
    let e = launch(&dir, &input, 2, "three", other_seed).unwrap_err();
    assert!(
        e.to_string()
            .contains("seed: checkpoint says 5, this run says 6"),
        "{e}"
    );
    let random: &[OsString] = &["--init".into(), "random".into()];
    let e = launch(&dir, &input, 2, "three", How::with(random).resume()).unwrap_err();
    assert!(
        e.to_string()
            .contains("init: checkpoint says k-means++, this run says random"),
        "{e}"
    );

    // Rank 1 dies after iteration 3; the launcher relaunches from the checkpoint.
    let out = launch(
        &dir,
        &input,
        3,
        "killed",
        How {
            restarts: 2,
            fail_at: Some("3:1"),
            ..How::default()
        },
    )
    .unwrap();
    assert_eq!(out.attempts, 2, "one failure, one resumed launch");
    let killed = report(&dir, "killed");
    assert_eq!(killed.0.resumed_from, Some(3));
    assert_same(&single, &killed);

    // Killed with 3 ranks and no restarts; resumed by hand on 2 ranks.
    let e = launch(
        &dir,
        &input,
        3,
        "manual",
        How {
            fail_at: Some("4:2"),
            ..How::default()
        },
    );
    assert!(e.is_err());
    launch(&dir, &input, 2, "manual", How::default().resume()).unwrap();
    let manual = report(&dir, "manual");
    assert_eq!(manual.0.resumed_from, Some(4));
    assert_eq!(manual.0.ranks, 2);
    assert_same(&single, &manual);

    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn weighted_runs_from_given_centroids_equal_the_single_process_run() {
    let (dir, input, data) = setup("weighted");
    let n = data.nrows();
    // Weights 0, 0.5, ..., 2 (exact in f32): some points weigh nothing.
    let w: Vec<f64> = (0..n).map(|i| ((i * 7919) % 5) as f64 * 0.5).collect();
    let (w32, w64) = (dir.join("w32.npy"), dir.join("w.f64"));
    write_npy_f32(&w32, &w);
    write_raw(&w64, &w);
    let given = Array2::from_shape_fn((K, 5), |(j, t)| data[[j * 4999 + 3, t]]);
    let centres = dir.join("given.npy");
    write_npy(&centres, &given).unwrap();

    // 1 rank reading f32 .npy weights, 3 ranks reading raw f64 weights.
    let a = args(&[("--weights", &w32), ("--init-centroids", &centres)]);
    launch(&dir, &input, 1, "w1", How::with(&a)).unwrap();
    let b = args(&[("--weights", &w64), ("--init-centroids", &centres)]);
    launch(&dir, &input, 3, "w3", How::with(&b)).unwrap();
    let one = report(&dir, "w1");
    assert_eq!(one.0.initial_bits, to_bits(given.as_slice().unwrap()));
    assert!(one.0.converged && one.0.iterations >= 3);
    let three = report(&dir, "w3");
    assert_same(&one, &three);
    // The same weights as CSV text (with a header line): bit for bit the raw file's result.
    let csv = dir.join("w.csv");
    let text: String = w.iter().map(|x| format!("{x}\n")).collect();
    std::fs::write(&csv, format!("weight\n{text}")).unwrap();
    let c = args(&[("--weights", &csv), ("--init-centroids", &centres)]);
    launch(&dir, &input, 3, "wcsv", How::with(&c)).unwrap();
    let from_csv = report(&dir, "wcsv");
    assert_eq!(from_csv.0.centroid_bits, three.0.centroid_bits);
    assert_eq!(from_csv.1, three.1);

    // The library's weighted fit from the same centroids.
    let wv = Array1::from(w.clone());
    let lib = KMeans::new(K)
        .init(Init::Given(given.clone()))
        .tol(0.0)
        .fit_weighted(data.view(), wv.view())
        .unwrap();
    assert_library_equals(&lib, &one);
    assert!((lib.inertia - one.0.inertia).abs() <= 1e-10 * lib.inertia);
    // The weights matter: unweighted, the same start ends elsewhere.
    let plain = KMeans::new(K)
        .init(Init::Given(given))
        .tol(0.0)
        .fit(data.view())
        .unwrap();
    assert!(
        plain
            .centroids
            .iter()
            .zip(&one.0.centroids)
            .any(|(x, y)| (x - y).abs() > 1e-6)
    );

    // Weighted k-means++ (seed 5) on 3 ranks equals the library's.
    launch(
        &dir,
        &input,
        3,
        "wpp",
        How {
            extra: &args(&[("--weights", &w64)]),
            ..How::default()
        },
    )
    .unwrap();
    let pp = report(&dir, "wpp");
    let lib = KMeans::new(K)
        .seed(5)
        .tol(0.0)
        .fit_weighted(data.view(), wv.view())
        .unwrap();
    assert_library_equals(&lib, &pp);

    // Resuming needs the same weights (in any file format) and the same given centroids.
    let mut other = w.clone();
    other[n / 2] += 0.5;
    let other_path = dir.join("other.f64");
    write_raw(&other_path, &other);
    let c = args(&[("--weights", &other_path), ("--init-centroids", &centres)]);
    let e = launch(&dir, &input, 3, "w3", How::with(&c).resume()).unwrap_err();
    assert!(
        e.to_string()
            .contains("sample weights: checkpoint says sample weights with digest"),
        "{e}"
    );
    let e = launch(
        &dir,
        &input,
        2,
        "w3",
        How {
            resume: true,
            extra: &args(&[("--init-centroids", &centres)]),
            ..How::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("this run says no sample weights"),
        "{e}"
    );
    launch(&dir, &input, 2, "w3", How::with(&a).resume()).unwrap();
    let resumed = report(&dir, "w3");
    assert_eq!(resumed.0.resumed_from, Some(one.0.iterations));
    assert_same(&one, &resumed);
    let _ = std::fs::remove_dir_all(&dir);
}

/// scikit-learn's contract on the distributed path: a weights file of ones gives, bit for bit,
/// the unweighted result of the same seed (k-means++ on the weighted subsample included).
#[test]
fn unit_weights_equal_the_unweighted_run() {
    let (dir, input, data) = setup("ones");
    let ones = dir.join("ones.f64");
    write_raw(&ones, &vec![1.0; data.nrows()]);
    launch(&dir, &input, 3, "plain", How::default()).unwrap();
    launch(
        &dir,
        &input,
        3,
        "ones",
        How::with(&args(&[("--weights", &ones)])),
    )
    .unwrap();
    let (plain, ones) = (report(&dir, "plain"), report(&dir, "ones"));
    assert_eq!(plain.0.initial_bits, ones.0.initial_bits);
    assert_eq!(plain.0.centroid_bits, ones.0.centroid_bits);
    assert_eq!(plain.0.iterations, ones.0.iterations);
    assert_eq!(plain.0.inertia.to_bits(), ones.0.inertia.to_bits());
    assert_eq!(plain.1, ones.1, "labels");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_weights_and_centroids_fail_on_every_rank() {
    let (dir, input, data) = setup("badw");
    let n = data.nrows();
    // Relaunches are allowed, but a job the worker refuses is not relaunched.
    let fail = |extra: &[OsString]| {
        let how = How {
            restarts: 2,
            ..How::with(extra)
        };
        let e = launch(&dir, &input, 3, "bad", how).unwrap_err().to_string();
        assert!(e.contains("refused the job (not relaunched)"), "{e}");
        e
    };
    // A bad weight in the last rank's shard, then one in the first rank's.
    let mut w = vec![1.0; n];
    w[n - 5] = -1.0;
    let wp = dir.join("w.f64");
    write_raw(&wp, &w);
    let e = fail(&args(&[("--weights", &wp)]));
    assert!(e.contains(&format!("weight {} is -1", n - 5)), "{e}");
    w[n - 5] = 1.0;
    w[10] = f64::NAN;
    write_npy_f32(&dir.join("w.npy"), &w);
    let e = fail(&args(&[("--weights", &dir.join("w.npy"))]));
    assert!(e.contains("weight 10 is NaN"), "{e}");
    // CSV weights: one short (after a header line), then a malformed line.
    let csv = dir.join("w.csv");
    std::fs::write(&csv, format!("weight\n{}", "1\n".repeat(n - 1))).unwrap();
    let e = fail(&args(&[("--weights", &csv)]));
    assert!(e.contains(&format!("expected {n}, found {}", n - 1)), "{e}");
    std::fs::write(&csv, format!("{}0.5 0.5\n", "1\n".repeat(99))).unwrap();
    let e = fail(&args(&[("--weights", &csv)]));
    assert!(
        e.contains("line 100, column 1: 2 values, earlier lines have 1"),
        "{e}"
    );
    write_raw(&wp, &vec![0.0; n]);
    let e = fail(&args(&[("--weights", &wp)]));
    assert!(e.contains("all weights are zero"), "{e}");
    // Given centroids: k - 1 rows, then a NaN.
    let bad = dir.join("bad.npy");
    write_npy(&bad, &Array2::zeros((K - 1, 5))).unwrap();
    let e = fail(&args(&[("--init-centroids", &bad)]));
    assert!(
        e.contains(&format!(
            "given centroids (rows): expected {K}, found {}",
            K - 1
        )),
        "{e}"
    );
    let mut c = Array2::zeros((K, 5));
    c[[2, 3]] = f64::NAN;
    write_npy(&bad, &c).unwrap();
    let e = fail(&args(&[("--init-centroids", &bad)]));
    assert!(e.contains("non-finite"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_fails_cleanly_on_every_rank() {
    let (dir, input, _) = setup("bad");
    let opts = MpiLaunch {
        mpirun: PathBuf::from("mpirun"),
        worker: PathBuf::from(env!("CARGO_BIN_EXE_kmeans-mpi")),
        ranks: 3,
        max_restarts: 0,
        worker_args: vec![input.into_os_string(), "--k".into(), "100000".into()],
        checkpoint: dir.join("ck.json"),
        resume: false,
        first_launch_env: vec![],
    };
    let e = launch_with_restarts(&opts, |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("clusters"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `--algorithm` gives the same distributed result, bit for bit (each rank keeps the
/// bounds of its own rows), and it is the library's.
#[test]
fn every_algorithm_gives_the_same_distributed_result() {
    let (dir, input, _) = setup("algorithms");
    let mut reports = Vec::new();
    for a in ["lloyd", "hamerly", "yinyang", "elkan"] {
        let extra = [OsString::from("--algorithm"), OsString::from(a)];
        launch(&dir, &input, 3, a, How::with(&extra)).unwrap();
        reports.push((a, report(&dir, a)));
    }
    let (_, lloyd) = &reports[0];
    for (a, r) in &reports[1..] {
        assert_eq!(r.0.centroid_bits, lloyd.0.centroid_bits, "{a}");
        assert_eq!(r.0.iterations, lloyd.0.iterations, "{a}");
        assert_eq!(r.0.inertia.to_bits(), lloyd.0.inertia.to_bits(), "{a}");
        assert_eq!(r.1, lloyd.1, "{a} labels");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
