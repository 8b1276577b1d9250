//! The seed's LAP experiments as `warpath reproduce` runs them (see `warpath_report`): each
//! a function of the [`Context`] built on the measuring functions of the parent module.

use gpu_runtime::Exec;
use ndarray::s;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, GpuUse, Row, Spec};

use super::{
    Complexity, CostDist, approximation_table, fit_model, harmonic, harmonic2, int_matrix,
    runtime_series, series_exponent,
};
use crate::generate::seed_6x6;
use crate::{
    AUCTION_FLOAT_GAP, AssignmentError, BRUTE_FORCE_MAX, Sense, Solver, greedy_tie_paths,
    greedy_ties, hungarian, jonker_volgenant, solve,
};

const TIES_TITLE: &str =
    "greedy's tie choice on the seed's 6x6 example, and greedy keeping k tie paths";
const FIG1_TITLE: &str =
    "Figure 1: approximation factors of greedy and random on n x n Exp(1) costs against theory";
const FIG2_TITLE: &str =
    "Figure 2 and Table 1: runtime of each solver against n, fitted complexity models and MSE";

/// The LAP experiments of seed 002.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            id: "lap-ties",
            seed: "002",
            title: TIES_TITLE,
            run: lap_ties,
        },
        Spec {
            id: "lap-fig1",
            seed: "002",
            title: FIG1_TITLE,
            run: lap_fig1,
        },
        Spec {
            id: "lap-fig2",
            seed: "002",
            title: FIG2_TITLE,
            run: lap_fig2,
        },
    ]
}

fn fail(what: &str) -> impl Fn(AssignmentError) -> ExperimentError + '_ {
    move |e| ExperimentError::from_display(what, e)
}

/// `lap-ties`: on the seed's 6 x 6 example, every greedy tie path (the 25 at (3, 3) or at
/// (3, 6), 1-based) and its cost, the optimum, and `greedy --ties K` for K = 1, 2, 4, 8 on
/// the matrix and on its mirror image (where row-major order meets the other 25 first); then
/// the mean cost of `--ties K` over random integer matrices with many ties, against the
/// optimum.
///
/// # Errors
/// A solver failing (none is expected on these matrices).
pub fn lap_ties(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new("lap-ties", "002", TIES_TITLE);
    e.seed_says = "Breaking ties for the minimum uncovered value can result in different costs: \
                   on the 6x6 example choosing 25 at (3,6) yields a cost of 174, the one at \
                   (3,3) gives 167. The next progression in the design of the greedy algorithm \
                   would be to try all minimum positions and keep the top k performing paths."
        .into();
    for (entry, cost) in [("(3, 6)", 174.0), ("(3, 3)", 167.0)] {
        e.seed_rows.push(
            Row::new()
                .with("method", "greedy tie path")
                .with("tie_entry", entry)
                .with("cost", cost),
        );
    }
    e.notes.push(
        "Our greedy breaks ties in row-major order (smaller row, then smaller column), so on \
         the seed's matrix it takes the 25 at (3, 3) and reaches 167; the mirrored matrix \
         (columns reversed) shows the other order, where plain greedy reaches 174. The seed's \
         tie order (its sort) is not specified. `warpath lap FILE --solver greedy --ties K` \
         follows K tie paths."
            .into(),
    );
    let c = seed_6x6();
    let paths = greedy_tie_paths(c.view(), Sense::Minimize, 16).map_err(fail("tie paths"))?;
    for a in &paths {
        // The tie is in row 3 (index 2): which 25 this path took there.
        let col = a.row_to_col[2].map(|j| j + 1);
        e.rows.push(
            Row::new()
                .with("backend", "cpu")
                .with("method", "greedy tie path")
                .with("tie_entry", col.map(|j| format!("(3, {j})")))
                .with("cost", a.cost),
        );
    }
    let optimum = hungarian(c.view(), Sense::Minimize).map_err(fail("the optimum"))?;
    let jv = jonker_volgenant(c.view(), Sense::Minimize).map_err(fail("the optimum"))?;
    e.rows.push(
        Row::new()
            .with("backend", "cpu")
            .with("method", "optimum (hungarian; jv agrees)")
            .with("cost", optimum.cost)
            .with("verified", optimum.cost == jv.cost),
    );
    let mirrored = c.slice(s![.., ..;-1]);
    for (name, m) in [("seed matrix", c.view()), ("mirrored columns", mirrored)] {
        for k in [1usize, 2, 4, 8] {
            let a = greedy_ties(m, Sense::Minimize, k).map_err(fail("greedy --ties"))?;
            e.rows.push(
                Row::new()
                    .with("backend", "cpu")
                    .with("method", format!("greedy --ties {k}, {name}"))
                    .with("k", k)
                    .with("cost", a.cost),
            );
        }
    }
    // Beyond the example: integer costs in [0, 9] tie everywhere.
    // (30 x 30: larger matrices of [0, 9] hold a perfect matching of zeros, optimum 0.)
    let (n, samples) = (30usize, ctx.pick(20usize, 120));
    ctx.progress(&format!("{samples} tie-heavy {n}x{n} matrices"));
    let ks = [1usize, 2, 4, 8, 16, 32];
    let mut sums = vec![0.0; ks.len()];
    let mut opt = 0.0;
    let mut never_worse = true;
    for s in 0..samples {
        let m = int_matrix(n, n, 9, 0x7153 + s as u64).mapv(|v| v as f64);
        opt += jonker_volgenant(m.view(), Sense::Minimize)
            .map_err(fail("the optimum"))?
            .cost;
        let mut first = f64::INFINITY;
        for (i, &k) in ks.iter().enumerate() {
            let cost = greedy_ties(m.view(), Sense::Minimize, k)
                .map_err(fail("greedy --ties"))?
                .cost;
            if i == 0 {
                first = cost;
            }
            never_worse &= cost <= first;
            sums[i] += cost;
        }
    }
    for (i, &k) in ks.iter().enumerate() {
        e.rows.push(
            Row::new()
                .with("backend", "cpu")
                .with(
                    "method",
                    format!("greedy --ties {k}, {samples} int [0, 9] {n}x{n} matrices"),
                )
                .with("k", k)
                .with("cost", sums[i] / samples as f64)
                .with("mean_factor", sums[i] / opt)
                .with("verified", never_worse),
        );
    }
    e.notes.push(format!(
        "The tie-heavy rows: {samples} matrices of {n}x{n} i.i.d. integers in [0, 9], mean cost \
         and mean cost / mean optimum (Jonker-Volgenant); `verified` says no K was worse than \
         K = 1 on any matrix."
    ));
    e.figure = Some(
        FigureSpec::lines("k", &["mean_factor"])
            .title("greedy keeping k tie paths: mean cost / optimum on tie-heavy matrices")
            .log(true, false)
            .labels("k (tie paths kept)", "mean greedy cost / mean optimum"),
    );
    Ok(e)
}

/// The sizes of Figure 1: every `n` to 20, then about 12 per decade to `max`.
fn fig1_sizes(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=20.min(max)).collect();
    let mut x = 20.0f64;
    while (x as usize) < max {
        x *= 10f64.powf(1.0 / 12.0);
        let n = (x.round() as usize).min(max);
        if v.last() != Some(&n) {
            v.push(n);
        }
    }
    v
}

/// `lap-fig1`: for each `n` (1 to 1000 in `--full`, 120 matrices each; to 200 with 40 in
/// `--quick`), the mean greedy and random costs over the mean optimal cost
/// (Jonker–Volgenant) of the same Exp(1) matrices, beside the seed's theory `H_n / H_n^(2)`
/// and `n / H_n^(2)`.
///
/// # Errors
/// A solver failing (none is expected on Exp(1) matrices).
pub fn lap_fig1(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let (max, samples) = ctx.pick((200usize, 40usize), (1000, 120));
    let sizes = fig1_sizes(max);
    let mut e = Experiment::new("lap-fig1", "002", FIG1_TITLE);
    e.seed_says = "Figure 1: the approximation factor of the greedy implementations against \
                   the derived factor alpha_n = H_n / H_n^(2), on 120 n x n standard \
                   exponential matrices for 1 <= n <= 1000 (random: n / H_n^(2); the \
                   expected optimum H_n^(2) tends to pi^2/6). The dashed lines are the seed's \
                   formulas (the figure's image is not in the text)."
        .into();
    for &n in &sizes {
        let h2 = harmonic2(n);
        e.seed_rows.push(
            Row::new()
                .with("n", n)
                .with("greedy_factor", harmonic(n) / h2)
                .with("random_factor", n as f64 / h2),
        );
    }
    e.notes.push(format!(
        "{} sizes from 1 to {max} (every n to 20, then 12 per decade), {samples} matrices each; \
         the factor is mean cost / mean optimal cost over the same matrices, as the seed \
         defines it (a ratio of expectations). The seed's greedy expectation H_n follows from \
         its memoryless argument; compare our greedy_factor with theory_factor.",
        sizes.len()
    ));
    let done = std::cell::Cell::new(0usize);
    let table = approximation_table(&sizes, samples, 2017, |k| {
        done.set(done.get() + k);
        if done.get().is_multiple_of(samples) {
            ctx.progress(&format!("n {} of {max}", sizes[done.get() / samples - 1]));
        }
    })
    .map_err(fail("the approximation table"))?;
    for r in table {
        e.rows.push(
            Row::new()
                .with("backend", "cpu")
                .with("n", r.n)
                .with("samples", r.samples)
                .with("optimal_mean", r.optimal_mean)
                .with("optimal_theory", r.optimal_theory)
                .with("greedy_factor", r.greedy_factor)
                .with("theory_factor", r.greedy_theory)
                .with("random_factor", r.random_factor)
                .with("random_theory_factor", r.random_theory),
        );
    }
    e.figure = Some(
        FigureSpec::lines("n", &["greedy_factor", "random_factor"])
            .title("approximation factor on n x n Exp(1) costs (dashed: the seed's theory)")
            .log(true, true)
            .labels("n", "mean cost / mean optimal cost"),
    );
    Ok(e)
}

/// `lap-fig2`: the median time of each solver (brute force, random, greedy, Hungarian — the
/// seed's four — and Jonker–Volgenant and the auction, ours) against `n` on Exp(1) matrices,
/// with the seed's model `scale * f(n)` (Table 2's complexity) fitted by least squares, its
/// mean square error, and the log-log slope; GPU rows for the auction and brute force where a
/// GPU is usable.
///
/// # Errors
/// A solver failing (none is expected on Exp(1) matrices).
pub fn lap_fig2(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let reps = ctx.pick(3, 7);
    let poly: Vec<usize> = ctx.pick(
        vec![2, 5, 10, 20, 50, 100, 200, 400],
        vec![
            2, 5, 10, 20, 50, 100, 150, 200, 300, 400, 500, 600, 700, 800, 900, 1000,
        ],
    );
    let brute: Vec<usize> = (2..=ctx.pick(9, 11)).collect();
    let mut e = Experiment::new("lap-fig2", "002", FIG2_TITLE);
    e.seed_says = "Figure 2: runtime of brute force, random, greedy and Hungarian against n on \
                   Exp(1) matrices (outliers rejected; -O3, Xeon E3-1245 v5 3.5 GHz). Table 1: \
                   mean square error of the fitted model (the solver's time complexity, fit by \
                   Levenberg-Marquardt) to the mean runtime: HUNGARIAN 0.232998 (the other \
                   solvers' rows and the units are not in the text). Table 2: brute O(n!), \
                   random O(n), greedy O(n^2 log n), Hungarian O(n^3)."
        .into();
    e.seed_rows.push(
        Row::new()
            .with("solver", "hungarian")
            .with("model", "n^3")
            .with("mse", 0.232998),
    );
    e.notes.push(format!(
        "Medians of {reps} runs, each on its own matrix (the seed rejected outliers instead). \
         The fit is least squares of t = scale * f(n) over the sizes, the closed form of the \
         seed's Levenberg-Marquardt on this one-parameter model; `mse_ms2` is in ms^2 (the \
         seed's 0.232998 gives no unit, so it is keyed `mse` apart). `exponent` is the log-log \
         slope (brute force: against n!). Jonker-Volgenant and the auction are ours, fitted \
         to n^3; the auction on real costs is exact to within a gap (AUCTION_FLOAT_GAP)."
    ));
    e.notes.push(
        "Every solver first validates the n^2 entries (NaN, infinities, scale), so random's \
         time grows like n^2 here, not like the seed's O(n) shuffle; brute force's small n \
         are dominated by that setup too."
            .into(),
    );
    let mut runs: Vec<(Solver, Vec<usize>, Exec)> = vec![
        (Solver::BruteForce, brute.clone(), Exec::Cpu),
        (Solver::Random { seed: 1 }, poly.clone(), Exec::Cpu),
        (Solver::Greedy, poly.clone(), Exec::Cpu),
        (Solver::Hungarian, poly.clone(), Exec::Cpu),
        (Solver::JonkerVolgenant, poly.clone(), Exec::Cpu),
        (Solver::Auction, poly.clone(), Exec::Cpu),
    ];
    if ctx.gpu_rows() {
        // The simulator runs kernels on one CPU core: tiny sizes there.
        let sim = ctx.gpu == GpuUse::Simulated;
        let (b, a) = if sim {
            (vec![2, 4, 6], vec![2, 5, 10])
        } else {
            (brute, poly)
        };
        runs.push((Solver::BruteForce, b, Exec::Cuda));
        runs.push((Solver::Auction, a, Exec::Cuda));
    }
    for (solver, sizes, exec) in runs {
        let sizes: Vec<usize> = sizes
            .into_iter()
            .filter(|&n| solver != Solver::BruteForce || n <= BRUTE_FORCE_MAX)
            .collect();
        ctx.progress(&format!(
            "{} on {}",
            solver.name(),
            if exec == Exec::Cuda {
                "the GPU"
            } else {
                "the CPU"
            }
        ));
        let pts = runtime_series(solver, &sizes, reps, 2017, exec, CostDist::Exp)
            .map_err(fail("the runtime series"))?;
        let model = Complexity::of(solver);
        let xy: Vec<(usize, f64)> = pts.iter().map(|p| (p.n, p.seconds)).collect();
        let fit = fit_model(&xy, model);
        for p in &pts {
            let mut row = Row::new()
                .with("solver", solver.name())
                .with("n", p.n)
                .on_backend(ctx, exec == Exec::Cuda)
                .secs("seconds", p.seconds);
            if let Some(f) = fit {
                row = row.secs("model_seconds", f.scale * model.at(p.n));
            }
            if exec == Exec::Cuda {
                // The GPU's answer beside the optimum (Jonker-Volgenant) on one matrix.
                let c = CostDist::Exp.matrix(p.n, 2017);
                let got = solve(c.view(), solver, Sense::Minimize, exec)
                    .map_err(fail("the GPU solve"))?
                    .cost;
                let opt = jonker_volgenant(c.view(), Sense::Minimize)
                    .map_err(fail("the optimum"))?
                    .cost;
                let range = c.iter().fold(0.0f64, |m, &v| m.max(v));
                let gap = AUCTION_FLOAT_GAP * range * 2.0 + 1e-9 * opt.abs().max(1.0);
                row = row
                    .with("cost", got)
                    .with("optimal_cost", opt)
                    .with("verified", (got - opt).abs() <= gap);
            }
            e.rows.push(row);
        }
        let mut row = Row::new()
            .with("solver", solver.name())
            .with("model", model.name())
            .on_backend(ctx, exec == Exec::Cuda);
        if let Some(f) = fit {
            row = row.secs("scale", f.scale).secs("mse_ms2", f.mse * 1e6);
        }
        // A slope of simulated times says nothing: none there.
        let exponent = series_exponent(&pts).filter(|_| !row.is_simulated());
        e.rows.push(row.with("exponent", exponent));
    }
    e.figure = Some(
        FigureSpec::lines("n", &["seconds"])
            .title("median time against n on Exp(1) costs")
            .series(&["solver", "backend"])
            .log(true, true)
            .labels("n", "seconds"),
    );
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::Size;

    fn cells<'a>(e: &'a Experiment, key: &str, value: &str) -> Vec<&'a Row> {
        e.rows
            .iter()
            .filter(|r| r.get_text(key).is_some_and(|v| v.starts_with(value)))
            .collect()
    }

    #[test]
    fn lap_ties_shows_both_tie_choices_the_optimum_and_k_never_worse() {
        let e = lap_ties(&Context::new(Size::Quick)).unwrap();
        let paths: Vec<(String, f64)> = cells(&e, "method", "greedy tie path")
            .iter()
            .map(|r| (r.get_text("tie_entry").unwrap(), r.get_f64("cost").unwrap()))
            .collect();
        assert_eq!(
            paths,
            [("(3, 3)".to_string(), 167.0), ("(3, 6)".to_string(), 174.0)]
        );
        let opt = cells(&e, "method", "optimum")[0];
        assert_eq!(opt.get("verified"), Some(&true.into()));
        assert!(opt.get_f64("cost").unwrap() < 167.0);
        let mirrored: Vec<f64> = cells(&e, "method", "greedy --ties")
            .iter()
            .filter(|r| r.get_text("method").unwrap().ends_with("mirrored columns"))
            .map(|r| r.get_f64("cost").unwrap())
            .collect();
        assert_eq!(mirrored, [174.0, 167.0, 167.0, 167.0]);
        let heavy: Vec<&Row> = e
            .rows
            .iter()
            .filter(|r| r.get("mean_factor").is_some())
            .collect();
        assert_eq!(heavy.len(), 6);
        let f1 = heavy[0].get_f64("mean_factor").unwrap();
        for r in &heavy {
            assert_eq!(r.get("verified"), Some(&true.into()));
            let f = r.get_f64("mean_factor").unwrap();
            assert!((1.0..=f1).contains(&f), "{f} vs {f1}");
        }
        // On ties everywhere, following paths pays.
        assert!(heavy[5].get_f64("mean_factor").unwrap() < f1);
    }

    #[test]
    fn lap_fig1_quick_factors_follow_theory() {
        let e = lap_fig1(&Context::new(Size::Quick)).unwrap();
        assert_eq!(e.rows.len(), fig1_sizes(200).len());
        for r in &e.rows {
            let n = r.get_f64("n").unwrap();
            let (g, gt) = (
                r.get_f64("greedy_factor").unwrap(),
                r.get_f64("theory_factor").unwrap(),
            );
            let (q, qt) = (
                r.get_f64("random_factor").unwrap(),
                r.get_f64("random_theory_factor").unwrap(),
            );
            assert!(g >= 1.0 - 1e-12 && q >= g - 1e-12, "n={n}");
            if n == 1.0 {
                assert!((g - 1.0).abs() < 1e-12 && (q - 1.0).abs() < 1e-12);
            }
            // 40 samples: within 25% of the seed's theory for random; greedy grows like it.
            if n >= 10.0 {
                assert!((q / qt - 1.0).abs() < 0.25, "random n={n}: {q} vs {qt}");
                assert!(g > 1.5 && g < 1.5 * gt, "greedy n={n}: {g} vs {gt}");
            }
            let opt = r.get_f64("optimal_mean").unwrap();
            let h2 = r.get_f64("optimal_theory").unwrap();
            if n >= 20.0 {
                assert!((opt / h2 - 1.0).abs() < 0.1, "optimum n={n}: {opt} vs {h2}");
            }
        }
        assert_eq!(e.seed_rows.len(), e.rows.len());
    }

    #[test]
    fn lap_fig2_quick_times_every_solver_and_fits_its_model() {
        let e = lap_fig2(&Context::new(Size::Quick)).unwrap();
        for s in ["brute", "random", "greedy", "hungarian", "jv", "auction"] {
            let pts: Vec<&Row> = e
                .rows
                .iter()
                .filter(|r| r.get_text("solver").as_deref() == Some(s) && r.get("n").is_some())
                .collect();
            assert!(pts.len() >= 7, "{s}");
            assert!(pts.iter().all(|r| r.get_f64("seconds").unwrap() > 0.0));
            let fit = e
                .rows
                .iter()
                .find(|r| r.get_text("solver").as_deref() == Some(s) && r.get("model").is_some())
                .unwrap();
            assert!(fit.get_f64("scale").unwrap() > 0.0 && fit.get_f64("mse_ms2").unwrap() >= 0.0);
        }
        // Brute force grows like n! (slope against n! near 1), the others polynomially.
        let slope = |s: &str| {
            e.rows
                .iter()
                .find(|r| r.get_text("solver").as_deref() == Some(s) && r.get("model").is_some())
                .and_then(|r| r.get_f64("exponent"))
                .unwrap()
        };
        assert!(slope("brute") > 0.5, "{}", slope("brute"));
        assert!(slope("hungarian") > 1.5, "{}", slope("hungarian"));
    }

    #[test]
    fn fig1_sizes_climb_to_the_top() {
        let v = fig1_sizes(1000);
        assert_eq!(&v[..3], &[1, 2, 3]);
        assert_eq!(*v.last().unwrap(), 1000);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert!(v.len() < 60);
    }

    #[test]
    fn solve_runs_greedy_ties() {
        let c = seed_6x6();
        let m = c.slice(s![.., ..;-1]);
        let a = solve(m, Solver::GreedyTies { k: 2 }, Sense::Minimize, Exec::Cpu).unwrap();
        assert_eq!(a.cost, 167.0);
    }
}
