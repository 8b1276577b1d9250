//! A balanced orientation of an undirected graph whose degrees are all even, on the CPU: the
//! first half of the undirected fast path (the directed Euler circuit of the oriented graph is
//! the second).
//!
//! 1. **Transition system.** The half-edges at each vertex sit in consecutive slots of the
//!    incidence array, and every vertex has an even number of them, so every vertex's slots
//!    start at an even position: slots `2j` and `2j + 1` always belong to one vertex, and are
//!    paired. A walk that enters a vertex through one slot of a pair leaves it through the
//!    other.
//! 2. **Darts.** A dart is an edge taken from one of its ends: the dart of slot `s` leaves
//!    through `s`, arrives at the slot `mate(s)` of the edge's other end, and the walk goes on
//!    with the dart of `mate(s) ^ 1`. That is a permutation of the `2 E` darts whose cycles are
//!    closed trails; each trail appears twice, once in each direction, as two distinct cycles
//!    (the darts of one direction leave through one slot of each pair the trail passes, those
//!    of the other through the other slot).
//! 3. **Cycle numbers.** The cycles of that permutation are numbered with the list ranking of
//!    the parallel directed algorithm (`parallel::orbit_numbers`).
//! 4. **Orientation.** Each edge takes the direction of its dart whose cycle has the smaller
//!    number. A trail's darts share their cycle's number, so every trail is oriented one way:
//!    each vertex gets one in-edge and one out-edge per slot pair it is passed through, hence
//!    in-degree = out-degree. Exactly one slot of each pair `j` leaves: directed edge `j`.

use rayon::prelude::*;

use crate::euler::parallel::{CPU_SPLITTER_SPACING, orbit_numbers};
use crate::par::{PAR_THRESHOLD, SharedMut, prefetch, zeroed_huge};
use crate::{Graph, UndirectedGraph};

/// For every half-edge `h`: its slot in the incidence array and its vertex, side by side, so
/// that one cache miss gives both. One pass over the vertices' slot ranges: the writes are
/// random, but nothing is read at random.
fn half_edge_slots(g: &UndirectedGraph) -> Vec<[u32; 2]> {
    let halves = g.half_edges();
    let mut info: Vec<[u32; 2]> = zeroed_huge(halves.len());
    let w = SharedMut::new(&mut info);
    let place = |v: usize| {
        let r = g.half_range(v as u32);
        for (s, &h) in (r.start..).zip(&halves[r]) {
            // SAFETY: `halves` is a permutation of the half-edge ids, so each one has one
            // writer.
            unsafe { w.write(h as usize, [s as u32, v as u32]) }
        }
    };
    if halves.len() < PAR_THRESHOLD {
        (0..g.vertex_count()).for_each(place);
    } else {
        (0..g.vertex_count())
            .into_par_iter()
            .with_min_len(1 << 10)
            .for_each(place);
    }
    info
}

/// Orients every edge of `g` (all degrees even, `0 < E`) so that in-degree = out-degree at
/// every vertex. Returns the digraph, whose out-edges of `v` are `v`'s slot pairs (so its
/// offsets are `g`'s halved), and for each directed edge the id of its undirected edge.
///
/// `O(V + E)` work; about 48 bytes per edge at the peak besides `g` (two 16-byte dart records
/// and two 8-byte half-edge entries per edge).
pub(crate) fn balanced_orientation(g: &UndirectedGraph) -> (Graph, Vec<u32>) {
    let halves = g.half_edges();
    let m = halves.len() / 2;
    debug_assert!(m > 0 && g.offsets().iter().all(|&o| o % 2 == 0));
    let info = half_edge_slots(g);
    // The permutation's inverse serves as well (same cycles, reversed): the predecessor of
    // the dart of s is the dart of mate(s ^ 1), the reverse of the dart of s ^ 1. The lookup
    // that finds it also finds where the dart of s ^ 1 goes, kept beside it for the
    // orientation below.
    const AHEAD: usize = 16;
    let orbits = orbit_numbers(
        2 * m,
        |s| {
            // Called in increasing order: ask for the entry needed AHEAD calls later.
            if let Some(&h) = halves.get((s + AHEAD) ^ 1) {
                prefetch(info.as_ptr().wrapping_add((h ^ 1) as usize));
            }
            info[(halves[s ^ 1] ^ 1) as usize]
        },
        CPU_SPLITTER_SPACING,
    );
    drop(info);
    let mut targets = vec![0u32; m];
    let mut edge_of = vec![0u32; m];
    let orient = |(j, (t, e)): (usize, (&mut u32, &mut u32))| {
        let c = if orbits.of(2 * j) < orbits.of(2 * j + 1) {
            2 * j
        } else {
            2 * j + 1
        };
        (*t, *e) = (orbits.value(c ^ 1), halves[c] >> 1);
    };
    if m < PAR_THRESHOLD {
        targets
            .iter_mut()
            .zip(edge_of.iter_mut())
            .enumerate()
            .for_each(orient);
    } else {
        targets
            .par_iter_mut()
            .zip(edge_of.par_iter_mut())
            .enumerate()
            .with_min_len(1 << 12)
            .for_each(orient);
    }
    drop(orbits);
    let offsets = g.offsets().iter().map(|&o| o / 2).collect();
    (Graph::from_csr_trusted(offsets, targets), edge_of)
}
