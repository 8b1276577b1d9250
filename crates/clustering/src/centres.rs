//! Centres prepared for the assignment engine ([`crate::assign`]) and its register-blocked
//! kernel ([`crate::fused`]): how a set of centres is stored for each way of computing
//! distances, the bound on the rounding of a product value, and the tie rule.

use crate::Element;

/// Centres per block of the direct path (one AVX-512 register of `f64`).
pub(crate) const LANES: usize = 8;
/// The most dimensions the blocked direct path takes (more go one centre at a time).
pub(crate) const DIRECT_MAX_D: usize = 64;

/// How the distances of a tile are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// `f64`, in the reference's order of operations (exact by construction).
    Direct,
    /// A matrix product in the element type, settled exactly by [`finish`].
    ///
    /// [`finish`]: crate::assign::finish
    Gemm,
    /// The register-blocked kernel of [`crate::fused`]: the product values in the element
    /// type, a few points at a time against every centre, settled exactly.
    Fused,
}

/// The most centres a step computes with the fused kernel ([`Method::Fused`]): beyond, a
/// group of its rows of values outgrows the L2 cache, and the matrix product's tiles of
/// centres take over.
pub(crate) const FUSED_MAX_K: usize = 2048;
/// Where a step in at most eight dimensions takes the fused kernel: from this many
/// dimensions and this many centre coordinates (`k d`), with AVX-512 and with AVX2 only.
/// Below, the direct path's exact distances, eight points at a time in the vector lanes, cost
/// less than the kernel's per-row scan of its `k` values; its lanes are half as wide with
/// AVX2, so the kernel takes over sooner there (BENCHMARKS.md, k-means, "Few dimensions").
const FUSED_SMALL_D_AVX512: (usize, usize) = (6, 384);
/// See [`FUSED_SMALL_D_AVX512`].
const FUSED_SMALL_D_AVX2: (usize, usize) = (4, 128);

/// The method of a Lloyd step and of `predict` for `k` centres in `d` dimensions: the fused
/// kernel where the CPU has it (AVX2 and FMA), for up to [`FUSED_MAX_K`] centres past eight
/// dimensions or in the shapes of [`FUSED_SMALL_D_AVX512`] ([`FUSED_SMALL_D_AVX2`] without
/// AVX-512) in fewer, else [`method_for`]'s.
pub(crate) fn step_method(d: usize, k: usize) -> Method {
    let (min_d, min_kd) = if crate::isa::has_avx512() {
        FUSED_SMALL_D_AVX512
    } else {
        FUSED_SMALL_D_AVX2
    };
    let fused_shape = d > 8 || (d >= min_d && k * d >= min_kd);
    if fused_shape && k <= FUSED_MAX_K && crate::isa::has_avx2() {
        Method::Fused
    } else {
        method_for(d, k)
    }
}

/// The method for a whole set of `k` centres in `d` dimensions when the fused kernel is not
/// used ([`step_method`]): the product from a dozen dimensions on (where the direct path's
/// exact arithmetic costs several times a product's), the direct path below.
pub(crate) fn method_for(d: usize, k: usize) -> Method {
    let _ = k;
    if d >= 12 {
        Method::Gemm
    } else {
        Method::Direct
    }
}

/// Whether a step over `k` centres in `d` dimensions adds up its inertia from exact distances
/// (the direct path's, [`method_for`]), rather than from its sums: every algorithm and path
/// follows this one rule, so that a step's statistics have the same bits whichever runs it.
pub(crate) fn exact_step_inertia(d: usize, k: usize) -> bool {
    method_for(d, k) == Method::Direct
}

/// The method for a group of `size` centres of the pruned algorithms: the product from a
/// dozen dimensions for groups of a block of [`LANES`] or more (the groups found by
/// clustering the centres are uneven, and from a block on a product costs less than the
/// direct path's exact `f64` distances), and for any group past the
/// blocked direct path's [`DIRECT_MAX_D`] dimensions (beyond, it computes one centre at a
/// time with a dependency chain per distance, slower than products even for a few centres);
/// the direct path otherwise.
pub(crate) fn method_for_group(d: usize, size: usize) -> Method {
    if d > DIRECT_MAX_D || (d >= 12 && size >= LANES) {
        Method::Gemm
    } else {
        Method::Direct
    }
}

/// The most centres of the row-wise fused kernel (`fused/narrow.rs`), for which
/// [`Centres::rows`] is kept.
pub(crate) const ROWWISE_MAX_K: usize = 8;

/// The lanes of `T` a register of the row-wise kernel holds on this CPU (AVX-512: 64 bytes,
/// AVX2: 32), `None` without either; the centres' row copy ([`Centres::rows`]) is padded to
/// whole registers of it.
pub(crate) fn rowwise_width<T>() -> Option<usize> {
    if crate::isa::has_avx512() {
        Some(64 / size_of::<T>())
    } else if crate::isa::has_avx2() {
        Some(32 / size_of::<T>())
    } else {
        None
    }
}

/// A set of centres prepared for the engine, in a storage order of its own (groups of the
/// pruned algorithms are contiguous); `id(j)` is the centre's index in the caller's order,
/// which decides ties.
pub(crate) struct Centres<T> {
    /// Number of centres.
    pub(crate) k: usize,
    /// Dimensions.
    pub(crate) d: usize,
    /// The centres in `f64`, `k * d`, storage order.
    pub(crate) c64: Vec<f64>,
    /// The caller's index of the centre in each storage slot (empty when `in_order`; see
    /// [`Centres::id`]).
    pub(crate) order: Vec<u32>,
    /// How distances are computed.
    pub(crate) method: Method,
    /// Whether the storage order is the caller's (slot `j` is centre `j`).
    pub(crate) in_order: bool,
    /// Gemm: the centres in the element type, row-major.
    pub(crate) ct: Vec<T>,
    /// Gemm: `|c_j|^2` in the element type.
    pub(crate) norms: Vec<T>,
    /// The largest centre norm `|c_j|` (an upper bound, for [`Centres::err`]).
    pub(crate) cmax: f64,
    /// Fused: `packed[u * kp + j] = -2 c_j[u]` in the element type (coordinate-major; lanes
    /// `k..kp` are 0), `kp` being `k` rounded up to whole vector registers.
    pub(crate) packed: Vec<T>,
    /// Fused: `|c_j|^2` in the element type, lanes `k..kp` infinite.
    pub(crate) packed_norms: Vec<T>,
    /// Fused: the lanes of a packed row.
    pub(crate) kp: usize,
    /// Fused, with AVX-512 BF16 and enough centres and dimensions: the centres for the
    /// bfloat16 pass ([`crate::bf16`]).
    pub(crate) bf16: Option<Box<crate::bf16::Packed>>,
    /// Fused, a few centres with AVX-512 or AVX2 (the row-wise kernel, `fused/narrow.rs`):
    /// `-2 c_j` in the element type row by row, each row padded with zeros to whole registers
    /// of the widest vectors the CPU has (64 or 32 bytes); empty otherwise.
    pub(crate) rows: Vec<T>,
    /// Direct: blocks of [`LANES`] centres, each transposed (`dt[(b * d + t) * LANES + l]` is
    /// coordinate `t` of slot `b * LANES + l`); slots past `k` are infinitely far (none for `k < LANES`,
    /// unless [`Centres::with_blocks`] built them).
    pub(crate) dt: Vec<f64>,
    /// Fused: whether the kernels that read the rows as they are prefetch them a few rows
    /// ahead (`fused::PREFETCH_ROWS`): set by a step whose data streams from memory
    /// ([`STREAMED_BYTES`]); off otherwise, where the prefetches only cost load slots.
    pub(crate) prefetch: bool,
}

/// Data of at least this many bytes streams from memory at every step rather than stay in the
/// last-level cache (half of the 32 MiB of the Zen 4 and Zen 5 parts measured): the fused
/// kernels prefetch its rows ([`Centres::prefetch`]). Below, the rows are cached and the
/// prefetches would only take load slots (BENCHMARKS.md, "CPU-dependent choices").
pub(crate) const STREAMED_BYTES: usize = 16 << 20;

impl<T> Centres<T> {
    /// The caller's index of the centre in storage slot `slot`.
    #[inline(always)]
    pub(crate) fn id(&self, slot: u32) -> u32 {
        if self.in_order {
            slot
        } else {
            self.order[slot as usize]
        }
    }

    /// The same centres with the direct path's blocks (`dt`) built whatever the method and
    /// `k` (for [`every_dist2`](crate::assign::every_dist2)).
    pub(crate) fn with_blocks(mut self) -> Self {
        if self.dt.is_empty() {
            self.dt = direct_blocks(&self.c64, self.k, self.d);
        }
        self
    }
}

/// The direct path's blocks of [`LANES`] centres, each transposed (see `Centres::dt`), from
/// the centres in `f64` in storage order; slots past `k` infinitely far.
fn direct_blocks(c64: &[f64], k: usize, d: usize) -> Vec<f64> {
    let blocks = k.div_ceil(LANES);
    let mut dt = vec![f64::INFINITY; blocks * d * LANES];
    for (j, c) in c64.chunks_exact(d).enumerate() {
        let (b, l) = (j / LANES, j % LANES);
        for (t, &v) in c.iter().enumerate() {
            dt[(b * d + t) * LANES + l] = v;
        }
    }
    dt
}

impl<T: Element> Centres<T> {
    /// Prepares `centroids` (`k * d`, the caller's order) in the storage order `order`
    /// (`order[j]` = the caller's index of slot `j`; `None` keeps the caller's order), for the
    /// method `method` ([`nearest_tile`](crate::assign::nearest_tile)'s); `both` prepares the
    /// other method's data too (the pruned algorithms pick a method per group).
    pub(crate) fn new(
        centroids: &[f64],
        k: usize,
        d: usize,
        order: Option<&[u32]>,
        method: Method,
        both: bool,
    ) -> Self {
        let in_order = order.is_none();
        let order: Vec<u32> = order.map_or_else(Vec::new, <[u32]>::to_vec);
        let c64 = if in_order {
            centroids[..k * d].to_vec()
        } else {
            debug_assert_eq!(order.len(), k);
            let mut c64 = Vec::with_capacity(k * d);
            for &j in &order {
                let j = j as usize;
                c64.extend_from_slice(&centroids[j * d..(j + 1) * d]);
            }
            c64
        };
        let mut cmax2: f64 = 0.0;
        let mut norms = Vec::new();
        let mut ct = Vec::new();
        let mut dt = Vec::new();
        for c in c64.chunks_exact(d) {
            cmax2 = cmax2.max(c.iter().map(|v| v * v).sum());
        }
        if both || method != Method::Direct {
            norms = c64
                .chunks_exact(d)
                .map(|c| T::from_f64(c.iter().map(|v| v * v).sum()))
                .collect();
        }
        if both || method == Method::Gemm {
            ct = c64.iter().map(|&v| T::from_f64(v)).collect();
        }
        let (mut packed, mut packed_norms, mut kp) = (Vec::new(), Vec::new(), 0);
        if method == Method::Fused {
            // Whole registers of the widest vectors the CPU has.
            let width = if crate::isa::has_avx512() { 64 } else { 32 };
            kp = k.next_multiple_of(width / size_of::<T>());
            packed = vec![T::zero(); d * kp];
            for (j, c) in c64.chunks_exact(d).enumerate() {
                for (u, &v) in c.iter().enumerate() {
                    // Exact: -2 times the centre rounded to the element type.
                    packed[u * kp + j] = T::from_f64(-2.0 * v);
                }
            }
            packed_norms = vec![T::from_f64(f64::INFINITY); kp];
            packed_norms[..k].copy_from_slice(&norms);
        }
        let bf16 = (method == Method::Fused && crate::bf16::serves(k, d))
            .then(|| Box::new(crate::bf16::Packed::new(&c64, k, d)));
        let mut rows = Vec::new();
        #[cfg(target_arch = "x86_64")]
        if method == Method::Fused
            && k <= ROWWISE_MAX_K
            && let Some(w) = rowwise_width::<T>()
        {
            let dp = d.next_multiple_of(w);
            rows = vec![T::zero(); k * dp];
            for (row, c) in rows.chunks_exact_mut(dp).zip(c64.chunks_exact(d)) {
                for (r, &v) in row.iter_mut().zip(c) {
                    *r = T::from_f64(-2.0 * v);
                }
            }
        }
        // The blocks serve ranges of at least LANES centres only (see `direct_d`).
        if (both || method == Method::Direct) && k >= LANES {
            dt = direct_blocks(&c64, k, d);
        }
        Centres {
            k,
            d,
            c64,
            order,
            method,
            in_order,
            ct,
            norms,
            cmax: cmax2.sqrt() * (1.0 + 1e-12),
            packed,
            packed_norms,
            kp,
            bf16,
            rows,
            dt,
            prefetch: false,
        }
    }

    /// The centre in storage slot `j`, in `f64`.
    #[inline]
    pub(crate) fn row(&self, j: usize) -> &[f64] {
        &self.c64[j * self.d..(j + 1) * self.d]
    }

    /// A bound on the rounding error of a product value `e_j` of a point with `|x|^2 = xn2`
    /// (in squared-distance units), covering: the centres and their norms rounded to the
    /// element type, a `d`-term dot product in any summation order (`gamma_d |x| |c|`), the
    /// final addition, and the `f64` rounding of the reference distance itself.
    #[inline]
    pub(crate) fn err(&self, xn2: f64) -> f64 {
        let u = if size_of::<T>() == 4 {
            f32::EPSILON as f64 / 2.0
        } else {
            f64::EPSILON / 2.0
        };
        let r = xn2.sqrt() + self.cmax;
        (3.0 * (self.d as f64 + 8.0) * u + 4.0 * (self.d as f64 + 4.0) * f64::EPSILON) * r * r
    }

    /// Whether no partial sum of a point's product values can overflow the element type:
    /// each is at most `|c|^2 + 2 |x| |c| < (|x| + cmax)^2` in magnitude (Cauchy–Schwarz), kept
    /// below half the type's largest value. Beyond, the values may be infinite or NaN and
    /// the label comes from exact distances alone.
    #[inline]
    pub(crate) fn products_finite(&self, xn2: f64) -> bool {
        let r = xn2.sqrt() + self.cmax;
        r * r < 0.5 * T::MAX.to_f64()
    }

    /// The width of a point's [`Band`](crate::assign::Band): `2.1 err(x)` in the element type. The extra tenth covers
    /// the rounding of `best + width` (the error bound is at least `60 u |best|`).
    #[inline]
    pub(crate) fn band_width(&self, xn2: f64) -> T {
        T::from_f64(2.1 * self.err(xn2))
    }
}

/// `best` becomes `(slot, d2)` when that is nearer, or as near with a lower caller index.
#[inline(always)]
pub(crate) fn take<T>(cent: &Centres<T>, slot: u32, d2: f64, best: &mut (u32, f64)) {
    if best.0 == u32::MAX || d2 < best.1 || (d2 == best.1 && cent.id(slot) < cent.id(best.0)) {
        *best = (slot, d2);
    }
}
