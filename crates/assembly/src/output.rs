//! The outputs: unitigs as FASTA with BCALM2's headers, GFA 1.0 (Bandage opens it) and
//! GraphViz DOT, written once for any [`UnitigGraph`] (the in-memory [`Compacted`] with its
//! links, the disk store of `store.rs`); k-mer counts as `KMER<TAB>COUNT` text (as `jellyfish
//! dump -c`) and a count histogram (as `jellyfish histo`).

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::graph::{Link, UnitigGraph, UnitigView, ViewFn};
use crate::kmer::{Word, unpack};
use crate::unitigs::Compacted;

fn sign(rev: bool) -> char {
    if rev { '-' } else { '+' }
}

/// Writes the unitigs of `g` as FASTA, one line of sequence each, with BCALM2's header:
/// `>ID LN:i:LEN KC:i:COUNT km:f:MEAN L:+:ID:- ...` (`KC` the sum of the k-mers' counts,
/// `km` their mean, one `L` per link, see [`Link`]); a colored graph adds GGCAT's color runs
/// `C:<set id in hex>:<k-mers>` before the links. `wrap` turns the writer's errors into
/// the graph's.
///
/// # Errors
/// The graph's and the writer's.
pub(crate) fn fasta<G: UnitigGraph>(
    g: &G,
    out: &mut dyn Write,
    wrap: &dyn Fn(io::Error) -> G::Error,
) -> Result<(), G::Error> {
    let mut line = Vec::with_capacity(256);
    g.for_each_unitig(&mut |u, links| {
        line.clear();
        write!(
            line,
            ">{} LN:i:{} KC:i:{} km:f:{:.1}",
            u.id,
            u.sequence.len(),
            u.total_count,
            u.mean_count()
        )
        .expect("to memory");
        // GGCAT's color runs: the set id in hexadecimal, then the k-mers it covers
        for r in u.colors {
            write!(line, " C:{:x}:{}", r.set, r.kmers).expect("to memory");
        }
        for l in links {
            write!(line, " L:{}:{}:{}", sign(l.from_rev), l.to, sign(l.to_rev)).expect("to memory");
        }
        line.push(b'\n');
        out.write_all(&line).map_err(wrap)?;
        out.write_all(u.sequence).map_err(wrap)?;
        out.write_all(b"\n").map_err(wrap)
    })
}

/// Writes `g` as GFA 1.0: a header, one `S` line per unitig (sequence, `LN:i:`, `KC:i:` and
/// `km:f:` tags; Bandage reads the depth from `KC`; a colored graph adds the color runs as
/// `CR:Z:<set>:<k-mers>,...`), then one `L` line per edge with a
/// `(k-1)M` overlap (a link and its mirror, `L a + b -` and `L b + a -`, are one edge of the
/// bidirected graph, written once).
///
/// # Errors
/// The graph's and the writer's.
pub(crate) fn gfa<G: UnitigGraph>(
    g: &G,
    out: &mut dyn Write,
    wrap: &dyn Fn(io::Error) -> G::Error,
) -> Result<(), G::Error> {
    out.write_all(b"H\tVN:Z:1.0\n").map_err(wrap)?;
    let mut line = Vec::with_capacity(256);
    g.for_each_unitig(&mut |u, _| {
        line.clear();
        write!(line, "S\t{}\t", u.id).expect("to memory");
        line.extend_from_slice(u.sequence);
        write!(
            line,
            "\tLN:i:{}\tKC:i:{}\tkm:f:{:.1}",
            u.sequence.len(),
            u.total_count,
            u.mean_count()
        )
        .expect("to memory");
        // the color runs as one tag: `CR:Z:<set>:<k-mers>,<set>:<k-mers>,...` (decimal ids)
        for (i, r) in u.colors.iter().enumerate() {
            let lead = if i == 0 { "\tCR:Z:" } else { "," };
            write!(line, "{lead}{}:{}", r.set, r.kmers).expect("to memory");
        }
        line.push(b'\n');
        out.write_all(&line).map_err(wrap)
    })?;
    let overlap = g.k() - 1;
    g.for_each_unitig(&mut |_, links| {
        for l in links.iter().filter(|l| l.is_first_of_edge()) {
            writeln!(
                out,
                "L\t{}\t{}\t{}\t{}\t{overlap}M",
                l.from,
                sign(l.from_rev),
                l.to,
                sign(l.to_rev)
            )
            .map_err(wrap)?;
        }
        Ok(())
    })
}

/// Writes `g` as GraphViz DOT: a box per unitig labelled with its id, length and mean count,
/// then an edge per edge of the bidirected graph labelled with the strands (`+-`).
///
/// # Errors
/// The graph's and the writer's.
pub(crate) fn dot<G: UnitigGraph>(
    g: &G,
    out: &mut dyn Write,
    wrap: &dyn Fn(io::Error) -> G::Error,
) -> Result<(), G::Error> {
    writeln!(out, "digraph unitigs {{").map_err(wrap)?;
    writeln!(out, "  node [shape=box, fontname=\"Helvetica\"];").map_err(wrap)?;
    g.for_each_unitig(&mut |u, _| {
        writeln!(
            out,
            "  {} [label=\"{}\\nLN {} km {:.1}{}\"];",
            u.id,
            u.id,
            u.sequence.len(),
            u.mean_count(),
            if u.circular { "\\ncircular" } else { "" }
        )
        .map_err(wrap)
    })?;
    g.for_each_unitig(&mut |_, links| {
        for l in links.iter().filter(|l| l.is_first_of_edge()) {
            writeln!(
                out,
                "  {} -> {} [label=\"{}{}\"];",
                l.from,
                l.to,
                sign(l.from_rev),
                sign(l.to_rev)
            )
            .map_err(wrap)?;
        }
        Ok(())
    })?;
    writeln!(out, "}}").map_err(wrap)
}

/// A graph compacted in memory ([`crate::compact`]) with its links, as the writers read it.
struct InMemory<'a> {
    graph: &'a Compacted,
    links: &'a [Vec<Link>],
}

impl UnitigGraph for InMemory<'_> {
    type Error = io::Error;

    fn k(&self) -> usize {
        self.graph.k
    }

    fn for_each_unitig(&self, f: &mut ViewFn<'_, io::Error>) -> io::Result<()> {
        for (id, u) in self.graph.unitigs.iter().enumerate() {
            let view = UnitigView {
                id: id as u32,
                sequence: &u.sequence,
                kmers: u.kmers as u64,
                total_count: u.total_count,
                circular: u.circular,
                colors: &[],
            };
            f(&view, &self.links[id])?;
        }
        Ok(())
    }
}

/// Writes the unitigs as FASTA, one line of sequence each, with BCALM2's header:
/// `>ID LN:i:LEN KC:i:COUNT km:f:MEAN L:+:ID:- ...` (`KC` the sum of the k-mers' counts,
/// `km` their mean, one `L` per link, see [`Link`]).
///
/// # Errors
/// The writer's.
pub fn write_unitigs_fasta<W: Word>(
    out: &mut dyn Write,
    graph: &Compacted,
    links: &[Vec<Link>],
) -> io::Result<()> {
    fasta(&InMemory { graph, links }, out, &|e| e)
}

/// Writes the compacted graph as GFA 1.0: a header, one `S` line per unitig (sequence,
/// `LN:i:`, `KC:i:` and `km:f:` tags; Bandage reads the depth from `KC`), one `L` line per link
/// with a `(k-1)M` overlap. A link and its mirror (`L a + b -` and `L b + a -`) are one edge
/// of the bidirected graph and written once.
///
/// # Errors
/// The writer's.
pub fn write_gfa(out: &mut dyn Write, graph: &Compacted, links: &[Vec<Link>]) -> io::Result<()> {
    gfa(&InMemory { graph, links }, out, &|e| e)
}

/// The links of a graph, each edge of the bidirected graph once (a link and its mirror are
/// one edge), in order.
pub fn unique_links(links: &[Vec<Link>]) -> Vec<Link> {
    links
        .iter()
        .flatten()
        .filter(|l| l.is_first_of_edge())
        .copied()
        .collect()
}

/// Writes the compacted graph as GraphViz DOT: a box per unitig labelled with its id, length
/// and mean count, an edge per link labelled with the strands (`+-`).
///
/// # Errors
/// The writer's.
pub fn write_dot(out: &mut dyn Write, graph: &Compacted, links: &[Vec<Link>]) -> io::Result<()> {
    dot(&InMemory { graph, links }, out, &|e| e)
}

/// Writes k-mers and counts as `KMER<TAB>COUNT` lines (`jellyfish dump -c`).
///
/// # Errors
/// The writer's.
pub fn write_counts_text<W: Word>(
    out: &mut dyn Write,
    kmers: &[W],
    counts: &[u32],
    k: usize,
) -> io::Result<()> {
    for (&x, &n) in kmers.iter().zip(counts) {
        writeln!(out, "{}\t{n}", unpack(x, k))?;
    }
    Ok(())
}

/// Writes a count histogram as `COUNT NUMBER` lines (`jellyfish histo`).
///
/// # Errors
/// The writer's.
pub fn write_histogram(out: &mut dyn Write, histogram: &BTreeMap<u64, u64>) -> io::Result<()> {
    for (count, number) in histogram {
        writeln!(out, "{count} {number}")?;
    }
    Ok(())
}

/// N50 of a set of lengths: the largest `L` such that the sequences of length `>= L` hold at
/// least half of the total. 0 for none.
///
/// # Examples
/// ```
/// assert_eq!(assembly::n50(&[2, 3, 4, 5, 6]), 5); // 6 + 5 = 11 >= 20 / 2
/// assert_eq!(assembly::n50(&[]), 0);
/// ```
pub fn n50(lengths: &[usize]) -> usize {
    let mut v = lengths.to_vec();
    v.sort_unstable_by(|a, b| b.cmp(a));
    let total: usize = v.iter().sum();
    let mut acc = 0;
    for l in v {
        acc += l;
        if 2 * acc >= total {
            return l;
        }
    }
    0
}
