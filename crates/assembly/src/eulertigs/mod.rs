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
//!
//! `arcs.rs` builds that directed graph from the store's links (nodes, components, virtual
//! arcs, pairing, trails, directions); `spell.rs` reads the unitigs back, cuts the circuit
//! into walks and spells them; here is the API and the circuit.

mod arcs;
mod spell;

use std::io::Write;

use gpu_runtime::{Backend, Exec, Target};

use crate::AssemblyError;
use crate::error::human_bytes;
use crate::pipeline::Assembly;

use spell::{SPELL_BATCH, Tigs};

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
        let u_total = self.stats.unitigs as usize;
        let threads = self.threads().max(1);
        self.check_eulertig_memory(u_total, threads)?;
        let unitigs = spell::load_unitigs(self.store(), threads, u_total)?;
        let nodes = arcs::end_nodes(self.store(), &unitigs.circular)?;
        let graph = arcs::euler_graph(nodes, &unitigs.circular)?;
        let (order, backend) = circuit(&graph.edges, graph.hub as usize + 1, exec)?;
        let (steps, walks) = spell::walks(&order, &graph, &unitigs.circular);
        let components = graph.components;
        drop((order, graph));
        let tigs = Tigs {
            k: self.k(),
            unitigs: &unitigs,
            steps: &steps,
        };
        let done = spell::write_walks(out, &tigs, &walks, threads)?;
        Ok(EulertigStats {
            strings: done.strings,
            bases: done.bases,
            kmers: done.kmers,
            components,
            backend,
        })
    }

    /// Checks that the eulertigs of `u_total` unitigs, spelled on `threads` threads, fit half
    /// the run's memory bound, and that their ends can be numbered.
    fn check_eulertig_memory(&self, u_total: usize, threads: usize) -> Result<(), AssemblyError> {
        let need = BYTES_PER_UNITIG * u_total as u64
            + self.stats.bases / 4
            + 2 * threads as u64 * SPELL_BATCH as u64;
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
        Ok(())
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
