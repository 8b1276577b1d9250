//! Tests of `warpath fhn`: the flags reach the library's parameters, and bad ones are refused.

use super::*;

fn args(a: &[&str]) -> Args {
    let argv: Vec<&str> = std::iter::once("fhn").chain(a.iter().copied()).collect();
    crate::cli_io::parse_args(&argv).unwrap()
}

#[test]
fn seed_ends_and_constant_input_reach_the_library() {
    let a = args(&["--scenario", "constant", "--ends", "copy", "--t-end", "30"]);
    let p = params(&a).unwrap();
    assert_eq!(
        (p.left, p.right),
        (pde::Boundary::Copy, pde::Boundary::Copy)
    );
    let q = scenario(a.scenario).params(p);
    assert_eq!(q.right, pde::Boundary::Dirichlet(1.0));
    run(a, true).unwrap();
    let e = params(&args(&["--ends", "copy", "--scheme", "implicit"])).unwrap_err();
    assert!(
        e.to_string()
            .contains("--ends copy applies to --scheme explicit only"),
        "{e}"
    );
    assert_eq!(params(&args(&[])).unwrap().left, pde::Boundary::NoFlux);
    // dt = 0.12 is above our limit (0.1156 at dx = 0.5) and below the seed's (0.125)
    let e = run(args(&["--dt", "0.12", "--t-end", "1"]), true).unwrap_err();
    assert!(e.to_string().contains("stability limit"), "{e}");
    run(
        args(&["--dt", "0.12", "--t-end", "1", "--stability-limit", "seed"]),
        true,
    )
    .unwrap();
}

#[test]
fn fhn_implicit_variant_seed_runs_on_the_cpu_only() {
    let base = ["--scheme", "implicit", "--dt", "0.25", "--t-end", "2"];
    let with = |extra: &[&str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        args(&v)
    };
    let a = with(&["--implicit-variant", "seed"]);
    assert_eq!(a.implicit_variant, Some(ImplicitVariantArg::Seed));
    run(a, true).unwrap();
    // the seed's ends are its own, so --ends copy is accepted with the seed variant
    let p = params(&with(&["--implicit-variant", "seed", "--ends", "copy"])).unwrap();
    assert_eq!(p.left, pde::Boundary::Copy);
    run(
        with(&[
            "--implicit-variant",
            "seed",
            "--ends",
            "copy",
            "--backend",
            "cpu",
        ]),
        true,
    )
    .unwrap();
    run(with(&["--implicit-variant", "ours"]), true).unwrap();
    let e = run(
        with(&["--implicit-variant", "seed", "--backend", "cuda"]),
        true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("has no GPU path"), "{e}");
    let e = run(args(&["--implicit-variant", "seed"]), true).unwrap_err();
    assert!(
        e.to_string()
            .contains("--implicit-variant seed applies to --scheme implicit only"),
        "{e}"
    );
}

#[test]
fn min_max_bins_keep_narrow_pulses() {
    let mut v = vec![0.0; 100];
    v[37] = 1.0;
    v[38] = -0.25;
    let b = min_max_bins(&v, 25);
    assert_eq!(b.len(), 8);
    // bin 1 (nodes 25..50): the maximum comes first, then the minimum
    assert_eq!(&b[2..4], &[1.0, -0.25]);
    assert!(b[..2].iter().chain(&b[4..]).all(|&x| x == 0.0));
    assert_eq!(min_max_bins(&[3.0, 1.0, 2.0], 2), vec![3.0, 1.0, 2.0, 2.0]);
}

/// Snapshots go to the files as they are taken, and a plot of a grid above PLOT_WHOLE
/// nodes keeps bins, not whole rows.
#[test]
fn fhn_streams_snapshots_and_bins_large_plots() {
    let dir = std::env::temp_dir().join(format!("warpath-fhn-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let snaps = dir.join("snaps");
    let plot = dir.join("p.svg");
    let n = PLOT_WHOLE + 905;
    let a = args(&[
        "--n",
        &n.to_string(),
        "--length",
        &format!("{}", (n - 1) / 2),
        "--t-end",
        "1",
        "--snapshot-count",
        "4",
        "--snapshots",
        snaps.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    run(a, true).unwrap();
    let bytes = std::fs::read(snaps.join("v.npy")).unwrap();
    let v = warpath_io::npy::read_npy_bytes::<f64>(&bytes).unwrap();
    assert_eq!(v.shape, vec![5, n]);
    assert!(v.data[..n].iter().any(|&x| x > 0.9), "the initial Gaussian");
    assert!(plot.exists() && heatmap_path(&plot).exists());
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("min and max of every 3"),
        "title names the bins"
    );
    let _ = std::fs::remove_dir_all(&dir);

    let mut k = PlotKeeper::default();
    let p = FhnParams {
        n,
        length: ((n - 1) / 2) as f64,
        ..FhnParams::default()
    };
    k.begin(&p, 1).unwrap();
    let ones = vec![1.0; n];
    k.snapshot(0.0, &ones, &ones).unwrap();
    assert_eq!(k.x.len(), k.v[0].len());
    assert_eq!(k.heat_x.len(), k.heat[0].len());
    assert!(k.heat_x.len() <= 400);
    assert_eq!(*k.x.last().unwrap(), p.length);
    assert_eq!(*k.heat_x.last().unwrap(), p.length);
}
