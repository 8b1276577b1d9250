//! The centres and error bounds of the fused kernel's bfloat16 pass (AVX-512 BF16; the
//! kernel itself is in `fused/bf16.rs`): each point's values against every centre from
//! bfloat16 products, at twice the multiply-adds per instruction of the `f32` kernel and four
//! times the `f64` kernel's, then its label settled exactly from the few centres the values
//! leave in doubt.
//!
//! `vdpbf16ps` multiplies pairs of bfloat16 (8 significant bits) and adds both products to
//! an `f32` sum. Rounded to bfloat16, a coordinate is off by up to 2^-8 of itself, so the
//! values are only within a bound of the exact ones that is about 2^-7 of `2 |x| |c|`, 10^5
//! times the `f32` kernel's (float64 points are rounded the same way, through `f32`). Two
//! things keep the band of candidates narrow anyway:
//!
//! - **A shift.** Points and centres are taken relative to the centres' mean `s`
//!   (distances do not change), so the bound scales with `|x - s| |c - s|`, the spread of the
//!   data around the centres, rather than with their distance from the origin.
//! - **An exact settle.** Each point's band — the centres whose values lie within twice the
//!   bound of its smallest — is settled by the same rule as the `f32` kernel's (`settle_row`
//!   in `fused/mod.rs`): a lone centre is the label; otherwise the band's centres are
//!   compared with exact `f64` distances, ties to the lower index. The labels are therefore
//!   the reference's, bit for bit, as on every other path.
//!
//! The pass serves float32 and float64 steps from [`MIN_D`] dimensions and [`MIN_K`] centres
//! on CPUs with AVX-512 BF16 (Zen 4, Zen 5, Cooper Lake, Sapphire Rapids and later), unless
//! `WARPATH_DISABLE_BF16` is set.

/// The fewest dimensions for which a step takes the bfloat16 pass: below, the conversion,
/// the scan and the settling of each row cost as much as the multiply-adds the pass saves.
pub(crate) const MIN_D: usize = 32;
/// The fewest centres for which a step takes the bfloat16 pass: below, a row's products are
/// too few for the halved multiply-adds to pay for its conversion and wider band (the
/// measurements: BENCHMARKS.md, clustering).
pub(crate) const MIN_K: usize = 128;

/// bfloat16 values per vector register (and per step of the rows' conversion).
pub(crate) const REG: usize = 32;

/// The centres prepared for the bfloat16 pass.
pub(crate) struct Packed {
    /// The shift `s` (the centres' mean rounded to `f32`), `dp` values, zeros past `d`.
    pub(crate) shift: Vec<f32>,
    /// The same shift in `f64` (for `f64` points).
    pub(crate) shift64: Vec<f64>,
    /// `words[t * kp + j]`: the pair of coordinates `2t` (low half) and `2t + 1` of `-2 (c_j
    /// - s)` in bfloat16; `dp / 2` rows of `kp` words (zeros past `k` and past `d`).
    pub(crate) words: Vec<u32>,
    /// `|c_j - s|^2` rounded to `f32`; lanes `k..kp` infinite.
    pub(crate) norms: Vec<f32>,
    /// An upper bound on every `|c_j - s|`.
    pub(crate) cmax: f64,
    /// `d` rounded up to a whole register of bfloat16 values.
    pub(crate) dp: usize,
    /// `k` rounded up to a whole register of `f32` values (16).
    pub(crate) kp: usize,
}

/// Whether a step with `k` centres in `d` dimensions takes the bfloat16 pass (the points'
/// type, `f32` or `f64`, does not matter: both are rounded to bfloat16).
pub(crate) fn serves(k: usize, d: usize) -> bool {
    d >= MIN_D && k >= MIN_K && crate::isa::has_bf16()
}

/// `v` rounded to the nearest bfloat16 (ties to even), by way of `f32`.
fn bf16_bits(v: f64) -> u16 {
    let f = v as f32;
    if f.is_nan() {
        return 0x7fc0;
    }
    let b = f.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

impl Packed {
    /// Packs `c64` (`k` centres of `d` values, storage order).
    pub(crate) fn new(c64: &[f64], k: usize, d: usize) -> Self {
        let dp = d.next_multiple_of(REG);
        let kp = k.next_multiple_of(16);
        let mut mean = vec![0f64; d];
        for c in c64.chunks_exact(d) {
            for (m, v) in mean.iter_mut().zip(c) {
                *m += v;
            }
        }
        let mut shift = vec![0f32; dp];
        for (s, m) in shift.iter_mut().zip(&mean) {
            *s = (m / k as f64) as f32;
        }
        let mut words = vec![0u32; dp / 2 * kp];
        let mut norms = vec![f32::INFINITY; kp];
        let mut cmax2: f64 = 0.0;
        for (j, c) in c64.chunks_exact(d).enumerate() {
            let mut n2 = 0.0;
            for (u, &v) in c.iter().enumerate() {
                let cs = v - f64::from(shift[u]);
                n2 += cs * cs;
                words[u / 2 * kp + j] |= u32::from(bf16_bits(-2.0 * cs)) << (16 * (u % 2));
            }
            norms[j] = n2 as f32;
            cmax2 = cmax2.max(n2);
        }
        Packed {
            shift64: shift.iter().map(|&v| f64::from(v)).collect(),
            shift,
            words,
            norms,
            cmax: cmax2.sqrt() * (1.0 + 1e-12),
            dp,
            kp,
        }
    }

    /// A bound on the error of a point's value `v_j` against the exact `|c_j - s|^2 - 2 (x -
    /// s).(c_j - s)`, for a point with `|x - s| <= xs`, in squared-distance units, covering:
    /// the shifted point rounded to `f32` (from `f64` points, after a subtraction in `f64`)
    /// then bfloat16, the centres to bfloat16 and their norms to `f32`, the `f32` sums of the
    /// `d` products (which are exact), bfloat16's flushing of subnormal values, and the `f64`
    /// rounding of the reference distance.
    pub(crate) fn err(&self, xs: f64, d: usize) -> f64 {
        let u32e = f64::from(f32::EPSILON) / 2.0;
        let u16e = 1.0 / 256.0;
        let n = (d + 2) as f64;
        let gamma = n * u32e / (1.0 - n * u32e);
        // A coordinate's relative error, point or centre (through `f64` and `f32`).
        let e = u16e + u32e + u16e * u32e + f64::EPSILON;
        let c = self.cmax;
        let r = xs + c;
        (u32e + n * f64::EPSILON + gamma * (1.0 + u32e)) * c * c
            + (2.0 * e + e * e + gamma * (1.0 + e) * (1.0 + e)) * 2.0 * xs * c
            + n * 2f64.powi(-120) * (1.0 + r)
            + 4.0 * (n + 4.0) * f64::EPSILON * r * r
    }

    /// Whether no value of a point with `|x - s| <= xs` can overflow `f32` (as
    /// [`crate::centres::Centres::products_finite`]).
    pub(crate) fn finite(&self, xs: f64) -> bool {
        let r = xs + self.cmax;
        r * r < 0.5 * f64::from(f32::MAX)
    }
}

/// `|x - s|` bounded from above, from the `f32` sum of the squares of the `d` shifted and
/// rounded coordinates: each is within 2^-24 of itself, and the sum within `(d + 2) 2^-24`.
pub(crate) fn shifted_norm_bound(sum: f32, d: usize) -> f64 {
    (f64::from(sum) * (1.0 + (d + 4) as f64 * f64::from(f32::EPSILON))).sqrt() * (1.0 + 1e-12)
}
