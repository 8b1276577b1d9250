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

/// Appends `n` in decimal.
#[inline]
fn push_int(line: &mut Vec<u8>, n: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Appends `v` with one decimal, byte for byte as `format!("{v:.1}")` writes it (its exact
/// binary value rounded to tenths, ties to even), without `fmt`'s exact float formatting,
/// which falls back to big-number arithmetic for most values, once for every unitig's
/// header.
fn push_tenths(line: &mut Vec<u8>, v: f64) {
    if !(0.0..1e18).contains(&v) {
        write!(line, "{v:.1}").expect("to memory");
        return;
    }
    // v = m 2^e exactly; 10 v rounded to an integer, ties to even
    let bits = v.to_bits();
    let (exp, frac) = (((bits >> 52) & 0x7ff) as i32, bits & ((1 << 52) - 1));
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, exp - 1075)
    };
    let x = 10 * u128::from(m);
    let tenths = if e >= 0 {
        x << e
    } else if e <= -120 {
        0 // below 2^-60: 0.0
    } else {
        let s = -e as u32;
        let (q, r, half) = (x >> s, x & ((1 << s) - 1), 1u128 << (s - 1));
        if r > half || (r == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    push_int(line, tenths / 10);
    line.push(b'.');
    line.push(b'0' + (tenths % 10) as u8);
}

/// Appends a unitig's length, k-mer count sum and mean count tags (`LN:i:`, `KC:i:`,
/// `km:f:`), each after `sep`: the FASTA header's and the GFA `S` line's.
#[inline]
fn push_count_tags(line: &mut Vec<u8>, u: &UnitigView<'_>, sep: u8) {
    for (tag, value) in [
        (b"LN:i:", u.sequence.len() as u64),
        (b"KC:i:", u.total_count),
    ] {
        line.push(sep);
        line.extend_from_slice(tag);
        push_int(line, value);
    }
    line.push(sep);
    line.extend_from_slice(b"km:f:");
    push_tenths(line, u.mean_count());
}

/// Calls `write` once for each edge of the bidirected graph `g` (the first of each link and
/// its mirror, see [`Link::is_first_of_edge`]).
fn for_each_edge<G: UnitigGraph>(
    g: &G,
    wrap: &dyn Fn(io::Error) -> G::Error,
    mut write: impl FnMut(&Link) -> io::Result<()>,
) -> Result<(), G::Error> {
    g.for_each_unitig(&mut |_, links| {
        for l in links.iter().filter(|l| l.is_first_of_edge()) {
            write(l).map_err(wrap)?;
        }
        Ok(())
    })
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
        line.push(b'>');
        push_int(&mut line, u.id);
        push_count_tags(&mut line, u, b' ');
        // GGCAT's color runs: the set id in hexadecimal, then the k-mers it covers
        for r in u.colors {
            write!(line, " C:{:x}:", r.set).expect("to memory");
            push_int(&mut line, r.kmers);
        }
        for l in links {
            write!(line, " L:{}:", sign(l.from_rev)).expect("to memory");
            push_int(&mut line, l.to);
            write!(line, ":{}", sign(l.to_rev)).expect("to memory");
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
        push_count_tags(&mut line, u, b'\t');
        // the color runs as one tag: `CR:Z:<set>:<k-mers>,<set>:<k-mers>,...` (decimal ids)
        for (i, r) in u.colors.iter().enumerate() {
            let lead = if i == 0 { "\tCR:Z:" } else { "," };
            write!(line, "{lead}{}:{}", r.set, r.kmers).expect("to memory");
        }
        line.push(b'\n');
        out.write_all(&line).map_err(wrap)
    })?;
    let overlap = g.k() - 1;
    for_each_edge(g, wrap, |l| {
        writeln!(
            out,
            "L\t{}\t{}\t{}\t{}\t{overlap}M",
            l.from,
            sign(l.from_rev),
            l.to,
            sign(l.to_rev)
        )
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
    for_each_edge(g, wrap, |l| {
        writeln!(
            out,
            "  {} -> {} [label=\"{}{}\"];",
            l.from,
            l.to,
            sign(l.from_rev),
            sign(l.to_rev)
        )
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tenths(v: f64) -> String {
        let mut line = Vec::new();
        push_tenths(&mut line, v);
        String::from_utf8(line).expect("ASCII")
    }

    #[test]
    fn tenths_are_fmts_on_ties_and_extremes() {
        for v in [
            0.0,
            0.05,
            0.25,
            0.75,
            1.25,
            2.5,
            0.15,
            1.45,
            3.35,
            9.95,
            99.95,
            1e-300,
            5e-324,
            0.04999999999999999,
            123456789.05,
            1e17 + 0.5,
            9.999e17,
            2e18,
            1e300,
        ] {
            assert_eq!(tenths(v), format!("{v:.1}"), "{v:e}");
        }
    }

    proptest! {
        #[test]
        fn tenths_are_fmts_on_mean_counts(total in 0u64..1 << 44, kmers in 1u64..1 << 34) {
            let v = total as f64 / kmers as f64;
            prop_assert_eq!(tenths(v), format!("{v:.1}"));
        }

        #[test]
        fn tenths_are_fmts_on_any_value(bits in 0u64..0x7ff0_0000_0000_0000) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(tenths(v), format!("{v:.1}"));
        }
    }
}
