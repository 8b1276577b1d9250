//! A tile's rows added to their clusters' statistics: the weighted sums, the weights and (for
//! the inertia formula) the weighted `|x|^2`, cluster by cluster.
//!
//! Every path of a step adds `w x` to its cluster's sums element by element in `f64`, the
//! rows in row order, so that the sums have the same bits whichever path ran. Added row after
//! row, each row's sums wait on the stores of the previous row of its cluster (with a few
//! centres, most often the row just before). [`TileSums`] lists a tile's rows by cluster (a
//! counting sort of their labels) and adds each cluster's rows, in row order, with a block of
//! its sums held in registers across them: the same additions in the same order, so the same
//! bits, without the round trips through memory.
//!
//! The fused leaf ([`crate::fused`]) adds its tiles this way: it serves the few-centre steps,
//! where those round trips cost the most. The product and pruned paths add row by row
//! ([`crate::cpu::add_point`]), in one pass over a row for its sums and its `|x|^2` (they have
//! no norms computed beforehand); grouped, they would read each row twice.

use crate::Element;
use crate::lloyd::StepStats;

/// Scratch space of [`TileSums::add`], reused from one tile to the next.
#[derive(Default)]
pub(crate) struct TileSums {
    /// Per cluster: where its rows start in `order` (and `starts[k]`, the row count).
    starts: Vec<usize>,
    /// Per part of the tile and cluster ([`TileSums::list`]): its count of rows, then the
    /// next free place in `order` while listing.
    next: Vec<usize>,
    /// The tile's rows, cluster by cluster, in row order within each.
    order: Vec<u32>,
}

impl TileSums {
    /// Adds the rows of `x` (`d` wide; `labels[r]` the cluster of row `r`, `weights[r]` its
    /// weight, 1 without weights) to `st`: to cluster `l`'s sums `w x` element by element (a
    /// product, then a sum), to its weight `w`, and with `q` to `q[l]` `w |x|^2` (`norms[r]`
    /// the row's `|x|^2`); each cluster's rows in row order, [`BLOCKS`] blocks of eight sums
    /// held in registers at a time. Inlined into the caller's AVX-512 or AVX2 body.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add<T: Element>(
        &mut self,
        st: &mut StepStats,
        mut q: Option<&mut [f64]>,
        x: &[T],
        d: usize,
        weights: Option<&[f64]>,
        labels: &[u32],
        norms: &[f64],
    ) {
        let k = st.counts.len();
        debug_assert!(x.len() == labels.len() * d && st.sums.len() == k * d);
        self.list(k, labels);
        for l in 0..k {
            let mine = &self.order[self.starts[l]..self.starts[l + 1]];
            if mine.is_empty() {
                continue;
            }
            let (mut count, mut ql) = (st.counts[l], q.as_ref().map_or(0.0, |q| q[l]));
            let cq = q.is_some().then_some((&mut ql, norms));
            add_cluster::<T>(
                &mut st.sums[l * d..(l + 1) * d],
                x,
                d,
                weights,
                mine,
                &mut count,
                cq,
            );
            st.counts[l] = count;
            if let Some(q) = q.as_deref_mut() {
                q[l] = ql;
            }
        }
    }

    /// Lists the rows by their labels (each below `k`), in row order within each.
    ///
    /// The rows go in four consecutive parts, each with its own counts and its own next free
    /// places, walked side by side: four independent chains of increments through memory
    /// rather than one (with a few centres most rows increment the counter the row before
    /// incremented, and each waits on that store).
    #[inline(always)]
    fn list(&mut self, k: usize, labels: &[u32]) {
        let n = labels.len();
        let q = n / PARTS;
        // Part `p` is rows `p q..(p + 1) q`, the last also the `n % PARTS` rows after.
        self.next.clear();
        self.next.resize(PARTS * k, 0);
        let counts = &mut self.next;
        for i in 0..q {
            for p in 0..PARTS {
                counts[p * k + labels[p * q + i] as usize] += 1;
            }
        }
        for &l in &labels[PARTS * q..] {
            counts[(PARTS - 1) * k + l as usize] += 1;
        }
        // The counts become each part's first free place per label: the labels in order,
        // within each label the parts in order.
        self.starts.clear();
        self.starts.resize(k + 1, 0);
        let mut at = 0;
        for l in 0..k {
            self.starts[l] = at;
            for p in 0..PARTS {
                let c = counts[p * k + l];
                counts[p * k + l] = at;
                at += c;
            }
        }
        self.starts[k] = at;
        self.order.resize(n, 0);
        let next = &mut self.next;
        for i in 0..q {
            for p in 0..PARTS {
                let r = p * q + i;
                let at = &mut next[p * k + labels[r] as usize];
                self.order[*at] = r as u32;
                *at += 1;
            }
        }
        for (r, &l) in labels.iter().enumerate().skip(PARTS * q) {
            let at = &mut next[(PARTS - 1) * k + l as usize];
            self.order[*at] = r as u32;
            *at += 1;
        }
    }
}

/// Parts of a tile that [`TileSums::list`] lists side by side.
const PARTS: usize = 4;

/// Blocks of eight sums [`TileSums::add`] holds in registers at a time: four chains of
/// additions per row, enough to hide the adds' latency, in 8 of the 16 (AVX2) or 32 (AVX-512)
/// vector registers.
const BLOCKS: usize = 4;

/// `sums += w_r x_r` for the rows `rows` of `x` in turn, [`BLOCKS`] blocks of eight sums at a
/// time held in registers across the rows; `count += w_r` and with `q`, `q.0 += w_r norms[r]`,
/// row after row, in the first blocks' pass over the rows (their chains of additions beside
/// the sums' rather than after them).
#[inline(always)]
fn add_cluster<T: Element>(
    sums: &mut [f64],
    x: &[T],
    d: usize,
    weights: Option<&[f64]>,
    rows: &[u32],
    count: &mut f64,
    q: Option<(&mut f64, &[f64])>,
) {
    let whole = d - d % 8;
    let mut tally = Some((count, q));
    let mut u = 0;
    while u < whole {
        // A constant count of blocks each time, so the sums stay in registers.
        let blocks = ((whole - u) / 8).min(BLOCKS);
        let t = tally.take();
        match blocks {
            4 => add_blocks::<T, 4>(sums, x, d, u, weights, rows, t),
            3 => add_blocks::<T, 3>(sums, x, d, u, weights, rows, t),
            2 => add_blocks::<T, 2>(sums, x, d, u, weights, rows, t),
            _ => add_blocks::<T, 1>(sums, x, d, u, weights, rows, t),
        }
        u += 8 * blocks;
    }
    if let Some((count, q)) = tally {
        // Fewer than eight values a row: the weights and norms on their own.
        add_blocks::<T, 0>(sums, x, d, 0, weights, rows, Some((count, q)));
    }
    for (u, s) in sums.iter_mut().enumerate().skip(whole) {
        let mut v = *s;
        for &r in rows {
            let r = r as usize;
            v += weights.map_or(1.0, |w| w[r]) * x[r * d + u].to_f64();
        }
        *s = v;
    }
}

/// The tally of [`add_cluster`]: the cluster's weight and, with the rows' norms, its
/// weighted `|x|^2`.
type Tally<'a> = Option<(&'a mut f64, Option<(&'a mut f64, &'a [f64])>)>;

/// `sums[u..u + 8 N] += w_r x_r[u..u + 8 N]` for the rows `rows` in turn, the `N` blocks of
/// sums in registers, and `tally` when given ([`add_cluster`]); a weight of 1 (no weights)
/// multiplies exactly, so it is left out.
#[inline(always)]
fn add_blocks<T: Element, const N: usize>(
    sums: &mut [f64],
    x: &[T],
    d: usize,
    u: usize,
    weights: Option<&[f64]>,
    rows: &[u32],
    tally: Tally<'_>,
) {
    let mut acc = [[0.0f64; 8]; N];
    for (b, a) in acc.iter_mut().enumerate() {
        a.copy_from_slice(&sums[u + 8 * b..u + 8 * b + 8]);
    }
    let block = |r: usize| -> &[[T; 8]] { x[r * d + u..r * d + u + 8 * N].as_chunks::<8>().0 };
    // The tally's running values, written back after the rows.
    let (mut c, mut v, norms) = match &tally {
        Some((c, Some((q, n)))) => (**c, **q, Some(*n)),
        Some((c, None)) => (**c, 0.0, None),
        None => (0.0, 0.0, None),
    };
    match weights {
        None => {
            for &r in rows {
                for (a, xb) in acc.iter_mut().zip(block(r as usize)) {
                    for l in 0..8 {
                        a[l] += xb[l].to_f64();
                    }
                }
                if let Some(n) = norms {
                    v += n[r as usize];
                }
            }
            // Without weights the count adds ones: exact in any order.
            c += rows.len() as f64;
        }
        Some(w) => {
            for &r in rows {
                let wr = w[r as usize];
                for (a, xb) in acc.iter_mut().zip(block(r as usize)) {
                    for l in 0..8 {
                        a[l] += wr * xb[l].to_f64();
                    }
                }
                c += wr;
                if let Some(n) = norms {
                    v += wr * n[r as usize];
                }
            }
        }
    }
    if let Some((count, q)) = tally {
        *count = c;
        if let Some((q, _)) = q {
            *q = v;
        }
    }
    for (b, a) in acc.iter().enumerate() {
        sums[u + 8 * b..u + 8 * b + 8].copy_from_slice(a);
    }
}
