//! Model parameters, boundary conditions, the state, and the explicit stability limit.

use crate::PdeError;

/// What holds at one end of the axon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary {
    /// No flux: `v_x = 0` (discretised with a mirrored ghost node, second order).
    NoFlux,
    /// `v` is held at this value (e.g. `v(L, t) = 1`, an excited end).
    Dirichlet(f64),
    /// No flux as the seed discretises it: after every step the end node takes its
    /// neighbour's values (`v_0 = v_1`, `w_0 = w_1`), so the flux vanishes half a cell inside
    /// the end (first order). Only the explicit scheme on the CPU takes it (by its reference
    /// step); the other schemes and the GPU refuse it with [`PdeError::InvalidParameter`].
    Copy,
}

/// Which stability limit the explicit scheme checks `dt` against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LimitRule {
    /// `dt <= 2 / (4/dx^2 + K)`, counting the reaction's stiffness `K` over
    /// [`FhnParams::v_range`] and `dt <= 2 / (eps gamma)` (see [`FhnParams::stability_limit`]).
    #[default]
    WithReaction,
    /// The seed's `2 dt <= dx^2`: diffusion alone. Steps between the two limits run, and may
    /// grow where the reaction is stiff.
    DiffusionOnly,
}

/// Parameters of the FitzHugh–Nagumo system
/// `v_t = v_xx + v (1 - v)(v - a) - w`, `w_t = eps (v - gamma w)` on `[0, length]`,
/// and of its discretisation.
///
/// The defaults are the seed's set-up: `a = 0.01`, `gamma = 2`, `eps = 0.01`, `n = 401` nodes
/// with `dx = 0.5` (so `length = 200`); then `dt = 0.05` (below the explicit stability limit,
/// about 0.116 there), `t_end = 100`, no flux at both ends, and the state range `[-0.4, 1.0]`
/// (pulses dip to about -0.33 with these parameters) over which the reaction stiffness is
/// bounded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FhnParams {
    /// Excitation threshold `a` (default 0.01); the Nagumo front moves at `(1 - 2a)/sqrt 2`.
    pub a: f64,
    /// Recovery rate `eps >= 0` (default 0.01; 0 gives the Nagumo equation).
    pub eps: f64,
    /// Recovery coupling `gamma >= 0` (default 2).
    pub gamma: f64,
    /// Domain length `L > 0` (default 200).
    pub length: f64,
    /// Number of grid nodes `n >= 3`, including both ends (default 401, so `dx = L / (n - 1)`).
    pub n: usize,
    /// Time step (default 0.05).
    pub dt: f64,
    /// End time (default 100).
    pub t_end: f64,
    /// Condition at `x = 0` (default no flux).
    pub left: Boundary,
    /// Condition at `x = L` (default no flux; `Dirichlet(1.0)` holds the end excited).
    pub right: Boundary,
    /// `(v_lo, v_hi)`: the range of `v` over which the reaction term's stiffness
    /// `K = max(0, -min f'(v))` enters the explicit stability limit (default `(-0.4, 1.0)`).
    pub v_range: (f64, f64),
    /// The stability limit the explicit scheme enforces (default [`LimitRule::WithReaction`];
    /// [`LimitRule::DiffusionOnly`] is the seed's `2 dt <= dx^2`).
    pub limit_rule: LimitRule,
}

impl Default for FhnParams {
    fn default() -> Self {
        FhnParams {
            a: 0.01,
            eps: 0.01,
            gamma: 2.0,
            length: 200.0,
            n: 401,
            dt: 0.05,
            t_end: 100.0,
            left: Boundary::NoFlux,
            right: Boundary::NoFlux,
            v_range: (-0.4, 1.0),
            limit_rule: LimitRule::WithReaction,
        }
    }
}

/// The reaction term `f(v) = v (1 - v)(v - a)`.
#[inline(always)]
pub fn reaction(v: f64, a: f64) -> f64 {
    v * (1.0 - v) * (v - a)
}

/// Its derivative `f'(v) = -3 v^2 + 2 (1 + a) v - a`.
#[inline(always)]
pub fn reaction_derivative(v: f64, a: f64) -> f64 {
    -3.0 * v * v + 2.0 * (1.0 + a) * v - a
}

/// The explicit scheme's stability limit and its parts (see [`FhnParams::stability_limit`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StabilityLimit {
    /// The largest stable time step.
    pub dt_max: f64,
    /// `4 / dx^2`: the largest decay rate of the discrete Laplacian.
    pub diffusion: f64,
    /// `K = max(0, -min f'(v))` over [`FhnParams::v_range`].
    pub reaction: f64,
    /// `eps * gamma`: the decay rate of `w`.
    pub recovery: f64,
}

impl FhnParams {
    /// Parameters with `n` chosen so that the spacing is `dx` (rounded to a whole number of
    /// cells over `length`).
    ///
    /// ```
    /// let p = pde::FhnParams::default().with_dx(0.25);
    /// assert_eq!(p.n, 801);
    /// assert_eq!(p.dx(), 0.25);
    /// ```
    pub fn with_dx(mut self, dx: f64) -> Self {
        if dx > 0.0 && dx.is_finite() {
            self.n = ((self.length / dx).round() as usize).max(2) + 1;
        }
        self
    }

    /// The Nagumo equation (`eps = 0`, so `w` stays 0) with threshold `a`.
    pub fn nagumo(a: f64) -> Self {
        FhnParams {
            a,
            eps: 0.0,
            v_range: (0.0, 1.0),
            ..FhnParams::default()
        }
    }

    /// The grid spacing `L / (n - 1)`.
    pub fn dx(&self) -> f64 {
        self.length / (self.n.max(2) - 1) as f64
    }

    /// The node positions `x_i = i dx`.
    pub fn grid(&self) -> Vec<f64> {
        let dx = self.dx();
        (0..self.n).map(|i| i as f64 * dx).collect()
    }

    /// Number of steps to reach `t_end` (rounded up, so the run ends at or after `t_end`).
    pub fn steps(&self) -> u64 {
        if self.t_end <= 0.0 {
            0
        } else {
            (self.t_end / self.dt - 1e-9).ceil().max(0.0) as u64
        }
    }

    /// Checks every parameter's domain.
    ///
    /// ```
    /// use pde::FhnParams;
    /// assert!(FhnParams::default().validate().is_ok());
    /// assert!(FhnParams { n: 1, ..FhnParams::default() }.validate().is_err());
    /// ```
    ///
    /// # Errors
    /// [`PdeError::InvalidParameter`] naming the first bad parameter.
    pub fn validate(&self) -> Result<(), PdeError> {
        if !self.a.is_finite() {
            return invalid("a", self.a, "must be finite");
        }
        if !(self.eps.is_finite() && self.eps >= 0.0) {
            return invalid("eps", self.eps, "must be finite and >= 0");
        }
        if !(self.gamma.is_finite() && self.gamma >= 0.0) {
            return invalid("gamma", self.gamma, "must be finite and >= 0");
        }
        if !(self.length.is_finite() && self.length > 0.0) {
            return invalid("length", self.length, "must be finite and > 0");
        }
        if self.n < 3 {
            return invalid("n", self.n as f64, "must be at least 3 nodes");
        }
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return invalid("dt", self.dt, "must be finite and > 0");
        }
        if !(self.t_end.is_finite() && self.t_end >= 0.0) {
            return invalid("t_end", self.t_end, "must be finite and >= 0");
        }
        for b in [self.left, self.right] {
            if let Boundary::Dirichlet(v) = b
                && !v.is_finite()
            {
                return invalid("boundary value", v, "must be finite");
            }
        }
        let (lo, hi) = self.v_range;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return invalid("v_range", lo, "must be finite with lo <= hi");
        }
        Ok(())
    }

    /// The explicit (forward Euler) stability limit for grid spacing `dx`.
    ///
    /// Linearised about a state `v`, one Euler step multiplies the highest-frequency mode
    /// (the checkerboard, an exact eigenvector of the no-flux Laplacian with eigenvalue
    /// `-4/dx^2`) by `1 + dt (-4/dx^2 + f'(v))`; the `w` coupling only makes the system less
    /// stiff. Stability over every state in `v_range` therefore needs
    /// `dt <= 2 / (4/dx^2 + K)` with `K = max(0, -min f'(v))`, and `dt <= 2 / (eps gamma)`
    /// for `w`. The bound is sharp where `f'` attains its minimum (tested at `v = 1` for the
    /// Nagumo equation). Under [`LimitRule::DiffusionOnly`] `dt_max` is the seed's
    /// `dx^2 / 2` (the parts are still reported).
    ///
    /// # Complexity
    /// `O(1)`.
    ///
    /// # Examples
    /// ```
    /// use pde::FhnParams;
    /// let p = FhnParams::default(); // dx = 0.5, a = 0.01
    /// let lim = p.stability_limit(p.dx());
    /// assert!((lim.diffusion - 16.0).abs() < 1e-12);
    /// assert!(lim.dt_max < 2.0 / 16.0);
    /// let seed = FhnParams { limit_rule: pde::LimitRule::DiffusionOnly, ..p };
    /// assert_eq!(seed.stability_limit(p.dx()).dt_max, 0.125); // 2 dt <= dx^2
    /// ```
    pub fn stability_limit(&self, dx: f64) -> StabilityLimit {
        let diffusion = 4.0 / (dx * dx);
        let (lo, hi) = self.v_range;
        // f' is a downward parabola: its minimum over an interval is at an end.
        let fmin = reaction_derivative(lo, self.a).min(reaction_derivative(hi, self.a));
        let reaction = (-fmin).max(0.0);
        let recovery = self.eps * self.gamma;
        let mut dt_max = 2.0 / (diffusion + reaction);
        if recovery > 0.0 {
            dt_max = dt_max.min(2.0 / recovery);
        }
        if self.limit_rule == LimitRule::DiffusionOnly {
            dt_max = 2.0 / diffusion;
        }
        StabilityLimit {
            dt_max,
            diffusion,
            reaction,
            recovery,
        }
    }

    /// Whether either end is a [`Boundary::Copy`] end.
    pub fn has_copy_end(&self) -> bool {
        self.left == Boundary::Copy || self.right == Boundary::Copy
    }

    /// Fails with [`PdeError::InvalidParameter`] when either end is [`Boundary::Copy`], which
    /// only the explicit scheme on the CPU implements.
    pub(crate) fn refuse_copy_ends(&self, reason: &'static str) -> Result<(), PdeError> {
        if self.has_copy_end() {
            return invalid("boundary", 0.0, reason);
        }
        Ok(())
    }

    /// Fails with [`PdeError::Unstable`] (stating the limit) when `dt` is above the explicit
    /// stability limit for spacing `dx`.
    ///
    /// # Complexity
    /// `O(1)`.
    ///
    /// # Examples
    /// ```
    /// use pde::{FhnParams, PdeError};
    /// let p = FhnParams { dt: 0.2, ..FhnParams::default() };
    /// match p.check_explicit_dt(p.dx()) {
    ///     Err(PdeError::Unstable { limit, .. }) => assert!(limit < 0.2),
    ///     other => panic!("{other:?}"),
    /// }
    /// ```
    ///
    /// # Errors
    /// [`PdeError::Unstable`].
    pub fn check_explicit_dt(&self, dx: f64) -> Result<StabilityLimit, PdeError> {
        let lim = self.stability_limit(dx);
        if self.dt > lim.dt_max {
            return Err(PdeError::Unstable {
                dt: self.dt,
                limit: lim.dt_max,
                dx,
                diffusion: lim.diffusion,
                reaction: lim.reaction,
            });
        }
        Ok(lim)
    }
}

/// [`PdeError::InvalidParameter`] for parameter `name` with `value`, and why.
pub(crate) fn invalid(
    name: &'static str,
    value: f64,
    reason: &'static str,
) -> Result<(), PdeError> {
    Err(PdeError::InvalidParameter {
        name,
        value,
        reason,
    })
}

/// The state of one axon: `v` and `w` at every node, and the time.
#[derive(Debug, Clone, PartialEq)]
pub struct FhnState {
    /// Membrane potential at each node.
    pub v: Vec<f64>,
    /// Recovery variable at each node.
    pub w: Vec<f64>,
    /// Current time.
    pub t: f64,
}

impl FhnState {
    /// The rest state `v = w = 0` on `n` nodes at `t = 0`.
    pub fn rest(n: usize) -> Self {
        FhnState {
            v: vec![0.0; n],
            w: vec![0.0; n],
            t: 0.0,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// Whether the state has no nodes.
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// Sets the Dirichlet nodes to their values, and copy ends ([`Boundary::Copy`]) to their
    /// neighbours' values.
    pub fn apply_boundaries(&mut self, p: &FhnParams) {
        let n = self.v.len();
        if n < 2 {
            return;
        }
        for (end, inner, b) in [(0, 1, p.left), (n - 1, n - 2, p.right)] {
            match b {
                Boundary::Dirichlet(val) => self.v[end] = val,
                Boundary::Copy => {
                    self.v[end] = self.v[inner];
                    self.w[end] = self.w[inner];
                }
                Boundary::NoFlux => {}
            }
        }
    }

    pub(crate) fn check_len(&self, n: usize) -> Result<(), PdeError> {
        if self.v.len() != n || self.w.len() != n {
            return Err(PdeError::LengthMismatch {
                expected: n,
                got: if self.v.len() != n {
                    self.v.len()
                } else {
                    self.w.len()
                },
            });
        }
        Ok(())
    }
}

/// Replaces values below `1e-30` in magnitude by zero, so that decaying activity never
/// produces subnormal numbers (which slow floating-point units down by up to 100x).
#[inline(always)]
pub fn flush_tiny(x: f64) -> f64 {
    if x.abs() < 1e-30 { 0.0 } else { x }
}
