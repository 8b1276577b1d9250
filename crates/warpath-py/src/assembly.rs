//! `count_kmers` and `assemble`: the assembly crate's counting and unitigs on read files.

use std::path::PathBuf;

use assembly::{
    CountOptions, CountWord, ReadSource, compact_with, compaction_backend, count_kmers as count,
    unique_links, verify_unitigs, write_gfa, write_unitigs_fasta,
};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(count_kmers, m)?)?;
    m.add_function(wrap_pyfunction!(assemble, m)?)?;
    Ok(())
}

fn options(
    k: usize,
    min_count: u32,
    max_count: Option<u32>,
    backend: &str,
) -> PyResult<CountOptions> {
    let mut o = CountOptions::new(k);
    o.min_count = min_count;
    o.max_count = max_count.unwrap_or(u32::MAX);
    o.exec = parse_backend(backend)?;
    Ok(o)
}

fn counted<W: CountWord>(
    py: Python<'_>,
    paths: &[PathBuf],
    o: &CountOptions,
) -> PyResult<assembly::KmerCounts<W>> {
    py.detach(|| {
        let sources: Vec<ReadSource<'_>> = paths.iter().map(|p| ReadSource::File(p)).collect();
        count::<W>(&sources, o, &mut |_| {})
    })
    .map_err(py_err)
}

/// Native half of `warpath.count_kmers`: `(kmers, counts)`; k-mers as uint64 (k <= 31) or an
/// `(n, 2)` uint64 array of high and low words (k > 31).
#[pyfunction]
#[pyo3(signature = (paths, k, min_count, max_count, backend))]
fn count_kmers<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    k: usize,
    min_count: u32,
    max_count: Option<u32>,
    backend: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyArray1<u32>>)> {
    let o = options(k, min_count, max_count, backend)?;
    if k <= 31 {
        let c = counted::<u64>(py, &paths, &o)?;
        Ok((
            c.kmers.into_pyarray(py).into_any(),
            c.counts.into_pyarray(py),
        ))
    } else {
        let c = counted::<u128>(py, &paths, &o)?;
        let words: Vec<u64> = c
            .kmers
            .iter()
            .flat_map(|&x| [(x >> 64) as u64, x as u64])
            .collect();
        let a = ndarray::Array2::from_shape_vec((c.kmers.len(), 2), words)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok((a.into_pyarray(py).into_any(), c.counts.into_pyarray(py)))
    }
}

/// What `assemble` returns to the Python layer.
type Assembled<'py> = (
    Vec<String>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray2<i64>>,
    Bound<'py, PyDict>,
);

/// Native half of `warpath.assemble`: unitig sequences, their k-mer count sums and k-mer
/// numbers, whether each is circular, the links `(m, 4)` `[from, from_rev, to, to_rev]`, and
/// the statistics; writes BCALM-style FASTA and GFA when paths are given.
#[pyfunction]
#[pyo3(signature = (paths, k, min_count, max_count, backend, fasta, gfa))]
#[allow(clippy::too_many_arguments)]
fn assemble<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    k: usize,
    min_count: u32,
    max_count: Option<u32>,
    backend: &str,
    fasta: Option<PathBuf>,
    gfa: Option<PathBuf>,
) -> PyResult<Assembled<'py>> {
    let o = options(k, min_count, max_count, backend)?;
    if k <= 31 {
        assemble_typed::<u64>(py, &paths, &o, fasta, gfa)
    } else {
        assemble_typed::<u128>(py, &paths, &o, fasta, gfa)
    }
}

fn write_file(
    path: &PathBuf,
    f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> PyResult<()> {
    let io = |e: std::io::Error| PyOSError::new_err(format!("{}: {e}", path.display()));
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    f(&mut w).map_err(io)?;
    std::io::Write::flush(&mut w).map_err(io)
}

fn assemble_typed<'py, W: CountWord>(
    py: Python<'py>,
    paths: &[PathBuf],
    o: &CountOptions,
    fasta: Option<PathBuf>,
    gfa: Option<PathBuf>,
) -> PyResult<Assembled<'py>> {
    let c = counted::<W>(py, paths, o)?;
    let compacted_on = compaction_backend::<W>(c.kmers.len(), o.exec).map_err(py_err)?;
    let (g, links) = py
        .detach(|| {
            let g = compact_with(&c.kmers, &c.counts, o.k, o.exec)?;
            let links = g.all_links(&c.kmers);
            Ok::<_, assembly::AssemblyError>((g, links))
        })
        .map_err(py_err)?;
    py.detach(|| verify_unitigs(&g, &c.kmers, &c.counts))
        .map_err(|e| PyRuntimeError::new_err(format!("the unitigs failed verification: {e}")))?;
    if let Some(p) = &fasta {
        write_file(p, |w| write_unitigs_fasta::<W>(w, &g, &links))?;
    }
    if let Some(p) = &gfa {
        write_file(p, |w| write_gfa(w, &g, &links))?;
    }
    let unique = unique_links(&links);
    let flat: Vec<i64> = unique
        .iter()
        .flat_map(|l| {
            [
                l.from as i64,
                l.from_rev as i64,
                l.to as i64,
                l.to_rev as i64,
            ]
        })
        .collect();
    let links_array = ndarray::Array2::from_shape_vec((unique.len(), 4), flat)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let stats = PyDict::new(py);
    let s = &c.stats;
    stats.set_item("reads", s.reads.reads)?;
    stats.set_item("kmers_seen", s.kmers_seen)?;
    stats.set_item("distinct", s.distinct)?;
    stats.set_item("solid", s.solid)?;
    stats.set_item("backend", s.backend.to_string())?;
    stats.set_item("compaction_backend", compacted_on.to_string())?;
    let sequences: Vec<String> = g
        .unitigs
        .iter()
        .map(|u| String::from_utf8_lossy(&u.sequence).into_owned())
        .collect();
    let totals: Vec<u64> = g.unitigs.iter().map(|u| u.total_count).collect();
    let sizes: Vec<u64> = g.unitigs.iter().map(|u| u.kmers as u64).collect();
    let circular: Vec<bool> = g.unitigs.iter().map(|u| u.circular).collect();
    Ok((
        sequences,
        totals.into_pyarray(py),
        sizes.into_pyarray(py),
        circular.into_pyarray(py),
        links_array.into_pyarray(py),
        stats,
    ))
}
