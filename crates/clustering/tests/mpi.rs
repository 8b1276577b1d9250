//! The distributed worker under `mpirun` (feature `mpi`; run by `ci-mpi.sh`): 3 ranks equal
//! 1 rank, a rank killed mid-run is relaunched from the checkpoint (also with another number
//! of ranks) and reaches the same centroids as the uninterrupted run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clustering::checkpoint::from_bits;
use clustering::data::{generate_blobs, write_npy};
use clustering::distributed::DistributedReport;
use clustering::launch::{FAIL_AT_VAR, LaunchOutcome, MpiLaunch, launch_with_restarts};
use clustering::{Init, KMeans};
use ndarray::Array2;

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

fn launch(
    dir: &Path,
    input: &Path,
    ranks: usize,
    tag: &str,
    restarts: usize,
    resume: bool,
    fail_at: Option<&str>,
) -> Result<LaunchOutcome, clustering::KMeansError> {
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
            "5".into(),
            "--tol".into(),
            "0".into(),
            "--out".into(),
            dir.join(format!("{tag}.json")).into_os_string(),
            "--labels".into(),
            dir.join(format!("{tag}.labels")).into_os_string(),
        ]
        .into_iter()
        .collect::<Vec<OsString>>(),
        checkpoint: dir.join(format!("{tag}.ck.json")),
        resume,
        first_launch_env: fail_at
            .map(|f| vec![(FAIL_AT_VAR.into(), f.into())])
            .unwrap_or_default(),
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

#[test]
fn distributed_equals_single_process_and_survives_a_killed_rank() {
    let (dir, input, data) = setup("main");
    let one = launch(&dir, &input, 1, "one", 0, false, None).unwrap();
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
    assert_eq!(lib.labels, single.1);
    assert_eq!(lib.iterations, single.0.iterations);
    for (x, y) in lib.centroids.iter().zip(&single.0.centroids) {
        assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()));
    }

    // Three ranks, uninterrupted.
    launch(&dir, &input, 3, "three", 0, false, None).unwrap();
    assert_same(&single, &report(&dir, "three"));

    // Rank 1 dies after iteration 3; the launcher relaunches from the checkpoint.
    let out = launch(&dir, &input, 3, "killed", 2, false, Some("3:1")).unwrap();
    assert_eq!(out.attempts, 2, "one failure, one resumed launch");
    let killed = report(&dir, "killed");
    assert_eq!(killed.0.resumed_from, Some(3));
    assert_same(&single, &killed);

    // Killed with 3 ranks and no restarts; resumed by hand on 2 ranks.
    let e = launch(&dir, &input, 3, "manual", 0, false, Some("4:2"));
    assert!(e.is_err());
    launch(&dir, &input, 2, "manual", 0, true, None).unwrap();
    let manual = report(&dir, "manual");
    assert_eq!(manual.0.resumed_from, Some(4));
    assert_eq!(manual.0.ranks, 2);
    assert_same(&single, &manual);

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
