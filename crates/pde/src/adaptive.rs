//! The adaptive explicit scheme: forward Euler on a non-uniform grid drawn from the uniform
//! grid of [`FhnParams::n`] nodes, regridded every few steps.
//!
//! Each regrid keeps every `coarse_stride`-th node everywhere, every `medium_stride`-th node
//! where `|v_x|` or `|v_t|` exceed their thresholds, and every node within
//! `inflection_radius` of an inflection point (a sign change of `v_xx` on a slope); `margin`
//! extra fine cells around each refined region let a front move between regrids. Derivatives
//! on the non-uniform grid are 3-point Lagrange formulas; values move onto each new grid by
//! linear interpolation. The time step is limited by the finest spacing, so the saving is in
//! nodes per step.

use crate::PdeError;
use crate::params::{Boundary, FhnParams, FhnState, flush_tiny, reaction};

/// Settings of the adaptive grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveOptions {
    /// Spacing (in fine cells) where nothing happens (default 8).
    pub coarse_stride: usize,
    /// Spacing where `|v_x|` or `|v_t|` is above its threshold (default 2).
    pub medium_stride: usize,
    /// Threshold on `|v_x|` (default 0.01).
    pub vx_threshold: f64,
    /// Threshold on `|v_t|` (default 0.001).
    pub vt_threshold: f64,
    /// Fine cells on each side of an inflection point kept at full resolution (default 6).
    pub inflection_radius: usize,
    /// Extra fine cells around every refined region (default 8).
    pub margin: usize,
    /// Steps between regrids (default 10).
    pub regrid_every: u64,
}

impl Default for AdaptiveOptions {
    fn default() -> Self {
        AdaptiveOptions {
            coarse_stride: 8,
            medium_stride: 2,
            vx_threshold: 0.01,
            vt_threshold: 0.001,
            inflection_radius: 6,
            margin: 8,
            regrid_every: 10,
        }
    }
}

/// What an adaptive run did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveStats {
    /// Nodes of the underlying uniform grid.
    pub uniform_nodes: usize,
    /// Mean nodes per step.
    pub mean_nodes: f64,
    /// Fewest nodes in a step.
    pub min_nodes: usize,
    /// Most nodes in a step.
    pub max_nodes: usize,
    /// Regrids done.
    pub regrids: u64,
    /// Steps taken.
    pub steps: u64,
}

/// 3-point Lagrange first and second derivatives at the middle of `(x0, x1, x2)`.
#[inline]
fn lagrange3(x: [f64; 3], v: [f64; 3]) -> (f64, f64) {
    let h1 = x[1] - x[0];
    let h2 = x[2] - x[1];
    let d1 =
        -h2 / (h1 * (h1 + h2)) * v[0] + (h2 - h1) / (h1 * h2) * v[1] + h1 / (h2 * (h1 + h2)) * v[2];
    let d2 = 2.0 * (h1 * v[2] - (h1 + h2) * v[1] + h2 * v[0]) / (h1 * h2 * (h1 + h2));
    (d1, d2)
}

/// Derivatives at node `j` of a non-uniform grid, mirroring across no-flux ends.
#[inline]
fn derivs(x: &[f64], v: &[f64], j: usize) -> (f64, f64) {
    let m = x.len();
    if j == 0 {
        let h = x[1] - x[0];
        lagrange3([x[0] - h, x[0], x[1]], [v[1], v[0], v[1]])
    } else if j == m - 1 {
        let h = x[m - 1] - x[m - 2];
        lagrange3(
            [x[m - 2], x[m - 1], x[m - 1] + h],
            [v[m - 2], v[m - 1], v[m - 2]],
        )
    } else {
        lagrange3([x[j - 1], x[j], x[j + 1]], [v[j - 1], v[j], v[j + 1]])
    }
}

/// Linear interpolation of `(xs, ys)` (increasing `xs`) at the increasing points `at`.
fn interpolate(xs: &[f64], ys: &[f64], at: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let mut k = 0;
    for &x in at {
        while k + 2 < xs.len() && xs[k + 1] < x {
            k += 1;
        }
        if xs.len() == 1 {
            out.push(ys[0]);
            continue;
        }
        let (x0, x1) = (xs[k], xs[k + 1]);
        let t = ((x - x0) / (x1 - x0)).clamp(0.0, 1.0);
        out.push(if t == 0.0 {
            ys[k]
        } else if t == 1.0 {
            ys[k + 1]
        } else {
            ys[k] + t * (ys[k + 1] - ys[k])
        });
    }
}

/// Chooses the new node set (fine indices) from the current nodes and values.
fn choose_nodes(
    opts: &AdaptiveOptions,
    nf: usize,
    nodes: &[usize],
    x: &[f64],
    v: &[f64],
    vt: &[f64],
) -> Vec<usize> {
    // level per fine index via a difference array per level: 1 = medium, 2 = fine.
    let mut med = vec![0i32; nf + 1];
    let mut fine = vec![0i32; nf + 1];
    let mark = |arr: &mut Vec<i32>, lo: isize, hi: isize| {
        let lo = lo.max(0) as usize;
        let hi = (hi.max(-1) + 1).min(nf as isize) as usize;
        if lo < hi {
            arr[lo] += 1;
            arr[hi] -= 1;
        }
    };
    let m = nodes.len();
    let margin = opts.margin as isize;
    let mut prev_d2 = 0.0;
    for j in 0..m {
        let (d1, d2) = derivs(x, v, j);
        let lo = nodes[j.saturating_sub(1)] as isize - margin;
        let hi = nodes[(j + 1).min(m - 1)] as isize + margin;
        if d1.abs() > opts.vx_threshold || vt[j].abs() > opts.vt_threshold {
            mark(&mut med, lo, hi);
        }
        if j > 0 && (d2 > 0.0) != (prev_d2 > 0.0) && d2 != 0.0 && prev_d2 != 0.0 {
            let d1p = derivs(x, v, j - 1).0;
            if d1.abs().max(d1p.abs()) > opts.vx_threshold {
                let r = opts.inflection_radius as isize + margin;
                mark(&mut fine, nodes[j - 1] as isize - r, nodes[j] as isize + r);
            }
        }
        prev_d2 = d2;
    }
    let (cs, ms) = (opts.coarse_stride.max(1), opts.medium_stride.max(1));
    let mut out = Vec::with_capacity(nf / cs + 2);
    let (mut lm, mut lf) = (0i32, 0i32);
    for i in 0..nf {
        lm += med[i];
        lf += fine[i];
        if i % cs == 0 || i == nf - 1 || lf > 0 || (lm > 0 && i % ms == 0) {
            out.push(i);
        }
    }
    out
}

/// Advances `state` (given and returned on the uniform grid of `p.n` nodes) by `steps`
/// forward Euler steps on an adaptive non-uniform grid, and reports the node counts.
///
/// # Complexity
/// `O(m)` per step for `m` active nodes, plus `O(n)` per regrid.
///
/// # Errors
/// [`PdeError::Unstable`] when `p.dt` is above the limit for the finest spacing `p.dx()`;
/// [`PdeError::InvalidParameter`] (also for zero strides or `regrid_every`);
/// [`PdeError::LengthMismatch`].
///
/// # Examples
/// ```
/// use pde::{AdaptiveOptions, FhnParams, FhnState, adaptive_run};
/// let p = FhnParams::default();
/// let mut s = FhnState::rest(p.n);
/// for (i, v) in s.v.iter_mut().enumerate() {
///     let x = i as f64 * p.dx();
///     *v = (-(x - 100.0) * (x - 100.0) / 10.0).exp();
/// }
/// let stats = adaptive_run(&p, &mut s, 200, &AdaptiveOptions::default())?;
/// assert!(stats.mean_nodes < p.n as f64);
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn adaptive_run(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    opts: &AdaptiveOptions,
) -> Result<AdaptiveStats, PdeError> {
    p.validate()?;
    p.refuse_copy_ends(
        "copy ends (the seed's v_0 = v_1) are implemented for the explicit scheme only",
    )?;
    state.check_len(p.n)?;
    let dxf = p.dx();
    p.check_explicit_dt(dxf)?;
    for (name, v) in [
        ("coarse_stride", opts.coarse_stride as f64),
        ("medium_stride", opts.medium_stride as f64),
        ("regrid_every", opts.regrid_every as f64),
    ] {
        if v < 1.0 {
            return Err(PdeError::InvalidParameter {
                name,
                value: v,
                reason: "must be at least 1",
            });
        }
    }
    for (name, v) in [
        ("vx_threshold", opts.vx_threshold),
        ("vt_threshold", opts.vt_threshold),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(PdeError::InvalidParameter {
                name,
                value: v,
                reason: "must be finite and >= 0",
            });
        }
    }
    let nf = p.n;
    let fine_x = p.grid();
    // Start from the full uniform grid, then regrid at once.
    let mut nodes: Vec<usize> = (0..nf).collect();
    let mut x = fine_x.clone();
    let mut v = state.v.clone();
    let mut w = state.w.clone();
    let mut vt = vec![0.0; nf];
    let mut vn = Vec::new();
    let mut wn = Vec::new();
    let mut tmp = Vec::new();
    let mut stats = AdaptiveStats {
        uniform_nodes: nf,
        mean_nodes: 0.0,
        min_nodes: usize::MAX,
        max_nodes: 0,
        regrids: 0,
        steps: 0,
    };
    let mut node_sum = 0u64;
    let dt = p.dt;
    for step in 0..steps {
        if step % opts.regrid_every == 0 {
            let new_nodes = choose_nodes(opts, nf, &nodes, &x, &v, &vt);
            if new_nodes != nodes {
                let new_x: Vec<f64> = new_nodes.iter().map(|&i| fine_x[i]).collect();
                interpolate(&x, &v, &new_x, &mut tmp);
                std::mem::swap(&mut v, &mut tmp);
                interpolate(&x, &w, &new_x, &mut tmp);
                std::mem::swap(&mut w, &mut tmp);
                interpolate(&x, &vt, &new_x, &mut tmp);
                std::mem::swap(&mut vt, &mut tmp);
                nodes = new_nodes;
                x = new_x;
            }
            stats.regrids += 1;
        }
        let m = nodes.len();
        vn.clear();
        wn.clear();
        for j in 0..m {
            let fixed = match (j, p.left, p.right) {
                (0, Boundary::Dirichlet(val), _) => Some(val),
                (j, _, Boundary::Dirichlet(val)) if j == m - 1 => Some(val),
                _ => None,
            };
            let (_, vxx) = derivs(&x, &v, j);
            let wj = w[j];
            let vj = fixed.unwrap_or(v[j]);
            let new_v = match fixed {
                Some(val) => val,
                None => flush_tiny(vj + dt * (vxx + reaction(vj, p.a) - wj)),
            };
            vn.push(new_v);
            wn.push(flush_tiny(wj + dt * p.eps * (vj - p.gamma * wj)));
        }
        for j in 0..m {
            vt[j] = (vn[j] - v[j]) / dt;
        }
        std::mem::swap(&mut v, &mut vn);
        std::mem::swap(&mut w, &mut wn);
        node_sum += m as u64;
        stats.min_nodes = stats.min_nodes.min(m);
        stats.max_nodes = stats.max_nodes.max(m);
        stats.steps += 1;
    }
    if steps > 0 {
        interpolate(&x, &v, &fine_x, &mut state.v);
        interpolate(&x, &w, &fine_x, &mut state.w);
        stats.mean_nodes = node_sum as f64 / steps as f64;
    } else {
        stats.min_nodes = nf;
        stats.max_nodes = nf;
        stats.mean_nodes = nf as f64;
    }
    state.t += steps as f64 * dt;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit_run;
    use gpu_runtime::Exec;

    fn gaussian(p: &FhnParams) -> FhnState {
        let mut s = FhnState::rest(p.n);
        for (i, v) in s.v.iter_mut().enumerate() {
            let x = i as f64 * p.dx();
            *v = (-(x - p.length / 2.0).powi(2) / 10.0).exp();
        }
        s
    }

    #[test]
    fn lagrange_is_exact_for_quadratics() {
        let x = [0.3, 0.5, 1.4];
        let f = |t: f64| 2.0 * t * t - 3.0 * t + 1.0;
        let (d1, d2) = lagrange3(x, [f(x[0]), f(x[1]), f(x[2])]);
        assert!((d1 - (4.0 * 0.5 - 3.0)).abs() < 1e-12);
        assert!((d2 - 4.0).abs() < 1e-12);
        let mut out = Vec::new();
        interpolate(
            &[0.0, 1.0, 3.0],
            &[0.0, 2.0, 6.0],
            &[0.0, 0.5, 1.0, 2.0, 3.0],
            &mut out,
        );
        assert_eq!(out, vec![0.0, 1.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn full_resolution_equals_the_uniform_scheme() {
        let p = FhnParams {
            right: Boundary::Dirichlet(1.0),
            ..FhnParams::default()
        };
        let mut a = gaussian(&p);
        a.apply_boundaries(&p);
        let mut u = a.clone();
        let opts = AdaptiveOptions {
            coarse_stride: 1,
            ..AdaptiveOptions::default()
        };
        let st = adaptive_run(&p, &mut a, 300, &opts).unwrap();
        assert_eq!(st.max_nodes, p.n);
        explicit_run(&p, &mut u, 300, Exec::Cpu).unwrap();
        for (x, y) in a.v.iter().zip(&u.v) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }

    #[test]
    fn fewer_nodes_small_error_against_fine_uniform_run() {
        let p = FhnParams {
            t_end: 40.0,
            ..FhnParams::default()
        };
        let steps = p.steps();
        let mut a = gaussian(&p);
        let mut u = a.clone();
        let st = adaptive_run(&p, &mut a, steps, &AdaptiveOptions::default()).unwrap();
        explicit_run(&p, &mut u, steps, Exec::Cpu).unwrap();
        let rmse =
            (a.v.iter()
                .zip(&u.v)
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>()
                / p.n as f64)
                .sqrt();
        assert!(st.mean_nodes < 0.6 * p.n as f64, "{st:?}");
        assert!(rmse < 0.02, "rmse {rmse}, {st:?}");
        // the pulses really travelled (not a trivially flat solution)
        assert!(u.v.iter().cloned().fold(f64::MIN, f64::max) > 0.6);
    }

    /// Valid adaptive options: strides up to 16 (the medium one a divisor's share of the
    /// coarse one), thresholds and radii across their useful ranges.
    fn any_options() -> impl proptest::strategy::Strategy<Value = AdaptiveOptions> {
        use proptest::strategy::Strategy;
        let ranges = (
            1usize..17,
            1usize..5,
            0.0f64..0.2,
            0.0f64..0.05,
            0usize..10,
            0usize..10,
            1u64..20,
        );
        ranges.prop_map(
            |(coarse, medium_div, vx, vt, radius, margin, regrid)| AdaptiveOptions {
                coarse_stride: coarse,
                medium_stride: (coarse / medium_div).max(1),
                vx_threshold: vx,
                vt_threshold: vt,
                inflection_radius: radius,
                margin,
                regrid_every: regrid,
            },
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        #[test]
        fn prop_adaptive_runs_stay_sane(
            opts in any_options(),
            steps in 0u64..200,
            pulse in proptest::prelude::any::<bool>(),
        ) {
            let p = FhnParams {
                n: 201,
                length: 100.0,
                right: if pulse { Boundary::Dirichlet(1.0) } else { Boundary::NoFlux },
                ..FhnParams::default()
            };
            let mut s = gaussian(&p);
            s.apply_boundaries(&p);
            let st = adaptive_run(&p, &mut s, steps, &opts).unwrap();
            proptest::prop_assert_eq!(s.v.len(), 201);
            proptest::prop_assert!(s.v.iter().chain(&s.w).all(|x| x.is_finite() && x.abs() < 2.0));
            proptest::prop_assert!(st.max_nodes <= 201);
            proptest::prop_assert!(st.min_nodes >= 200 / opts.coarse_stride);
            if pulse {
                proptest::prop_assert_eq!(s.v[200], 1.0);
            }
        }
    }

    #[test]
    fn bad_options_are_errors() {
        let p = FhnParams::default();
        let mut s = FhnState::rest(p.n);
        let bad = AdaptiveOptions {
            coarse_stride: 0,
            ..AdaptiveOptions::default()
        };
        assert!(matches!(
            adaptive_run(&p, &mut s, 1, &bad),
            Err(PdeError::InvalidParameter { .. })
        ));
        let unstable = FhnParams { dt: 1.0, ..p };
        assert!(matches!(
            adaptive_run(&unstable, &mut s, 1, &AdaptiveOptions::default()),
            Err(PdeError::Unstable { .. })
        ));
    }
}
