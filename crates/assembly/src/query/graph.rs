//! One pass over a colored graph's unitigs (FASTA with `C:<hex id>:<k-mers>` runs in the
//! headers): every unitig checked, and each of its k-mers that a query holds given its
//! color-set id in the pass's [`QueryTable`].

use std::path::Path;

use rayon::prelude::*;

use super::Records;
use super::table::{NOT_FOUND, PREFETCH_AHEAD, QueryTable};
use crate::AssemblyError;
use crate::kmer::{BASE_CODES, Word, canonical};
use crate::reads::{ReadSource, open_fastx};

/// What a pass over the unitigs saw.
#[derive(Debug, Default)]
pub(crate) struct GraphPass {
    /// The k-mers of the graph.
    pub(crate) kmers: u64,
    /// The largest set id the runs name, with the record and the unitig naming it first.
    pub(crate) max_set: Option<(u32, u64, Box<str>)>,
}

/// Unitigs a worker checks and looks up in a row.
const GROUP: usize = 64;

/// Reads the unitigs once (one batch read while the previous one is searched), checking each
/// and giving the table's k-mers their sets.
///
/// # Errors
/// [`AssemblyError::Io`] or [`AssemblyError::Reads`] as the reads reader gives them; then
/// [`AssemblyError::Reads`] naming the record and the unitig for a header whose runs are
/// malformed or do not add up to `LEN - k + 1` k-mers, a unitig shorter than `k` or holding a
/// letter other than `ACGT`, and a k-mer of the queries that is in two unitigs.
pub(crate) fn scan<W: Word>(
    unitigs: &ReadSource<'_>,
    path: &Path,
    k: usize,
    table: &QueryTable<W>,
) -> Result<GraphPass, AssemblyError> {
    let mut pass = GraphPass::default();
    let Some(mut reader) = open_fastx(unitigs)? else {
        return Ok(pass);
    };
    let mut record = 0u64;
    let (mut current, mut next) = (Records::default(), Records::default());
    let mut more = current.read(&mut *reader, &mut record, path, k, false)?;
    let mut first = 1u64;
    while current.len() > 0 {
        let (read, groups) = rayon::join(
            || {
                if more {
                    next.read(&mut *reader, &mut record, path, k, false)
                } else {
                    Ok(false)
                }
            },
            || search_batch(&current, first, path, k, table),
        );
        for g in groups {
            let g = g?;
            pass.kmers += g.kmers;
            if g.max_set.as_ref().map(|m| m.0) > pass.max_set.as_ref().map(|m| m.0) {
                pass.max_set = g.max_set;
            }
        }
        more = read?;
        first += current.len() as u64;
        std::mem::swap(&mut current, &mut next);
        next.clear();
    }
    Ok(pass)
}

/// Checks and looks up every unitig of a batch, [`GROUP`] per task, results in order.
fn search_batch<W: Word>(
    batch: &Records,
    first: u64,
    path: &Path,
    k: usize,
    table: &QueryTable<W>,
) -> Vec<Result<GraphPass, AssemblyError>> {
    (0..batch.len().div_ceil(GROUP))
        .into_par_iter()
        .map_init(
            || (Vec::new(), Vec::new()),
            |(runs, kmers), g| {
                let mut pass = GraphPass::default();
                for i in g * GROUP..batch.len().min((g + 1) * GROUP) {
                    let record = first + i as u64;
                    let header = batch.name(i);
                    let id = header.split_whitespace().next().unwrap_or("");
                    let bad = |message: String| AssemblyError::Reads {
                        path: path.to_path_buf(),
                        record,
                        message: format!("unitig {id}: {message}"),
                    };
                    unitig_kmers(header, batch.seq(i), k, runs, kmers).map_err(bad)?;
                    pass.kmers += kmers.len() as u64;
                    if let Some(&max) = runs.iter().map(|r: &(u32, u64)| &r.0).max()
                        && pass.max_set.as_ref().is_none_or(|m| max > m.0)
                    {
                        pass.max_set = Some((max, record, id.into()));
                    }
                    lookup(table, kmers, k).map_err(bad)?;
                }
                Ok(pass)
            },
        )
        .collect()
}

/// Gives the table's k-mers among `kmers` their sets, each slot's lookup prefetched a few
/// k-mers ahead; an error for a k-mer that has a set already (it is in two unitigs).
#[inline]
fn lookup<W: Word>(table: &QueryTable<W>, kmers: &[(W, u32)], k: usize) -> Result<(), String> {
    for &(x, _) in &kmers[..kmers.len().min(PREFETCH_AHEAD)] {
        table.prefetch(table.home(x));
    }
    for (j, &(x, set)) in kmers.iter().enumerate() {
        if let Some(&(ahead, _)) = kmers.get(j + PREFETCH_AHEAD) {
            table.prefetch(table.home(ahead));
        }
        if let Some(slot) = table.find(x, table.home(x))
            && table.give(slot, set) != NOT_FOUND
        {
            return Err(format!(
                "k-mer {} is in another unitig too: a k-mer is in one unitig only (is {k} the \
                 graph's k?)",
                crate::kmer::unpack(x, k)
            ));
        }
    }
    Ok(())
}

/// Checks a unitig and lists its canonical k-mers with their sets along its header's runs.
fn unitig_kmers<W: Word>(
    header: &str,
    seq: &[u8],
    k: usize,
    runs: &mut Vec<(u32, u64)>,
    out: &mut Vec<(W, u32)>,
) -> Result<(), String> {
    out.clear();
    if let Some(&b) = seq.iter().find(|&&b| BASE_CODES[b as usize] > 3) {
        return Err(format!(
            "{:?} is not a base (a unitig holds A, C, G and T only)",
            b as char
        ));
    }
    if seq.len() < k {
        return Err(format!(
            "{} bases, shorter than k = {k}: it holds no k-mer",
            seq.len()
        ));
    }
    parse_runs(header, runs)?;
    let n = (seq.len() - k + 1) as u64;
    let covered: u64 = runs.iter().map(|r| r.1).sum();
    if covered != n {
        return Err(format!(
            "its color runs cover {covered} k-mers, and its {} bases hold {n} {k}-mers",
            seq.len()
        ));
    }
    let mask = W::mask(k);
    let mut x = W::default();
    for &b in &seq[..k - 1] {
        x = x.push_right(BASE_CODES[b as usize], mask);
    }
    let mut next = seq[k - 1..].iter();
    for &(set, n) in runs.iter() {
        for &b in next.by_ref().take(n as usize) {
            x = x.push_right(BASE_CODES[b as usize], mask);
            out.push((canonical(x, k), set));
        }
    }
    Ok(())
}

/// The `C:<hex id>:<k-mers>` runs of a header, in order, into `runs`.
fn parse_runs(header: &str, runs: &mut Vec<(u32, u64)>) -> Result<(), String> {
    runs.clear();
    for token in header.split_whitespace().skip(1) {
        let Some(run) = token.strip_prefix("C:") else {
            continue;
        };
        let parsed = run.split_once(':').and_then(|(id, n)| {
            let id = u32::from_str_radix(id, 16)
                .ok()
                .filter(|&s| s != NOT_FOUND)?;
            Some((id, n.parse::<u64>().ok().filter(|&n| n > 0)?))
        });
        match parsed {
            Some(r) => runs.push(r),
            None => {
                return Err(format!(
                    "{token:?} is not a color run C:<set id in hex>:<k-mers, at least 1>"
                ));
            }
        }
    }
    if runs.is_empty() {
        return Err("no color run (C:<set id in hex>:<k-mers>) in its header".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_parsed_in_order() {
        let mut runs = Vec::new();
        parse_runs("7 LN:i:40 KC:i:3 km:f:1.0 C:1a:5 C:0:5 L:+:3:-", &mut runs).unwrap();
        assert_eq!(runs, [(26, 5), (0, 5)]);
        for bad in [
            "1 C:g:1",
            "1 C:1",
            "1 C:1:0",
            "1 C:1:x",
            "1 C:ffffffff:1",
            "1 LN:i:3",
        ] {
            assert!(parse_runs(bad, &mut runs).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_unitigs_kmers_follow_its_runs() {
        let (mut runs, mut out) = (Vec::new(), Vec::<(u64, u32)>::new());
        unitig_kmers("u C:0:2 C:1:1", b"ACGTTGC", 5, &mut runs, &mut out).unwrap();
        let sets: Vec<u32> = out.iter().map(|x| x.1).collect();
        assert_eq!(sets, [0, 0, 1]);
        // ACGTT's canonical form is AACGT, GTTGC's is GCAAC
        assert_eq!(out[0].0, crate::kmer::pack::<u64>(b"AACGT", 5).unwrap());
        assert_eq!(out[2].0, crate::kmer::pack::<u64>(b"GCAAC", 5).unwrap());
    }
}
