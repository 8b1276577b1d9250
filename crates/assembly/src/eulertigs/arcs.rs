//! The compacted graph made ready for one Euler circuit (the module notes of `mod.rs` say
//! why): the nodes of the chain unitigs' ends ([`end_nodes`]), then, in [`euler_graph`], the
//! components, the virtual arcs that balance every node, the pairing of the ends at each
//! node, the closed trails it makes, their directions, and the directed graph with its hub.

use crate::AssemblyError;
use crate::store::Store;

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

/// The nodes of the chain unitigs' ends: unitig `u`'s right end is end `2u`, its left end
/// `2u + 1`; a link joins the end it leaves by and the end it enters by, on opposite sides of
/// one node.
pub(super) struct Nodes {
    /// The chain unitigs (the cycles are strings of their own).
    chain: Vec<u32>,
    /// Each end's node and side (chain unitigs only).
    end_at: Vec<End>,
    /// Per node, whether its ends cannot be split into two sides (a palindromic (k-1)-mer).
    odd: Vec<bool>,
}

/// The nodes of the ends of the store's chain unitigs (`circular[u]`: unitig `u` is a cycle),
/// numbered densely, and each end's side.
///
/// # Errors
/// [`AssemblyError::Disk`] reading the links.
pub(super) fn end_nodes(store: &Store, circular: &[bool]) -> Result<Nodes, AssemblyError> {
    let u_total = circular.len();
    let mut ends = SideUnionFind::new(2 * u_total);
    store.for_each_link(&mut |l| {
        if !circular[l.from as usize] {
            let from = 2 * l.from + l.from_rev as u32;
            let to = 2 * l.to + (!l.to_rev) as u32;
            ends.join_opposite(from, to);
        }
    })?;
    let chain: Vec<u32> = (0..u_total as u32)
        .filter(|&u| !circular[u as usize])
        .collect();
    let mut node_of_root: Vec<u32> = vec![u32::MAX; 2 * u_total];
    let mut end_at: Vec<End> = vec![End { node: 0, side: 0 }; 2 * u_total];
    let mut odd: Vec<bool> = Vec::new();
    for &u in &chain {
        for e in [2 * u, 2 * u + 1] {
            let (r, side) = ends.find(e);
            let id = &mut node_of_root[r as usize];
            if *id == u32::MAX {
                *id = odd.len() as u32;
                odd.push(ends.odd[r as usize]);
            }
            end_at[e as usize] = End {
                node: *id,
                side: (side >> 31) as u8,
            };
        }
    }
    Ok(Nodes { chain, end_at, odd })
}

/// The directed graph whose Euler circuit, cut at the hub and the virtual arcs, gives the
/// eulertigs: vertex `2x + s` is node `x` left by side `s` (`2x` for a palindromic node), the
/// last vertex the hub.
pub(super) struct Directed {
    /// The edges, `(from, to)`.
    pub(super) edges: Vec<(u32, u32)>,
    /// What each edge is: unitig `a` read forward, from its left end to its right end (`2a`),
    /// or backward (`2a + 1`), a virtual arc (`2a` or `2a + 1` for `a` from the number of
    /// unitigs), or a hub arc (`u32::MAX`).
    pub(super) what: Vec<u32>,
    /// The hub vertex.
    pub(super) hub: u32,
    /// Connected components of the compacted graph (cycles included).
    pub(super) components: u64,
}

/// The arcs of the balanced graph: the unitigs (the chains; a cycle is no arc), then the
/// virtual arcs; arc `a` has ends `2a` and `2a + 1`.
struct Arcs<'a> {
    nodes: &'a Nodes,
    /// The ends of the virtual arcs: virtual arc `j` has ends `2 (U + j)` and `2 (U + j) + 1`.
    virtual_ends: Vec<End>,
    circular: &'a [bool],
}

impl Arcs<'_> {
    /// The unitigs, `U`.
    fn unitigs(&self) -> usize {
        self.circular.len()
    }

    /// Arc numbers from 0 to the last virtual arc (those of cycles included).
    fn len(&self) -> usize {
        self.unitigs() + self.virtual_ends.len() / 2
    }

    /// The arcs, cycles left out.
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).filter(|&a| a >= self.unitigs() || !self.circular[a])
    }

    /// The node and side of arc end `e`.
    fn end(&self, e: usize) -> End {
        if e < 2 * self.unitigs() {
            self.nodes.end_at[e]
        } else {
            self.virtual_ends[e - 2 * self.unitigs()]
        }
    }

    fn nodes(&self) -> usize {
        self.nodes.odd.len()
    }

    fn odd(&self, node: u32) -> bool {
        self.nodes.odd[node as usize]
    }
}

/// The closed trails of the pairing of the ends: arc `a` lies on trail `of[a]`, which enters
/// it by its end `enters[a]`.
struct Trails {
    of: Vec<u32>,
    enters: Vec<u8>,
    count: u32,
}

/// The directed graph of the unitigs (`circular[u]`: unitig `u` is a cycle) made balanced by
/// virtual arcs and oriented by trails; see [`Directed`].
///
/// # Errors
/// [`AssemblyError::Internal`] for a broken invariant.
pub(super) fn euler_graph(nodes: Nodes, circular: &[bool]) -> Result<Directed, AssemblyError> {
    let mut comp = components(&nodes);
    let arcs = Arcs {
        virtual_ends: virtual_arcs(&nodes, &mut comp)?,
        nodes: &nodes,
        circular,
    };
    let mate = pair_ends(&arcs)?;
    let trails = closed_trails(&arcs, &mate)?;
    drop(mate);
    let reversed = trail_directions(&arcs, &trails);
    Ok(directed_graph(&arcs, &trails, &reversed, &mut comp))
}

/// The connected components of the graph: nodes joined by unitigs.
fn components(nodes: &Nodes) -> UnionFind {
    let mut comp = UnionFind::new(nodes.odd.len());
    for &u in &nodes.chain {
        let (a, b) = (
            nodes.end_at[2 * u as usize],
            nodes.end_at[2 * u as usize + 1],
        );
        comp.union(a.node, b.node);
    }
    comp
}

/// The ends of the virtual arcs that balance every node: each node's deficit of ends on one
/// side (`d mod 2` ends at a palindromic node) becomes virtual arc ends, paired within each
/// component.
///
/// # Errors
/// [`AssemblyError::Internal`] for a component with an odd number of unbalanced ends.
fn virtual_arcs(nodes: &Nodes, comp: &mut UnionFind) -> Result<Vec<End>, AssemblyError> {
    let mut side_count = vec![[0u64; 2]; nodes.odd.len()];
    for &u in &nodes.chain {
        for e in [2 * u, 2 * u + 1] {
            let End { node, side } = nodes.end_at[e as usize];
            side_count[node as usize][side as usize] += 1;
        }
    }
    // deficit slots, grouped by component: (component, node, side wanted)
    let mut slots: Vec<(u32, u32, u8)> = Vec::new();
    for (x, &[a, b]) in side_count.iter().enumerate() {
        let c = comp.find(x as u32);
        if nodes.odd[x] {
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
    let mut virtual_ends: Vec<End> = Vec::with_capacity(slots.len());
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
    Ok(virtual_ends)
}

/// Pairs the ends at each node, side 0 with side 1 (any two at a palindromic node): the mate
/// of each arc end.
///
/// # Errors
/// [`AssemblyError::Internal`] for a node left unbalanced.
fn pair_ends(arcs: &Arcs<'_>) -> Result<Vec<u32>, AssemblyError> {
    let nodes = arcs.nodes();
    let mut start = vec![0u32; nodes + 1];
    for a in arcs.iter() {
        for e in [2 * a, 2 * a + 1] {
            start[arcs.end(e).node as usize + 1] += 1;
        }
    }
    for x in 0..nodes {
        start[x + 1] += start[x];
    }
    let mut by_node = vec![0u32; start[nodes] as usize];
    let mut fill = start.clone();
    for a in arcs.iter() {
        for e in [2 * a, 2 * a + 1] {
            let x = arcs.end(e).node as usize;
            by_node[fill[x] as usize] = e as u32;
            fill[x] += 1;
        }
    }
    drop(fill);
    let mut mate = vec![u32::MAX; 2 * arcs.len()];
    for x in 0..nodes {
        let here = &by_node[start[x] as usize..start[x + 1] as usize];
        if arcs.odd(x as u32) {
            for p in here.chunks(2) {
                if p.len() == 2 {
                    mate[p[0] as usize] = p[1];
                    mate[p[1] as usize] = p[0];
                }
            }
            continue;
        }
        // the i-th end of side 0 with the i-th end of side 1, in the order listed
        let next = |from: usize, side: u8| {
            (from..here.len())
                .find(|&i| arcs.end(here[i] as usize).side == side)
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
            let ones = here
                .iter()
                .filter(|&&e| arcs.end(e as usize).side == 1)
                .count();
            return Err(AssemblyError::Internal(format!(
                "node {x} unbalanced after the virtual arcs ({} and {ones})",
                here.len() - ones
            )));
        }
    }
    Ok(mate)
}

/// The closed trails of the pairing: arc `a` is entered by one end and left by the other; at
/// the node it leaves into, the mate of that end enters the next arc.
///
/// # Errors
/// [`AssemblyError::Internal`] for an arc end without a mate.
fn closed_trails(arcs: &Arcs<'_>, mate: &[u32]) -> Result<Trails, AssemblyError> {
    let mut of = vec![u32::MAX; arcs.len()];
    let mut enters = vec![0u8; arcs.len()];
    let mut count = 0u32;
    for a0 in arcs.iter() {
        if of[a0] != u32::MAX {
            continue;
        }
        let mut e_in = 2 * a0; // enter arc a0 by its end 0 (the right end of a unitig)
        loop {
            let a = e_in / 2;
            if of[a] != u32::MAX {
                break;
            }
            of[a] = count;
            enters[a] = (e_in & 1) as u8;
            e_in = mate[e_in ^ 1] as usize;
            if e_in == u32::MAX as usize {
                return Err(AssemblyError::Internal("an arc end without a mate".into()));
            }
        }
        count += 1;
    }
    Ok(Trails { of, enters, count })
}

/// The direction each trail is read in (`true`: backwards), so that at each node every
/// passage of a trail leaves by the same side as the first passage there: the trails of one
/// component then meet at shared vertices of the directed graph.
fn trail_directions(arcs: &Arcs<'_>, trails: &Trails) -> Vec<bool> {
    // a passage leaves the node by the end that enters the next arc
    let mut flip = SideUnionFind::new(trails.count as usize);
    let mut first_at: Vec<(u32, u8)> = vec![(u32::MAX, 0); arcs.nodes()];
    for a in arcs.iter() {
        let End { node, side } = arcs.end(2 * a + trails.enters[a] as usize);
        let t = trails.of[a];
        let s = if arcs.odd(node) { 0 } else { side };
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
    (0..trails.count).map(|t| flip.find(t).1 != 0).collect()
}

/// The directed graph: arc `a` read from end `i` to end `i ^ 1` goes from (its node at `i`,
/// the side of `i`) to (its node at `i ^ 1`, the other side of `i ^ 1`); each component's
/// first virtual arc goes through the hub, and a component without one gets a pair of hub
/// arcs at one of its vertices.
fn directed_graph(
    arcs: &Arcs<'_>,
    trails: &Trails,
    reversed: &[bool],
    comp: &mut UnionFind,
) -> Directed {
    let u_total = arcs.unitigs();
    let vertex = |e: End, leaving: bool| -> u32 {
        if arcs.odd(e.node) {
            2 * e.node
        } else if leaving {
            2 * e.node + e.side as u32
        } else {
            2 * e.node + 1 - e.side as u32
        }
    };
    // the end each arc is read from
    let from_end = |a: usize| trails.enters[a] as usize ^ reversed[trails.of[a] as usize] as usize;
    let hub = 2 * arcs.nodes() as u32;
    let mut edges: Vec<(u32, u32)> =
        Vec::with_capacity(arcs.len() + 2 * arcs.nodes().min(arcs.len()));
    let mut what: Vec<u32> = Vec::with_capacity(edges.capacity());
    let mut hooked = vec![false; arcs.nodes()]; // per component root
    for a in arcs.iter() {
        let i = from_end(a);
        let (from, to) = (arcs.end(2 * a + i), arcs.end(2 * a + (i ^ 1)));
        let (v, w) = (vertex(from, true), vertex(to, false));
        let c = comp.find(from.node) as usize;
        if a >= u_total && !hooked[c] {
            hooked[c] = true;
            edges.extend([(v, hub), (hub, w)]);
            what.extend([u32::MAX, u32::MAX]);
        } else {
            edges.push((v, w));
            // entered by the right end (0): read backward
            what.push(2 * a as u32 + (i == 0) as u32);
        }
    }
    for &u in &arcs.nodes.chain {
        let a = u as usize;
        let c = comp.find(arcs.end(2 * a).node) as usize;
        if !hooked[c] {
            hooked[c] = true;
            let v = vertex(arcs.end(2 * a + from_end(a)), true);
            edges.extend([(v, hub), (hub, v)]);
            what.extend([u32::MAX, u32::MAX]);
        }
    }
    let components = hooked.iter().filter(|&&h| h).count() as u64
        + arcs.circular.iter().filter(|&&c| c).count() as u64;
    Directed {
        edges,
        what,
        hub,
        components,
    }
}
