//! The De Bruijn graph of the k-mers of DNA reads (FASTA/FASTQ, read with needletail).

use std::io::Read;

use rayon::prelude::*;

use crate::{EulerTrail, Graph, GraphError, VertexNames};

/// The De Bruijn graph of a set of reads and what went into it.
#[derive(Debug, Clone)]
pub struct KmerGraph {
    /// Vertices are the distinct (k-1)-mers (named by their bases, in sorted order), edges the
    /// distinct k-mers, from prefix to suffix.
    pub graph: Graph,
    /// k.
    pub k: u32,
    /// Number of records read.
    pub reads: u64,
    /// Number of k-mer occurrences (before removing duplicates).
    pub kmer_occurrences: u64,
    /// Number of k-mer windows skipped because they hold a base other than A, C, G, T.
    pub skipped_windows: u64,
}

const BASES: [u8; 4] = *b"ACGT";

fn code(b: u8) -> Option<u64> {
    match b {
        b'A' | b'a' => Some(0),
        b'C' | b'c' => Some(1),
        b'G' | b'g' => Some(2),
        b'T' | b't' => Some(3),
        _ => None,
    }
}

fn decode(mut x: u64, len: u32) -> String {
    let mut s = vec![b'A'; len as usize];
    for c in s.iter_mut().rev() {
        *c = BASES[(x & 3) as usize];
        x >>= 2;
    }
    String::from_utf8(s).unwrap_or_default()
}

/// Reads FASTA or FASTQ (detected from the first byte) and builds the De Bruijn graph of the
/// distinct k-mers of the reads: one edge per distinct k-mer, from its (k-1)-prefix to its
/// (k-1)-suffix. Bases are case-insensitive; windows holding other letters (`N`) are skipped.
///
/// # Complexity
/// `O(L + K log K)` for `L` bases and `K` k-mer occurrences (a parallel sort removes
/// duplicates).
///
/// # Errors
/// [`GraphError::InvalidParameter`] unless `2 <= k <= 32`; [`GraphError::Reads`] when the
/// input is not FASTA/FASTQ (with needletail's message, which names the line).
///
/// # Examples
/// ```
/// let fasta = b">r1\nACGTAC\n>r2\nGTACGG\n";
/// let kg = graph_core::kmer_graph_from_reads(&fasta[..], 3)?;
/// assert_eq!(kg.graph.edge_count(), 5); // ACG CGT GTA TAC ACG* GTA* CGG (* repeats)
/// assert_eq!(kg.graph.vertex_label(0), "AC");
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn kmer_graph_from_reads<R: Read + Send>(input: R, k: u32) -> Result<KmerGraph, GraphError> {
    if !(2..=32).contains(&k) {
        return Err(GraphError::InvalidParameter(format!(
            "k must be between 2 and 32, not {k}"
        )));
    }
    let mut reader =
        needletail::parse_fastx_reader(input).map_err(|e| GraphError::Reads(e.to_string()))?;
    let mask: u64 = if k == 32 {
        u64::MAX
    } else {
        (1u64 << (2 * k)) - 1
    };
    let mut kmers: Vec<u64> = Vec::new();
    let (mut reads, mut skipped) = (0u64, 0u64);
    while let Some(rec) = reader.next() {
        let rec = rec.map_err(|e| GraphError::Reads(e.to_string()))?;
        reads += 1;
        let seq = rec.seq();
        let mut x = 0u64;
        let mut valid = 0u32; // bases since the last invalid one
        for (i, &b) in seq.iter().enumerate() {
            match code(b) {
                Some(c) => {
                    x = ((x << 2) | c) & mask;
                    valid += 1;
                }
                None => valid = 0,
            }
            if i + 1 >= k as usize {
                if valid >= k {
                    kmers.push(x);
                } else {
                    skipped += 1;
                }
            }
        }
    }
    let occurrences = kmers.len() as u64;
    kmers.par_sort_unstable();
    kmers.dedup();
    let vmask = (1u64 << (2 * (k - 1))) - 1;
    let mut verts: Vec<u64> = kmers
        .par_iter()
        .flat_map_iter(|&x| [x >> 2, x & vmask])
        .collect();
    verts.par_sort_unstable();
    verts.dedup();
    if verts.len() >= u32::MAX as usize || kmers.len() as u64 > crate::MAX_EULER_EDGES {
        return Err(GraphError::TooLarge {
            what: "distinct k-mers",
            count: kmers.len() as u128,
            max: crate::MAX_EULER_EDGES as u128,
        });
    }
    let id = |x: u64| verts.binary_search(&x).unwrap_or_default() as u32;
    let (s, t): (Vec<u32>, Vec<u32>) = kmers
        .par_iter()
        .map(|&x| (id(x >> 2), id(x & vmask)))
        .unzip();
    let names: Vec<String> = verts.par_iter().map(|&v| decode(v, k - 1)).collect();
    let graph = Graph::from_sources_targets(verts.len(), &s, &t)?
        .with_names(VertexNames::from_names(names)?)?;
    Ok(KmerGraph {
        graph,
        k,
        reads,
        kmer_occurrences: occurrences,
        skipped_windows: skipped,
    })
}

/// Reads a FASTA/FASTQ file into a [`KmerGraph`] (see [`kmer_graph_from_reads`]).
///
/// # Complexity
/// As [`kmer_graph_from_reads`].
///
/// # Errors
/// [`GraphError::Io`] when the file cannot be opened, otherwise as [`kmer_graph_from_reads`].
///
/// # Examples
/// ```no_run
/// let kg = graph_core::kmer_graph_from_file("reads.fa", 21)?;
/// println!("{} k-mers", kg.graph.edge_count());
/// # Ok::<(), graph_core::GraphError>(())
/// ```
pub fn kmer_graph_from_file(
    path: impl AsRef<std::path::Path>,
    k: u32,
) -> Result<KmerGraph, GraphError> {
    let f = std::fs::File::open(path)?;
    kmer_graph_from_reads(std::io::BufReader::new(f), k)
}

/// The sequence a walk spells in a graph whose vertices are named by overlapping words: the
/// first vertex's name, then the last letter of each following vertex's name (the assembly of
/// an Euler path of a k-mer graph).
///
/// # Complexity
/// `O(E + total name length)`.
///
/// # Examples
/// ```
/// use graph_core::{kmer_graph_from_reads, euler_path, spell_walk, Exec};
/// let kg = kmer_graph_from_reads(&b">r\nGATTACA\n"[..], 4)?;
/// let (p, _) = euler_path(&kg.graph, Exec::Cpu)?;
/// assert_eq!(spell_walk(&kg.graph, &p), "GATTACA");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn spell_walk(g: &Graph, trail: &EulerTrail) -> String {
    let mut s = String::new();
    let mut it = trail.vertices.iter();
    if let Some(&v) = it.next() {
        s.push_str(&g.vertex_label(v));
    }
    for &v in it {
        if let Some(c) = g.vertex_label(v).chars().last() {
            s.push(c);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Exec, euler_path, is_euler_path};

    #[test]
    fn fixture_fasta_assembles() {
        let data = include_bytes!("../tests/data/tiny.fa");
        let kg = kmer_graph_from_reads(&data[..], 5).unwrap();
        assert_eq!(kg.reads, 3);
        assert!(kg.skipped_windows > 0, "the fixture has an N");
        let (p, _) = euler_path(&kg.graph, Exec::Cpu).unwrap();
        assert!(is_euler_path(&kg.graph, &p));
        assert_eq!(spell_walk(&kg.graph, &p), "ATGGCGTGCAATCCGTAGGCT");
    }

    #[test]
    fn fastq_and_errors() {
        let fq = b"@r1\nACGTT\n+\nIIIII\n";
        let kg = kmer_graph_from_reads(&fq[..], 3).unwrap();
        assert_eq!(kg.graph.edge_count(), 3);
        assert!(kmer_graph_from_reads(&fq[..], 1).is_err());
        assert!(kmer_graph_from_reads(&fq[..], 33).is_err());
        assert!(matches!(
            kmer_graph_from_reads(&b"hello"[..], 3),
            Err(GraphError::Reads(_))
        ));
        let kg = kmer_graph_from_reads(&b">x\nAC\n"[..], 32).unwrap();
        assert_eq!(kg.graph.edge_count(), 0);
        // a quality line of another length names the record
        let bad = b"@r1\nACGT\n+\nIII\n";
        let e = kmer_graph_from_reads(&bad[..], 3).unwrap_err().to_string();
        assert!(e.contains("r1"), "{e}");
    }

    /// gzip-compressed reads are read as the plain ones; a truncated gzip is an error.
    #[test]
    fn gzip_reads_and_a_truncated_gzip() {
        use std::io::Write;
        let plain = include_bytes!("../tests/data/tiny.fa");
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(plain).unwrap();
        let gz = z.finish().unwrap();
        let a = kmer_graph_from_reads(&plain[..], 5).unwrap();
        let b = kmer_graph_from_reads(&gz[..], 5).unwrap();
        assert_eq!(
            (a.reads, a.graph.edge_count()),
            (b.reads, b.graph.edge_count())
        );
        let cut = &gz[..gz.len() / 2];
        assert!(matches!(
            kmer_graph_from_reads(cut, 5),
            Err(GraphError::Reads(_))
        ));
    }
}
