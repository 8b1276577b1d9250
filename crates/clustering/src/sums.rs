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
    /// Per cluster: the next free place in `order` while listing.
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
            add_cluster::<T>(&mut st.sums[l * d..(l + 1) * d], x, d, weights, mine);
            let (mut count, mut ql) = (st.counts[l], q.as_ref().map_or(0.0, |q| q[l]));
            for &r in mine {
                let r = r as usize;
                let w = weights.map_or(1.0, |w| w[r]);
                count += w;
                if q.is_some() {
                    ql += w * norms[r];
                }
            }
            st.counts[l] = count;
            if let Some(q) = q.as_deref_mut() {
                q[l] = ql;
            }
        }
    }

    /// Lists the rows by their labels (each below `k`), in row order within each.
    #[inline(always)]
    fn list(&mut self, k: usize, labels: &[u32]) {
        self.starts.clear();
        self.starts.resize(k + 1, 0);
        for &l in labels {
            self.starts[l as usize + 1] += 1;
        }
        for l in 0..k {
            self.starts[l + 1] += self.starts[l];
        }
        self.next.clear();
        self.next.extend_from_slice(&self.starts[..k]);
        self.order.resize(labels.len(), 0);
        for (r, &l) in labels.iter().enumerate() {
            let at = &mut self.next[l as usize];
            self.order[*at] = r as u32;
            *at += 1;
        }
    }
}

/// Blocks of eight sums [`TileSums::add`] holds in registers at a time: four chains of
/// additions per row, enough to hide the adds' latency, in 8 of the 16 (AVX2) or 32 (AVX-512)
/// vector registers.
const BLOCKS: usize = 4;

/// `sums += w_r x_r` for the rows `rows` of `x` in turn, [`BLOCKS`] blocks of eight sums at a
/// time held in registers across the rows.
#[inline(always)]
fn add_cluster<T: Element>(
    sums: &mut [f64],
    x: &[T],
    d: usize,
    weights: Option<&[f64]>,
    rows: &[u32],
) {
    let whole = d - d % 8;
    let mut u = 0;
    while u + 8 * BLOCKS <= whole {
        add_blocks::<T, BLOCKS>(sums, x, d, u, weights, rows);
        u += 8 * BLOCKS;
    }
    // The last blocks, fewer than `BLOCKS` (a constant count each, so the sums stay in
    // registers).
    match (whole - u) / 8 {
        0 => {}
        1 => add_blocks::<T, 1>(sums, x, d, u, weights, rows),
        2 => add_blocks::<T, 2>(sums, x, d, u, weights, rows),
        3 => add_blocks::<T, 3>(sums, x, d, u, weights, rows),
        _ => unreachable!("fewer than BLOCKS = 4 blocks remain"),
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

/// `sums[u..u + 8 N] += w_r x_r[u..u + 8 N]` for the rows `rows` in turn, the `N` blocks of
/// sums in registers; a weight of 1 (no weights) multiplies exactly, so it is left out.
#[inline(always)]
fn add_blocks<T: Element, const N: usize>(
    sums: &mut [f64],
    x: &[T],
    d: usize,
    u: usize,
    weights: Option<&[f64]>,
    rows: &[u32],
) {
    let mut acc = [[0.0f64; 8]; N];
    for (b, a) in acc.iter_mut().enumerate() {
        a.copy_from_slice(&sums[u + 8 * b..u + 8 * b + 8]);
    }
    let block = |r: usize| -> &[[T; 8]] { x[r * d + u..r * d + u + 8 * N].as_chunks::<8>().0 };
    match weights {
        None => {
            for &r in rows {
                for (a, xb) in acc.iter_mut().zip(block(r as usize)) {
                    for l in 0..8 {
                        a[l] += xb[l].to_f64();
                    }
                }
            }
        }
        Some(w) => {
            for &r in rows {
                let wr = w[r as usize];
                for (a, xb) in acc.iter_mut().zip(block(r as usize)) {
                    for l in 0..8 {
                        a[l] += wr * xb[l].to_f64();
                    }
                }
            }
        }
    }
    for (b, a) in acc.iter().enumerate() {
        sums[u + 8 * b..u + 8 * b + 8].copy_from_slice(a);
    }
}
