//! Tests of the seed's FitzHugh–Nagumo experiments, in quick size: the ids, and each
//! experiment's rows against the behaviour its notes describe.

use super::*;
use warpath_report::{Context, Experiment, Row, Size};

fn quick() -> Context {
    Context::new(Size::Quick)
}

fn rows<'a>(e: &'a Experiment, key: &str, value: &str) -> Vec<&'a Row> {
    e.rows
        .iter()
        .filter(|r| r.get_text(key).as_deref() == Some(value))
        .collect()
}

#[test]
fn specs_list_the_eight_ids_of_seed_002() {
    let ids: Vec<&str> = specs().iter().map(|s| s.id).collect();
    assert_eq!(
        ids,
        [
            "fhn-fig1-constant",
            "fhn-fig2-gaussian",
            "fhn-orders",
            "fhn-cpu-gpu",
            "fhn-adaptive",
            "fhn-implicit-stability",
            "fhn-newton",
            "fhn-solvers-cpu-gpu"
        ]
    );
    assert!(specs().iter().all(|s| s.seed == "002"));
}

#[test]
fn constant_input_starts_a_left_moving_train_with_both_ends() {
    let e = fig1_constant(&quick()).unwrap();
    let summary = rows(&e, "kind", "summary");
    assert_eq!(summary.len(), 2);
    for r in summary {
        // pulses about one wavelength apart travel left at about 0.6
        let n = r.get_f64("pulses_in_domain").unwrap();
        assert!((2.0..=4.0).contains(&n), "{r:?}");
        let period = r.get_f64("period_at_x150").unwrap();
        assert!((80.0..120.0).contains(&period), "{r:?}");
        let speed = r.get_f64("speed").unwrap();
        assert!((-0.7..-0.5).contains(&speed), "{r:?}");
        assert!(r.get_f64("v_max").unwrap() > 0.8);
    }
    let profiles = rows(&e, "kind", "profile");
    assert_eq!(profiles.len(), 4 * 51);
    // the stimulated end is held at 1
    let end = profiles
        .iter()
        .find(|r| r.get_f64("x") == Some(200.0))
        .unwrap();
    assert_eq!(end.get_f64("v"), Some(1.0));
}

#[test]
fn gaussian_splits_then_vanishes_at_the_ends() {
    let e = fig2_gaussian(&quick()).unwrap();
    for r in rows(&e, "kind", "summary") {
        let collapse = r.get_f64("t_collapse").unwrap();
        let vanish = r.get_f64("t_vanish").unwrap();
        assert!((20.0..80.0).contains(&collapse), "{r:?}");
        assert!(
            (150.0..300.0).contains(&vanish) && vanish > collapse,
            "{r:?}"
        );
        assert!(r.get_f64("speed").unwrap().abs() > 0.5, "{r:?}");
    }
    let peak = rows(&e, "kind", "profile")
        .into_iter()
        .filter(|r| r.get_f64("t") == Some(0.0))
        .filter_map(|r| r.get_f64("v"))
        .fold(0.0, f64::max);
    assert!((peak - 1.0).abs() < 1e-12);
}

#[test]
fn orders_are_the_schemes_orders() {
    let e = orders(&quick()).unwrap();
    let check_variant =
        |variant: &str, method: &str, scheme: &str, axis: &str, want: f64, tol: f64| {
            let os: Vec<f64> = e
                .rows
                .iter()
                .filter(|r| {
                    r.get_text("method").as_deref() == Some(method)
                        && r.get_text("scheme").as_deref() == Some(scheme)
                        && r.get_text("axis").as_deref() == Some(axis)
                        && r.get_text("variant").as_deref() == Some(variant)
                })
                .filter_map(|r| r.get_f64("order"))
                .collect();
            assert_eq!(os.len(), 2, "{variant} {method} {scheme} {axis}");
            for o in os {
                assert!(
                    (o - want).abs() < tol,
                    "{variant} {method} {scheme} {axis}: order {o}"
                );
            }
        };
    // the seed's own implicit variant: order 2 in dt (its Fig. 10) and, here, in dx
    check_variant("seed", "reference", "cn-thomas", "dt", 2.0, 0.3);
    check_variant("seed", "reference", "cn-cr", "dt", 2.0, 0.3);
    check_variant("seed", "reference", "cn-thomas", "dx", 2.0, 0.3);
    // our variant; the failure messages name it too
    let check = |method: &str, scheme: &str, axis: &str, want: f64, tol: f64| {
        check_variant("ours", method, scheme, axis, want, tol)
    };
    check("reference", "explicit", "dx", 2.0, 0.3);
    check("reference", "cn-thomas", "dx", 2.0, 0.3);
    check("reference", "explicit", "dt", 1.0, 0.2);
    check("reference", "cn-thomas", "dt", 2.0, 0.3);
    check("reference", "cn-cr", "dt", 2.0, 0.3);
    check("manufactured", "explicit", "dx", 2.0, 0.25);
    check("manufactured", "cn-thomas", "dx", 2.0, 0.25);
    check("manufactured", "explicit", "dt", 1.0, 0.15);
    check("manufactured", "cn-thomas", "dt", 2.0, 0.2);
}

#[test]
fn discrete_source_removes_the_spatial_error() {
    let m = Manufactured::new(true);
    let coarse = m.implicit_error(2.0, 0.01, 0.5).unwrap();
    let fine = m.implicit_error(0.25, 0.01, 0.5).unwrap();
    assert!(coarse < 1e-5 && fine < 1e-5, "{coarse} {fine}");
    let c = Manufactured::new(false)
        .implicit_error(2.0, 0.01, 0.5)
        .unwrap();
    assert!(c > 10.0 * coarse);
}

#[test]
fn cpu_gpu_times_every_size_and_the_core_is_part_of_the_total() {
    let e = cpu_gpu(&quick()).unwrap();
    let times = rows(&e, "kind", "time");
    assert_eq!(times.len(), 2 * 4); // n = 2^10, 2^12, 2^14, 2^16 on two CPU backends
    for r in &times {
        let (t, c) = (
            r.get_f64("total_s_per_iter").unwrap(),
            r.get_f64("core_s_per_iter").unwrap(),
        );
        // The core loop and the whole iteration are timed in separate runs (medians), so
        // on a loaded machine the core can come out a little above the total: only a
        // gross inversion is a bug.
        assert!(
            c > 0.0 && t > 0.0 && c.is_finite() && t.is_finite(),
            "{r:?}"
        );
        assert!(c <= 3.0 * t, "core far above the total: {r:?}");
    }
    let ratios = rows(&e, "kind", "ratios");
    assert_eq!(ratios[0].get_f64("n"), Some(65536.0));
    let share = ratios[0].get_f64("cpu_core_share").unwrap();
    assert!(share > 0.0 && share <= 3.0, "{share}");
}

#[test]
fn adaptive_grid_uses_fewer_nodes_and_follows_the_uniform_run() {
    let e = adaptive(&quick()).unwrap();
    let div = rows(&e, "case", "divergent impulse");
    assert_eq!(div.len(), 6);
    for r in &div {
        assert!(r.get_f64("node_ratio").unwrap() > 1.5, "{r:?}");
        assert!(r.get_f64("rmse_vs_uniform").unwrap() < 0.05, "{r:?}");
    }
    assert_eq!(rows(&e, "case", "eps = 0").len(), 3);
}

#[test]
fn explicit_blows_up_above_its_limit_and_crank_nicolson_never_does() {
    let e = implicit_stability(&quick()).unwrap();
    let limits = rows(&e, "kind", "limit");
    let explicit = limits
        .iter()
        .find(|r| r.get_text("scheme").as_deref() == Some("explicit"))
        .unwrap();
    let emp = explicit.get_f64("largest_stable_ratio").unwrap();
    let ours = explicit.get_f64("computed_limit_ours").unwrap();
    assert!(ours < 0.5 && ours > 0.45, "{ours}");
    assert!((emp - 0.5).abs() < 0.02 && emp >= ours, "{emp}");
    assert_eq!(explicit.get_f64("first_unbounded_ratio"), Some(0.5));
    for r in limits
        .iter()
        .filter(|r| r.get_text("scheme").as_deref() != Some("explicit"))
    {
        assert!(r.get("first_unbounded_ratio").unwrap().is_null(), "{r:?}");
        let want = if r.get_text("variant").as_deref() == Some("seed") {
            2.0
        } else {
            8.0
        };
        assert!(r.get_f64("largest_stable_ratio").unwrap() >= want, "{r:?}");
    }
    assert_eq!(limits.len(), 6);
    let sweep = rows(&e, "kind", "sweep");
    let at = |s: &str, variant: &str, r: f64| {
        sweep
            .iter()
            .find(|x| {
                x.get_text("scheme").as_deref() == Some(s)
                    && x.get_text("variant").as_deref() == Some(variant)
                    && x.get_f64("dt_over_dx2") == Some(r)
            })
            .and_then(|x| x.get_text("outcome"))
            .unwrap()
    };
    assert_eq!(at("explicit", "ours", 0.45), "bounded");
    assert_eq!(at("explicit", "ours", 0.55), "unbounded");
    for variant in ["ours", "seed"] {
        // the seed's limits (0.9 Thomas, 1.05 cyclic reduction) are passed either way
        for r in [0.9, 1.05, 2.0] {
            assert_eq!(at("cn-thomas", variant, r), "bounded");
            assert_eq!(at("cn-cr", variant, r), "bounded");
        }
    }
}

#[test]
fn newton_converges_quadratically_with_every_solver() {
    let e = newton(&quick()).unwrap();
    let is_seed = |r: &&Row| r.get_text("variant").as_deref() == Some("seed");
    let (seed, rates): (Vec<_>, Vec<_>) = rows(&e, "kind", "rate").into_iter().partition(is_seed);
    assert_eq!(rates.len(), 3);
    for r in rates {
        let q = r.get_f64("max_quadratic_ratio").unwrap();
        assert!(q > 0.0 && q < 10.0, "{r:?}");
        let it = r.get_f64("mean_iterations_to_eps").unwrap();
        assert!((2.0..=6.0).contains(&it), "{r:?}");
    }
    // the seed's variant: q-linear (from the start whose ends are not at rest), the same
    // with Thomas and cyclic reduction
    assert_eq!(seed.len(), 2);
    let lin: Vec<f64> = seed
        .iter()
        .map(|r| r.get_f64("max_linear_ratio").unwrap())
        .collect();
    assert!(lin.iter().all(|&l| (0.1..1.0).contains(&l)), "{lin:?}");
    assert!((lin[0] - lin[1]).abs() < 1e-6, "{lin:?}");
    // every trace ends at round-off
    for r in rows(&e, "kind", "trace") {
        assert!(r.get_f64("update").unwrap() < 1.0);
    }
    let its: Vec<_> = rows(&e, "kind", "iterations")
        .into_iter()
        .filter(|r| !is_seed(r))
        .collect();
    assert_eq!(its.len(), 4 * 3);
    let mean: Vec<f64> = its
        .iter()
        .filter_map(|r| r.get_f64("mean_iterations"))
        .collect();
    assert!(mean.iter().all(|&m| (2.0..10.0).contains(&m)), "{mean:?}");
    assert!(
        mean[0] < mean[mean.len() - 1],
        "more iterations for longer steps"
    );
}

#[test]
fn solvers_agree_with_thomas_and_are_timed() {
    let e = solvers_cpu_gpu(&quick()).unwrap();
    let solves = rows(&e, "kind", "solve");
    assert_eq!(solves.len(), 4 * 3);
    for r in &solves {
        assert!(r.get_f64("max_error_vs_thomas").unwrap() < 1e-10, "{r:?}");
        assert!(r.get_f64("solve_s").unwrap() > 0.0);
    }
    for r in rows(&e, "kind", "run") {
        let it = r.get_f64("newton_per_step").unwrap();
        assert!((1.0..6.0).contains(&it), "{r:?}");
    }
}
