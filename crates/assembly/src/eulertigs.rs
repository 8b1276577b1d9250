//! Stage 6 (optional): eulertigs (Schmidt & Alanko, "Eulertigs", WABI 2022 / AMB 2023): the
//! fewest strings that spell every solid k-mer exactly once, hence the shortest such text.
//!
//! The compacted graph is the bidirected graph whose arcs are the chain unitigs and whose
//! nodes are the (k-1)-mers at their ends. A walk through a node enters by one arc end and
//! leaves by an end of the other side (the node's in- and out-arcs); at a (k-1)-mer that is
//! its own reverse complement any two ends pair. A walk cover that uses every arc once needs,
//! at each node, at least `|in - out|` walk ends (`d mod 2` at a palindromic node), so at least
//! `max(1, sum / 2)` walks per connected component; adding that many virtual arcs between
//! the deficient ends makes every node balanced, and an Euler circuit of the balanced graph
//! cut at the virtual arcs reaches the bound. Cycles (circular unitigs) are strings of their
//! own.
//!
//! The circuit is graph-core's. A bidirected graph is not a directed one, so it is oriented
//! first: the ends at each node are paired (in with out), which splits the arcs into closed
//! trails; each trail is read in one direction, and the directions are chosen (a spanning
//! forest of the trails that meet at a node) so that the trails of one component meet at
//! shared vertices of the directed graph whose vertices are the node sides. That graph is
//! balanced and, per component, connected; a hub vertex joins the components (through one
//! virtual arc of each, or a pair of arcs for a component without one), and one Euler
//! circuit of the whole ([`graph_core::euler_circuit_hierholzer`] on the CPU, whose circuit
//! does not depend on the thread count; [`graph_core::euler_circuit`] on the GPU) is cut at
//! the virtual arcs and the hub into the eulertigs.

use std::io::Write;

use gpu_runtime::{Backend, Exec, Target};

use crate::AssemblyError;
use crate::bases::{append_letters, pack_letters};
use crate::error::human_bytes;
use crate::pipeline::Assembly;
use crate::records::unitig_records;

/// Under [`Exec::Auto`], eulertigs are computed on the GPU from this many arcs (chain
/// unitigs) when one is present: graph-core's Euler threshold.
pub const EULERTIGS_GPU_THRESHOLD: u64 = graph_core::EULER_GPU_THRESHOLD;

/// What [`Assembly::write_eulertigs`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EulertigStats {
    /// Strings written.
    pub strings: u64,
    /// Bases written.
    pub bases: u64,
    /// K-mers spelled (every solid k-mer once).
    pub kmers: u64,
    /// Connected components of the compacted graph (cycles included).
    pub components: u64,
    /// Where the Euler circuit ran.
    pub backend: Backend,
}

/// A union-find over unitig ends with a parity bit (the side of the node an end is on): the
/// low 31 bits of an entry are its parent, the top bit its side relative to the parent.
struct SideUnionFind {
    parent: Vec<u32>,
    /// Roots whose ends cannot be split into two sides (a palindromic (k-1)-mer).
    odd: Vec<bool>,
}

const PARITY: u32 = 1 << 31;

impl SideUnionFind {
    fn new(n: usize) -> Self {
        SideUnionFind {
            parent: (0..n as u32).collect(),
            odd: vec![false; n],
        }
    }

    /// The root of `x` and `x`'s side relative to it (path halving, parities composed).
    fn find(&mut self, mut x: u32) -> (u32, u32) {
        let mut side = 0;
        loop {
            let p = self.parent[x as usize];
            let px = p & !PARITY;
            if px == x {
                return (x, side);
            }
            let q = self.parent[px as usize];
            let qx = q & !PARITY;
            if qx != px {
                // point x at its grandparent, composing the two parities
                self.parent[x as usize] = qx | ((p ^ q) & PARITY);
            }
            side ^= p & PARITY;
            x = px;
        }
    }

    /// Puts `a` and `b` on opposite sides of one node.
    fn join_opposite(&mut self, a: u32, b: u32) {
        let (ra, sa) = self.find(a);
        let (rb, sb) = self.find(b);
        if ra == rb {
            if sa == sb {
                self.odd[ra as usize] = true;
            }
            return;
        }
        let odd = self.odd[ra as usize] || self.odd[rb as usize];
        // b must end up on the side opposite to a: side(b) = side(a) ^ 1
        self.parent[rb as usize] = ra | ((sa ^ sb ^ PARITY) & PARITY);
        self.odd[ra as usize] = odd;
    }
}

/// A plain union-find (path halving, union by index).
struct UnionFind(Vec<u32>);

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind((0..n as u32).collect())
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let g = self.0[self.0[x as usize] as usize];
            self.0[x as usize] = g;
            x = g;
        }
        x
    }
    /// Joins the sets of `a` and `b`; whether they were apart.
    fn union(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.0[hi as usize] = lo;
        true
    }
}

/// One arc end at a node: the node and the end's side there (`0` or `1`).
#[derive(Clone, Copy)]
struct End {
    node: u32,
    side: u8,
}

/// Bytes held per unitig while the eulertigs are computed (union-finds, ends, trails, the
/// directed graph, the circuit and the walks), besides the unitigs' 2-bit sequences and the
/// text being spelled.
const BYTES_PER_UNITIG: u64 = 104;

impl Assembly {
    /// Writes the eulertigs as FASTA (`>ID LN:i:LEN KC:i:COUNT km:f:MEAN`), the fewest
    /// strings that hold every solid k-mer exactly once: read by tools that take unitigs
    /// (SSHash, Fulgor, GGCAT's input). See the module notes of `eulertigs.rs` for how.
    ///
    /// The strings are deterministic on the CPU whatever the thread count; on the GPU (whose
    /// circuit depends on the order the device merges cycles in) their text may differ from
    /// run to run, never their number, length or k-mers.
    ///
    /// The unitigs are read back from the run's store by chunks on the run's threads, and the
    /// text is spelled by the same threads in rounds (one batch of about 4 MB of letters each),
    /// a round written while the next is spelled.
    ///
    /// # Complexity
    /// `O(U α(U))` time for `U` unitigs plus graph-core's `O(U)` circuit; about 104 bytes a
    /// unitig in memory besides the unitigs' bases at 2 bits each, and two batches of text per
    /// thread (a batch holds at least one eulertig, so the longest eulertig's text at least).
    ///
    /// # Errors
    /// [`AssemblyError::Memory`] when that does not fit the run's memory bound;
    /// [`AssemblyError::Disk`] for the temporary files or the writer; [`AssemblyError::Gpu`]
    /// for `Exec::Cuda` without a GPU; [`AssemblyError::Internal`] for a broken invariant.
    ///
    /// # Examples
    /// ```
    /// use assembly::{assemble, CountOptions, ReadSource, Exec};
    /// // a branching graph: unitigs ACCGTATGG|CTTA, ...|GATC joined through their shared 4-mer
    /// let fa = b">a\nACCGTATGGCTTA\n>b\nACCGTATGGCTTA\n>c\nTATGGGATCA\n>d\nTATGGGATCA\n";
    /// let a = assemble::<u64>(&[ReadSource::Bytes(fa, "r.fa")], &CountOptions::new(5), true, &mut |_| {})?;
    /// let mut out = Vec::new();
    /// let e = a.write_eulertigs(&mut out, Exec::Cpu)?;
    /// assert!(e.strings < a.stats.unitigs);
    /// assert_eq!(e.kmers, a.stats.counting.solid);
    /// # Ok::<(), assembly::AssemblyError>(())
    /// ```
    pub fn write_eulertigs(
        &self,
        out: &mut dyn Write,
        exec: Exec,
    ) -> Result<EulertigStats, AssemblyError> {
        let k = self.k();
        let u_total = self.stats.unitigs as usize;
        let need = BYTES_PER_UNITIG * u_total as u64
            + self.stats.bases / 4
            + 2 * self.threads() as u64 * SPELL_BATCH as u64;
        if let Some(bound) = self.stats.max_memory
            && need > bound / 2
        {
            return Err(AssemblyError::Memory(format!(
                "eulertigs of {u_total} unitigs hold about {} in memory, more than half the \
                 memory bound allows; raise --max-memory",
                human_bytes(need)
            )));
        }
        if u_total >= 1 << 30 {
            return Err(AssemblyError::Memory(format!(
                "{u_total} unitigs: eulertigs number unitig ends in 31 bits"
            )));
        }
        // 1. the unitigs (2-bit) and the nodes of their ends: a link joins the end it leaves
        // by and the end it enters by, on opposite sides of one node
        // the records read and packed by chunks in parallel, kept as read (one part per chunk:
        // offset = part << PART_SHIFT | byte in the part)
        let threads = self.threads().max(1);
        let parts = self.store().map_chunks(threads, &|buf| {
            let mut part = Part::default();
            for r in unitig_records(buf) {
                part.offset.push(part.packed.len() as u64);
                part.length.push(r.sequence.len() as u32);
                pack_letters(r.sequence, &mut part.packed);
                part.counts.push(r.count);
                part.circular.push(r.circular);
            }
            part
        })?;
        let mut packed: Vec<Vec<u8>> = Vec::with_capacity(parts.len());
        let mut offset: Vec<u64> = Vec::with_capacity(u_total);
        let mut length: Vec<u32> = Vec::with_capacity(u_total);
        let mut counts: Vec<u64> = Vec::with_capacity(u_total);
        let mut circular: Vec<bool> = Vec::with_capacity(u_total);
        for (i, p) in parts.into_iter().enumerate() {
            offset.extend(p.offset.iter().map(|&o| (i as u64) << PART_SHIFT | o));
            length.extend_from_slice(&p.length);
            counts.extend_from_slice(&p.counts);
            circular.extend_from_slice(&p.circular);
            packed.push(p.packed);
        }
        if offset.len() != u_total {
            return Err(AssemblyError::Internal(format!(
                "the store holds {} unitigs, its figures {u_total}",
                offset.len()
            )));
        }
        let mut ends = SideUnionFind::new(2 * u_total);
        self.store().for_each_link(&mut |l| {
            if !circular[l.from as usize] {
                // right end of u: 2u, left end: 2u + 1
                let from = 2 * l.from + l.from_rev as u32;
                let to = 2 * l.to + (!l.to_rev) as u32;
                ends.join_opposite(from, to);
            }
        })?;
        // dense node ids and each end's side
        let chain: Vec<u32> = (0..u_total as u32)
            .filter(|&u| !circular[u as usize])
            .collect();
        let mut node_of_root: Vec<u32> = vec![u32::MAX; 2 * u_total];
        let mut end_at: Vec<End> = vec![End { node: 0, side: 0 }; 2 * u_total];
        let mut odd_nodes: Vec<bool> = Vec::new();
        for &u in &chain {
            for e in [2 * u, 2 * u + 1] {
                let (r, side) = ends.find(e);
                let id = &mut node_of_root[r as usize];
                if *id == u32::MAX {
                    *id = odd_nodes.len() as u32;
                    odd_nodes.push(ends.odd[r as usize]);
                }
                end_at[e as usize] = End {
                    node: *id,
                    side: (side >> 31) as u8,
                };
            }
        }
        drop(node_of_root);
        drop(ends);
        let nodes = odd_nodes.len();
        // 2. components of the graph (nodes joined by unitigs)
        let mut comp = UnionFind::new(nodes);
        for &u in &chain {
            comp.union(end_at[2 * u as usize].node, end_at[2 * u as usize + 1].node);
        }
        // 3. each node's ends by side; deficits become virtual arcs within each component
        let mut side_count = vec![[0u64; 2]; nodes];
        for &u in &chain {
            for e in [2 * u, 2 * u + 1] {
                let End { node, side } = end_at[e as usize];
                side_count[node as usize][side as usize] += 1;
            }
        }
        // deficit slots, grouped by component: (component, node, side wanted)
        let mut slots: Vec<(u32, u32, u8)> = Vec::new();
        for x in 0..nodes {
            let [a, b] = side_count[x];
            let c = comp.find(x as u32);
            if odd_nodes[x] {
                if (a + b) % 2 == 1 {
                    slots.push((c, x as u32, 0));
                }
            } else {
                let (want, n) = if a > b { (1u8, a - b) } else { (0u8, b - a) };
                for _ in 0..n {
                    slots.push((c, x as u32, want));
                }
            }
        }
        slots.sort_unstable();
        // virtual arc j: ends 2 (U + j) and 2 (U + j) + 1
        let mut virtual_ends: Vec<End> = Vec::new();
        for pair in slots.chunks(2) {
            if pair.len() != 2 || pair[0].0 != pair[1].0 {
                return Err(AssemblyError::Internal(
                    "a component with an odd number of unbalanced arc ends".into(),
                ));
            }
            for &(_, node, side) in pair {
                virtual_ends.push(End { node, side });
            }
        }
        drop(slots);
        let arcs = u_total + virtual_ends.len() / 2;
        let end = |e: usize| -> End {
            if e < 2 * u_total {
                end_at[e]
            } else {
                virtual_ends[e - 2 * u_total]
            }
        };
        let is_arc = |a: usize| a >= u_total || !circular[a];
        // 4. pair the ends at each node, side 0 with side 1 (any two at a palindromic node)
        let mut start = vec![0u32; nodes + 1];
        for a in (0..arcs).filter(|&a| is_arc(a)) {
            for e in [2 * a, 2 * a + 1] {
                start[end(e).node as usize + 1] += 1;
            }
        }
        for x in 0..nodes {
            start[x + 1] += start[x];
        }
        let mut by_node = vec![0u32; start[nodes] as usize];
        {
            let mut fill = start.clone();
            for a in (0..arcs).filter(|&a| is_arc(a)) {
                for e in [2 * a, 2 * a + 1] {
                    let x = end(e).node as usize;
                    by_node[fill[x] as usize] = e as u32;
                    fill[x] += 1;
                }
            }
        }
        let mut mate = vec![u32::MAX; 2 * arcs];
        for x in 0..nodes {
            let here = &by_node[start[x] as usize..start[x + 1] as usize];
            if odd_nodes[x] {
                for p in here.chunks(2) {
                    if p.len() == 2 {
                        mate[p[0] as usize] = p[1];
                        mate[p[1] as usize] = p[0];
                    }
                }
            } else {
                // the i-th end of side 0 with the i-th end of side 1, in the order listed
                let next = |from: usize, side: u8| {
                    (from..here.len())
                        .find(|&i| end(here[i] as usize).side == side)
                        .unwrap_or(here.len())
                };
                let (mut i0, mut i1) = (next(0, 0), next(0, 1));
                while i0 < here.len() && i1 < here.len() {
                    let (a, b) = (here[i0], here[i1]);
                    mate[a as usize] = b;
                    mate[b as usize] = a;
                    (i0, i1) = (next(i0 + 1, 0), next(i1 + 1, 1));
                }
                if i0 < here.len() || i1 < here.len() {
                    let ones = here.iter().filter(|&&e| end(e as usize).side == 1).count();
                    return Err(AssemblyError::Internal(format!(
                        "node {x} unbalanced after the virtual arcs ({} and {ones})",
                        here.len() - ones
                    )));
                }
            }
        }
        drop(by_node);
        // 5. the closed trails of the pairing: arc a is entered by end `a_in` and left by the
        // other; at the node it leaves into, the mate of that end enters the next arc
        let mut trail_of = vec![u32::MAX; arcs];
        let mut enters = vec![0u8; arcs]; // which end of each arc its trail enters by
        let mut trails = 0u32;
        for a0 in (0..arcs).filter(|&a| is_arc(a)) {
            if trail_of[a0] != u32::MAX {
                continue;
            }
            let mut e_in = 2 * a0; // enter arc a0 by its end 0 (the right end of a unitig)
            loop {
                let a = e_in / 2;
                if trail_of[a] != u32::MAX {
                    break;
                }
                trail_of[a] = trails;
                enters[a] = (e_in & 1) as u8;
                let e_out = e_in ^ 1;
                e_in = mate[e_out] as usize;
                if e_in == u32::MAX as usize {
                    return Err(AssemblyError::Internal("an arc end without a mate".into()));
                }
            }
            trails += 1;
        }
        // 6. directions of the trails: at each node, every passage of a trail must leave by
        // the same side as the first passage there, or the trail reads backwards
        // (a passage leaves the node by the end that enters the next arc)
        let mut flip = SideUnionFind::new(trails as usize);
        let mut first_at: Vec<(u32, u8)> = vec![(u32::MAX, 0); nodes];
        for a in (0..arcs).filter(|&a| is_arc(a)) {
            let e_in = 2 * a + enters[a] as usize;
            let End { node, side } = end(e_in);
            let t = trail_of[a];
            let s = if odd_nodes[node as usize] { 0 } else { side };
            let f = &mut first_at[node as usize];
            if f.0 == u32::MAX {
                *f = (t, s);
            } else if f.1 == s {
                // same side: same direction
                let (r0, p0) = flip.find(f.0);
                let (r1, p1) = flip.find(t);
                if r0 != r1 {
                    flip.parent[r1 as usize] = r0 | ((p0 ^ p1) & PARITY);
                }
            } else {
                flip.join_opposite(f.0, t);
            }
        }
        drop(first_at);
        let mut reversed = vec![false; trails as usize];
        for (t, r) in reversed.iter_mut().enumerate() {
            *r = flip.find(t as u32).1 != 0;
        }
        drop(flip);
        // 7. the directed graph: vertex 2x + s is node x left by side s (2x for a palindromic
        // node); arc a read from end `i` to end `i ^ 1` goes from (its node at i, side of i)
        // to (its node at i ^ 1, the other side of i ^ 1)
        let vertex = |e: End, leaving: bool| -> u32 {
            if odd_nodes[e.node as usize] {
                2 * e.node
            } else if leaving {
                2 * e.node + e.side as u32
            } else {
                2 * e.node + 1 - e.side as u32
            }
        };
        let hub = 2 * nodes as u32;
        let mut edges: Vec<(u32, u32)> = Vec::with_capacity(arcs + 2 * nodes.min(arcs));
        // what each directed edge is: arc a read forward, from its left end to its right end
        // (2a), or backward (2a + 1), or a hub arc (u32::MAX)
        let mut what: Vec<u32> = Vec::with_capacity(edges.capacity());
        let mut hooked = vec![false; nodes]; // per component root
        for a in (0..arcs).filter(|&a| is_arc(a)) {
            let i = enters[a] as usize ^ reversed[trail_of[a] as usize] as usize;
            let (from, to) = (end(2 * a + i), end(2 * a + (i ^ 1)));
            let (v, w) = (vertex(from, true), vertex(to, false));
            let c = comp.find(from.node) as usize;
            if a >= u_total && !hooked[c] {
                // the component's first virtual arc goes through the hub
                hooked[c] = true;
                edges.push((v, hub));
                what.push(u32::MAX);
                edges.push((hub, w));
                what.push(u32::MAX);
            } else {
                edges.push((v, w));
                // entered by the right end (0): read backward
                what.push(2 * a as u32 + (i == 0) as u32);
            }
        }
        // components without a virtual arc: a pair of hub arcs at one of their vertices
        for &u in &chain {
            let a = u as usize;
            let c = comp.find(end_at[2 * a].node) as usize;
            if !hooked[c] {
                hooked[c] = true;
                let i = enters[a] as usize ^ reversed[trail_of[a] as usize] as usize;
                let v = vertex(end(2 * a + i), true);
                edges.push((v, hub));
                what.push(u32::MAX);
                edges.push((hub, v));
                what.push(u32::MAX);
            }
        }
        drop(mate);
        drop(trail_of);
        drop(enters);
        let components = hooked.iter().filter(|&&h| h).count() as u64
            + circular.iter().filter(|&&c| c).count() as u64;
        // 8. graph-core's Euler circuit
        let (order, backend) = circuit(&edges, hub as usize + 1, exec)?;
        // 9. cut at the hub and the virtual arcs; spell each walk
        let mut stats = EulertigStats {
            strings: 0,
            bases: 0,
            kmers: 0,
            components,
            backend,
        };
        let pos = order
            .iter()
            .position(|&e| edges[e as usize].0 == hub)
            .unwrap_or(0);
        // the walks: the unitigs (and directions) between virtual arcs, then each cycle alone
        // (as the unitig reads); walk i is eulertig i
        let mut steps: Vec<(u32, bool)> = Vec::with_capacity(u_total);
        let mut walks: Vec<(u32, u32)> = Vec::new();
        let mut from = 0usize;
        for j in 0..order.len() {
            let e = order[(pos + j) % order.len()] as usize;
            let w = what[e];
            if w == u32::MAX || (w / 2) as usize >= u_total {
                if from < steps.len() {
                    walks.push((from as u32, steps.len() as u32));
                }
                from = steps.len();
            } else {
                steps.push((w / 2, w & 1 == 1));
            }
        }
        if from < steps.len() {
            walks.push((from as u32, steps.len() as u32));
        }
        drop((order, edges, what));
        for (u, &c) in circular.iter().enumerate() {
            if c {
                walks.push((steps.len() as u32, steps.len() as u32 + 1));
                steps.push((u as u32, false));
            }
        }
        // spelled in rounds of one batch of walks per thread; a round is written while the
        // threads spell the next
        let tigs = Tigs {
            k,
            packed: &packed,
            offset: &offset,
            length: &length,
            counts: &counts,
            steps: &steps,
        };
        // the batches of the round that starts at walk w0: about SPELL_BATCH letters each
        let plan = |w0: usize| -> Vec<(usize, usize)> {
            let mut batches = Vec::with_capacity(threads);
            let mut w = w0;
            while batches.len() < threads && w < walks.len() {
                let first = w;
                let mut letters = 0;
                while w < walks.len() && (w == first || letters < SPELL_BATCH) {
                    letters += tigs.letters(walks[w]);
                    w += 1;
                }
                batches.push((first, w));
            }
            batches
        };
        let mut ready: Vec<Vec<u8>> = vec![Vec::new(); threads];
        let mut spare: Vec<Vec<u8>> = vec![Vec::new(); threads];
        let mut batches = plan(0);
        let mut sums: Vec<(u64, u64)> = std::thread::scope(|scope| {
            spell_round(scope, &tigs, &walks, &batches, &mut ready)
                .into_iter()
                .map(|h| h.join().expect("spelling thread"))
                .collect()
        });
        while !batches.is_empty() {
            let next = plan(batches.last().map_or(walks.len(), |b| b.1));
            let (written, next_sums) = std::thread::scope(|scope| {
                let handles = spell_round(scope, &tigs, &walks, &next, &mut spare);
                let mut written = Ok(());
                for text in &ready[..batches.len()] {
                    written = out.write_all(text);
                    if written.is_err() {
                        break;
                    }
                }
                let sums: Vec<(u64, u64)> = handles
                    .into_iter()
                    .map(|h| h.join().expect("spelling thread"))
                    .collect();
                (written, sums)
            });
            written.map_err(|error| AssemblyError::Disk {
                path: "eulertigs".into(),
                error,
            })?;
            for &(bases, kmers) in &sums {
                stats.bases += bases;
                stats.kmers += kmers;
            }
            stats.strings += (batches.last().map_or(0, |b| b.1) - batches[0].0) as u64;
            std::mem::swap(&mut ready, &mut spare);
            (batches, sums) = (next, next_sums);
        }
        Ok(stats)
    }
}

/// Spells each batch of walks on a thread of its own into its text (as FASTA, eulertig `i` for
/// walk `i`); each thread returns its bases and k-mers.
fn spell_round<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    tigs: &'scope Tigs<'_>,
    walks: &'scope [(u32, u32)],
    batches: &[(usize, usize)],
    texts: &'scope mut [Vec<u8>],
) -> Vec<std::thread::ScopedJoinHandle<'scope, (u64, u64)>> {
    batches
        .iter()
        .zip(texts.iter_mut())
        .map(|(&(a, b), text)| {
            scope.spawn(move || {
                text.clear();
                let mut sum = (0u64, 0u64);
                for (i, &walk) in walks[a..b].iter().enumerate() {
                    let (bases, kmers) = tigs.spell(walk, (a + i) as u64, text);
                    sum.0 += bases;
                    sum.1 += kmers;
                }
                sum
            })
        })
        .collect()
}

/// The unitigs of one chunk of the store, packed.
#[derive(Default)]
struct Part {
    packed: Vec<u8>,
    offset: Vec<u64>,
    length: Vec<u32>,
    counts: Vec<u64>,
    circular: Vec<bool>,
}

/// A unitig's packed bases start at byte `offset & PART_MASK` of part `offset >> PART_SHIFT`.
const PART_SHIFT: u32 = 40;
const PART_MASK: u64 = (1 << PART_SHIFT) - 1;

/// Letters of the eulertigs' text per batch of walks spelled by one thread (a round holds one
/// batch per thread in memory).
const SPELL_BATCH: usize = 4 << 20;

/// The unitigs (2-bit, in memory) and the walks' steps, for spelling.
struct Tigs<'a> {
    k: usize,
    packed: &'a [Vec<u8>],
    offset: &'a [u64],
    length: &'a [u32],
    counts: &'a [u64],
    steps: &'a [(u32, bool)],
}

impl Tigs<'_> {
    /// Letters of the walk `steps[a..b]`: its unitigs overlapping by `k - 1`.
    fn letters(&self, (a, b): (u32, u32)) -> usize {
        let s = &self.steps[a as usize..b as usize];
        s.iter()
            .map(|&(u, _)| self.length[u as usize] as usize)
            .sum::<usize>()
            - (self.k - 1) * (s.len() - 1)
    }

    /// Appends eulertig `id`, the walk `steps[a..b]`, to `text` as FASTA (`>ID LN:i:LEN
    /// KC:i:COUNT km:f:MEAN`); its bases and k-mers.
    fn spell(&self, walk: (u32, u32), id: u64, text: &mut Vec<u8>) -> (u64, u64) {
        let s = &self.steps[walk.0 as usize..walk.1 as usize];
        let len = self.letters(walk);
        let kc: u64 = s.iter().map(|&(u, _)| self.counts[u as usize]).sum();
        let kmers = (len + 1 - self.k) as u64;
        writeln!(
            text,
            ">{id} LN:i:{len} KC:i:{kc} km:f:{:.1}",
            kc as f64 / kmers.max(1) as f64
        )
        .expect("to memory");
        let at = text.len();
        for (j, &(u, rev)) in s.iter().enumerate() {
            let u = u as usize;
            let skip = if j == 0 { 0 } else { self.k - 1 };
            let o = self.offset[u];
            append_letters(
                &self.packed[(o >> PART_SHIFT) as usize][(o & PART_MASK) as usize..],
                self.length[u] as usize,
                skip,
                rev,
                text,
            );
        }
        debug_assert_eq!(text.len() - at, len);
        text.push(b'\n');
        (len as u64, kmers)
    }
}

/// An Euler circuit of the directed graph of `edges` on `n` vertices: graph-core's Hierholzer
/// on the CPU (deterministic), its parallel algorithm on the GPU. Returns the edge indices in
/// circuit order and where it ran.
fn circuit(
    edges: &[(u32, u32)],
    n: usize,
    exec: Exec,
) -> Result<(Vec<u32>, Backend), AssemblyError> {
    if edges.is_empty() {
        return Ok((Vec::new(), Backend::Cpu));
    }
    // CSR by source, remembering each position's edge index
    let mut offsets = vec![0u64; n + 1];
    for &(s, _) in edges {
        offsets[s as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut fill = offsets.clone();
    let mut targets = vec![0u32; edges.len()];
    let mut index = vec![0u32; edges.len()];
    for (i, &(s, t)) in edges.iter().enumerate() {
        let at = fill[s as usize] as usize;
        targets[at] = t;
        index[at] = i as u32;
        fill[s as usize] += 1;
    }
    drop(fill);
    let g = graph_core::Graph::from_csr(offsets, targets)
        .map_err(|e| AssemblyError::Internal(format!("eulertigs graph: {e}")))?;
    let euler =
        |e: graph_core::EulerError| AssemblyError::Internal(format!("eulertigs circuit: {e}"));
    let (trail, backend) = match exec.resolve(g.edge_count(), EULERTIGS_GPU_THRESHOLD)? {
        Target::Cpu => (
            graph_core::euler_circuit_hierholzer(&g).map_err(euler)?,
            Backend::Cpu,
        ),
        Target::Cuda(_) => {
            let (t, b) = graph_core::euler_circuit(&g, Exec::Cuda).map_err(|e| match e {
                graph_core::EulerError::Gpu(g) => AssemblyError::Gpu(g),
                other => euler(other),
            })?;
            (t, b)
        }
    };
    Ok((
        trail.edges.into_iter().map(|p| index[p as usize]).collect(),
        backend,
    ))
}
