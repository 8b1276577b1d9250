//! Every subcommand with a GPU path gives the same result with `--backend cuda` as with
//! `--backend cpu`, run as a user runs them. They need a GPU or warpath's simulated CUDA driver
//! (CI runs them through the simulator: `cargo xtask sim`, then
//! `LD_LIBRARY_PATH=target/cuda-sim WARPATH_SIM=1`); elsewhere each prints `skipped` and passes.
//! Inputs are small: under the simulator every GPU thread is a CPU fiber.

mod common;

use std::path::Path;

use common::{dir, ok_json_or_output, warpath};

/// A fresh folder named after `test` when a GPU (or the simulator) is there; prints `skipped`
/// and gives `None` otherwise.
fn gpu_dir(test: &str) -> Option<common::Folder> {
    gpu_runtime::testing::gpu_for_test(test).map(|_| dir(test))
}

/// A `#[test]` named `$name` whose body runs with `$d` a fresh folder of that name when a GPU
/// (or the simulator) is there; elsewhere it prints `skipped` and passes.
macro_rules! gpu_test {
    ($name:ident, |$d:ident| $body:block) => {
        #[test]
        fn $name() {
            if let Some($d) = gpu_dir(stringify!($name)) $body
        }
    };
}

/// `f` on the CPU backend, then on the GPU one: the two results.
fn on_both<T>(mut f: impl FnMut(&'static str) -> T) -> (T, T) {
    (f("cpu"), f("cuda"))
}

/// Runs `warpath <args> --json --backend <backend>` in `cwd` and returns its JSON, which must
/// say `verified` and name the backend.
fn run(cwd: &Path, args: &[&str], backend: &str) -> serde_json::Value {
    let v = ok_json_or_output(
        warpath()
            .args(args)
            .args(["--json", "--backend", backend])
            .current_dir(cwd),
        &format!("warpath {args:?} --backend {backend}: "),
    );
    assert_eq!(v["backend"], backend, "{args:?}: {v}");
    assert_ne!(v["verified"], false, "{args:?} --backend {backend}: {v}");
    v
}

/// Runs `args` with an output file on both backends and returns the two files' bytes.
fn outputs(cwd: &Path, args: &[&str], file: &str) -> (Vec<u8>, Vec<u8>) {
    on_both(|backend| {
        let name = format!("{backend}-{file}");
        let mut a = args.to_vec();
        a.extend(["-o", &name]);
        run(cwd, &a, backend);
        std::fs::read(cwd.join(&name)).unwrap()
    })
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

/// Every value of a `.npy` file, in order, whatever its shape.
fn read_f64(path: &Path) -> Vec<f64> {
    warpath_io::read_array::<f64>(path).unwrap().data
}

gpu_test!(cuda_backend_sort_and_distinct_match_cpu, |d| {
    for ty in ["u32", "i32", "u64", "i64", "f32", "f64"] {
        for dist in ["uniform", "zipf", "equal"] {
            let base = [
                "--generate",
                "3000",
                "--type",
                ty,
                "--dist",
                dist,
                "--seed",
                "5",
            ];
            let mut sort = vec!["sort"];
            sort.extend(base);
            let (cpu, cuda) = outputs(&d, &sort, "sorted.npy");
            assert_eq!(cpu, cuda, "sort {ty} {dist}");
            sort.push("--descending");
            let (cpu, cuda) = outputs(&d, &sort, "desc.npy");
            assert_eq!(cpu, cuda, "sort --descending {ty} {dist}");
            let mut distinct = vec!["distinct", "--counts"];
            distinct.extend(base);
            let (cpu, cuda) = outputs(&d, &distinct, "distinct.csv");
            assert_eq!(cpu, cuda, "distinct {ty} {dist}");
        }
    }
});

gpu_test!(cuda_backend_euler_circuits_and_paths_verify, |d| {
    // Circuits may differ between the backends (there are many); each is verified by the CLI
    // against the graph, and both must describe the same graph.
    for extra in [
        &["--style", "deep"][..],
        &["--style", "shallow"],
        &["--style", "deep", "--path"],
        &["--style", "shallow", "--undirected"],
        &["--style", "deep", "--undirected", "--path"],
    ] {
        let mut args = vec!["euler", "--generate", "3001", "--seed", "3", "--discard"];
        args.extend(extra);
        let (c, g) = on_both(|backend| run(&d, &args, backend));
        assert_eq!(g["verified"], true, "{args:?}");
        for key in ["n", "vertices", "kind", "undirected"] {
            assert_eq!(c[key], g[key], "{args:?} {key}");
        }
    }
});

gpu_test!(
    cuda_backend_permutations_search_and_de_bruijn_match_cpu,
    |d| {
        let (cpu, cuda) = outputs(&d, &["perm", "--n", "7"], "perms.npy");
        assert_eq!(cpu, cuda, "all 7! permutations");
        let (cpu, cuda) = outputs(
            &d,
            &["perm", "--n", "9", "--start", "1000", "--count", "5000"],
            "range.npy",
        );
        assert_eq!(cpu, cuda, "a range of 9!");
        for objective in ["assignment", "tour"] {
            let args = ["perm", "--n", "8", "--search", objective, "--seed", "4"];
            let (c, g) = on_both(|backend| run(&d, &args, backend));
            for key in ["rank", "score", "permutation", "evaluated"] {
                assert_eq!(c[key], g[key], "search {objective}: {key}");
            }
        }
        let args = [
            "debruijn",
            "--alphabet",
            "3",
            "--k",
            "6",
            "--construction",
            "euler",
        ];
        let (c, g) = on_both(|backend| run(&d, &args, backend));
        // An Euler circuit of the De Bruijn graph: the backends may walk different ones, each
        // verified by the CLI as a De Bruijn sequence.
        assert_eq!((&c["length"], &g["length"]), (&729.into(), &729.into()));
        assert_eq!(g["verified"], true, "De Bruijn B(3, 6) on the GPU");
    }
);

gpu_test!(cuda_backend_assignment_matches_cpu, |d| {
    for (solver, n, dist) in [
        ("auction", "40", "int"),
        ("auction", "33", "uniform"),
        ("brute", "8", "exp"),
    ] {
        for sense in [&[][..], &["--maximize"]] {
            let mut args = vec!["lap", "--generate", n, "--dist", dist, "--solver", solver];
            args.extend(sense);
            let (c, g) = on_both(|backend| run(&d, &args, backend));
            let (a, b) = (c["cost"].as_f64().unwrap(), g["cost"].as_f64().unwrap());
            if dist == "int" {
                assert_eq!(a, b, "{args:?}");
            } else {
                assert!(close(a, b, 1e-9), "{args:?}: {a} vs {b}");
            }
        }
    }
});

gpu_test!(cuda_backend_kmeans_matches_cpu, |d| {
    let runs = on_both(|backend| {
        let l = format!("{backend}-labels.npy");
        let c = format!("{backend}-centroids.npy");
        let args = [
            "kmeans",
            "--generate",
            "3000",
            "--dim",
            "3",
            "--k",
            "5",
            "--seed",
            "2",
            "--labels",
            &l,
            "--centroids",
            &c,
        ];
        let v = run(&d, &args, backend);
        let labels = std::fs::read(d.join(&l)).unwrap();
        (v, labels, read_f64(&d.join(&c)))
    });
    let ((c, cpu_labels, cpu_centroids), (g, gpu_labels, gpu_centroids)) = (&runs.0, &runs.1);
    assert_eq!(cpu_labels, gpu_labels, "labels");
    assert_eq!(c["iterations"], g["iterations"]);
    assert_eq!(cpu_centroids.len(), 15);
    for (a, b) in cpu_centroids.iter().zip(gpu_centroids) {
        assert!(close(*a, *b, 1e-9), "centroid {a} vs {b}");
    }
    let (a, b) = (
        c["inertia"].as_f64().unwrap(),
        g["inertia"].as_f64().unwrap(),
    );
    assert!(close(a, b, 1e-9), "inertia {a} vs {b}");
});

gpu_test!(cuda_backend_fitzhugh_nagumo_matches_cpu, |d| {
    // The explicit scheme, and the implicit one with each tridiagonal solver of the GPU path.
    for scheme in [
        &["--scheme", "explicit"][..],
        &["--scheme", "implicit", "--solver", "thomas"],
        &["--scheme", "implicit", "--solver", "cr"],
        &["--scheme", "implicit", "--solver", "pcr"],
    ] {
        let (cpu, gpu) = on_both(|backend| {
            let snaps = format!("{backend}-{}", scheme.join("-"));
            let mut args = vec!["fhn", "--n", "101", "--t-end", "5", "--snapshots", &snaps];
            args.extend(scheme);
            run(&d, &args, backend);
            read_f64(&d.join(&snaps).join("v.npy"))
        });
        assert_eq!(cpu.len(), gpu.len(), "{scheme:?}");
        for (a, b) in cpu.iter().zip(&gpu) {
            assert!(close(*a, *b, 1e-9), "{scheme:?}: {a} vs {b}");
        }
    }
});

gpu_test!(cuda_kmers_and_assemble_equal_cpu, |d| {
    let genome = assembly::random_genome(2_000, 9);
    let reads = assembly::simulate_reads(&genome, 80, 6.0, 0.01, 10);
    std::fs::write(d.join("r.fa"), assembly::reads_to_fasta(&reads)).unwrap();
    let (cpu, cuda) = outputs(
        &d,
        &["kmers", "r.fa", "--k", "21", "--min-count", "1"],
        "c.txt",
    );
    assert!(!cpu.is_empty());
    assert_eq!(cpu, cuda, "k-mer counts differ between backends");
    // a circular piece beside the genome: a cycle for the GPU compaction to cut
    let circle = assembly::random_genome(300, 11);
    let mut reads = reads;
    for _ in 0..2 {
        let mut c = circle.clone();
        c.extend_from_slice(&circle[..20]);
        reads.push(c);
    }
    std::fs::write(d.join("r.fa"), assembly::reads_to_fasta(&reads)).unwrap();
    let both = on_both(|backend| {
        let (u, g) = (format!("{backend}-u.fa"), format!("{backend}-g.gfa"));
        let v = run(
            &d,
            &[
                "assemble",
                "r.fa",
                "--k",
                "21",
                "--min-count",
                "1",
                "--unitigs",
                &u,
                "--gfa",
                &g,
            ],
            backend,
        );
        // --backend cuda compacts on the GPU too
        assert_eq!(v["compaction_backend"], backend, "{v}");
        assert!(v["circular_unitigs"].as_u64().unwrap() >= 1, "{v}");
        (
            std::fs::read(d.join(&u)).unwrap(),
            std::fs::read(d.join(&g)).unwrap(),
        )
    });
    assert_eq!(both.0.0, both.1.0, "unitigs differ between backends");
    assert_eq!(both.0.1, both.1.1, "GFA differs between backends");
});
