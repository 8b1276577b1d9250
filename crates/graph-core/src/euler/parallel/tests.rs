//! Tests of the CPU parallel Euler circuit's internals: the sublist walks and their arena.

use super::*;
use crate::{EulerStyle, random_euler_graph};

/// Every sublist's next splitter, length and (edge, end vertex) pairs after one walk over
/// all of them with an arena of `arena` entries.
fn walk_all(offsets: &[u64], targets: &[u32], arena: usize) -> Vec<(u32, u32, Buf)> {
    let m = targets.len();
    let mut nodes = zeroed_nodes(m);
    let mut scratch: Buf = vec![[0; 2]; m];
    assert!(pair_edges(offsets, targets, &mut nodes, &mut scratch).is_none());
    let sp = Splitters::new(m, CPU_SPLITTER_SPACING);
    sp.mark(&mut nodes);
    let k = sp.edges.len();
    let mut subs = Sublists {
        next: vec![0; k],
        len: vec![0; k],
        seg: vec![Seg::default(); k],
        bufs: Vec::new(),
    };
    let all: Vec<u32> = (0..k as u32).collect();
    walk::<true>(&mut nodes, &sp, &all, vec![[0; 2]; arena], &mut subs);
    (0..k)
        .map(|j| {
            let Seg { buf, off } = subs.seg[j];
            let len = subs.len[j] as usize;
            let pairs = subs.bufs[buf as usize][off..off + len].to_vec();
            (subs.next[j], subs.len[j], pairs)
        })
        .collect()
}

/// Segments that do not fit in the arena go to buffers of their own, with the same
/// contents; with a roomy arena, none do.
#[test]
fn walk_spills_what_the_arena_cannot_hold() {
    for m in [5_000, 300_000] {
        let g = random_euler_graph(m, EulerStyle::Deep, 5).unwrap();
        let (o, t) = (g.offsets(), g.targets());
        let roomy = walk_all(o, t, arena_len(t.len()));
        for arena in [0, 1, 100, WALK_BLOCK + 7, t.len() / 2] {
            assert!(walk_all(o, t, arena) == roomy, "m = {m}, arena {arena}");
        }
        // Each sublist starts at its splitter and follows `pred` backwards.
        let covered: usize = roomy.iter().map(|s| s.1 as usize).sum();
        assert!(covered <= t.len());
        for (_, _, pairs) in &roomy {
            for &[e, end] in pairs {
                assert_eq!(end, t[e as usize]);
            }
        }
    }
}
