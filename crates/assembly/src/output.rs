//! Stage 4: outputs. Unitigs as FASTA with BCALM2's headers, GFA 1.0 (Bandage opens it),
//! k-mer counts as `KMER<TAB>COUNT` text (as `jellyfish dump -c`) and a count histogram (as
//! `jellyfish histo`).

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::kmer::{Word, unpack};
use crate::unitigs::{Compacted, Link};

fn sign(rev: bool) -> char {
    if rev { '-' } else { '+' }
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
    for (id, u) in graph.unitigs.iter().enumerate() {
        write!(
            out,
            ">{id} LN:i:{} KC:i:{} km:f:{:.1}",
            u.sequence.len(),
            u.total_count,
            u.mean_count()
        )?;
        for l in &links[id] {
            write!(out, " L:{}:{}:{}", sign(l.from_rev), l.to, sign(l.to_rev))?;
        }
        out.write_all(b"\n")?;
        out.write_all(&u.sequence)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes the compacted graph as GFA 1.0: a header, one `S` line per unitig (sequence,
/// `LN:i:`, `KC:i:` and `km:f:` tags; Bandage reads the depth from `KC`), one `L` line per link
/// with a `(k-1)M` overlap. A link and its mirror (`L a + b -` and `L b + a -`) are one edge
/// of the bidirected graph and written once.
///
/// # Errors
/// The writer's.
pub fn write_gfa(out: &mut dyn Write, graph: &Compacted, links: &[Vec<Link>]) -> io::Result<()> {
    writeln!(out, "H\tVN:Z:1.0")?;
    for (id, u) in graph.unitigs.iter().enumerate() {
        out.write_all(format!("S\t{id}\t").as_bytes())?;
        out.write_all(&u.sequence)?;
        writeln!(
            out,
            "\tLN:i:{}\tKC:i:{}\tkm:f:{:.1}",
            u.sequence.len(),
            u.total_count,
            u.mean_count()
        )?;
    }
    let overlap = graph.k - 1;
    for l in unique_links(links) {
        writeln!(
            out,
            "L\t{}\t{}\t{}\t{}\t{overlap}M",
            l.from,
            sign(l.from_rev),
            l.to,
            sign(l.to_rev)
        )?;
    }
    Ok(())
}

/// The links of a graph, each edge of the bidirected graph once (a link and its mirror are
/// one edge), in order.
pub fn unique_links(links: &[Vec<Link>]) -> Vec<Link> {
    links
        .iter()
        .flatten()
        .filter(|l| {
            let mirror = Link {
                from: l.to,
                from_rev: !l.to_rev,
                to: l.from,
                to_rev: !l.from_rev,
            };
            **l <= mirror
        })
        .copied()
        .collect()
}

/// Writes the compacted graph as GraphViz DOT: a box per unitig labelled with its id, length
/// and mean count, an edge per link labelled with the strands (`+-`).
///
/// # Errors
/// The writer's.
pub fn write_dot(out: &mut dyn Write, graph: &Compacted, links: &[Vec<Link>]) -> io::Result<()> {
    writeln!(out, "digraph unitigs {{")?;
    writeln!(out, "  node [shape=box, fontname=\"Helvetica\"];")?;
    for (id, u) in graph.unitigs.iter().enumerate() {
        writeln!(
            out,
            "  {id} [label=\"{id}\\nLN {} km {:.1}{}\"];",
            u.sequence.len(),
            u.mean_count(),
            if u.circular { "\\ncircular" } else { "" }
        )?;
    }
    for l in unique_links(links) {
        writeln!(
            out,
            "  {} -> {} [label=\"{}{}\"];",
            l.from,
            l.to,
            sign(l.from_rev),
            sign(l.to_rev)
        )?;
    }
    writeln!(out, "}}")
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
