//! `count_kmers` and `assemble`: the assembly crate's counting and unitigs on read files.

use std::path::PathBuf;

use assembly::{
    AssemblyError, Colors, CountOptions, CountWord, PartialFile, ReadSource, count_kmers as count,
    unique_links,
};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::backend::parse_backend;
use crate::errors::py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, [count_kmers, assemble]);
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
    Option<Vec<String>>,
    Option<Painted<'py>>,
);

/// A colored graph's colors as `assemble` returns them: the color names, each color set's
/// color numbers, and every unitig's runs in CSR form (`offsets` of `n + 1`, then each run's
/// set and k-mers).
type Painted<'py> = (
    Vec<String>,
    Vec<Vec<u32>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
);

/// Native half of `warpath.assemble`: unitig sequences, their k-mer count sums and k-mer
/// numbers, whether each is circular, the links `(m, 4)` `[from, from_rev, to, to_rev]`, the
/// statistics and, when asked, the eulertigs; writes BCALM-style FASTA, GFA and eulertigs
/// when paths are given. With `color_names` (one per path) or `per_record`, a colored graph:
/// the colors too, and the color sets written to `color_sets` when given (their colors by
/// name or number as `color_sets_format` says). `compress_temp`: temporary files in LZ4
/// blocks.
#[pyfunction]
#[pyo3(signature = (paths, k, min_count, max_count, backend, fasta, gfa, eulertigs, eulertigs_path, max_memory, temp_dir, threads, color_names=None, per_record=false, color_sets=None, color_sets_format="names", compress_temp=false))]
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
    eulertigs: bool,
    eulertigs_path: Option<PathBuf>,
    max_memory: Option<u64>,
    temp_dir: Option<PathBuf>,
    threads: Option<usize>,
    color_names: Option<Vec<String>>,
    per_record: bool,
    color_sets: Option<PathBuf>,
    color_sets_format: &str,
    compress_temp: bool,
) -> PyResult<Assembled<'py>> {
    let mut o = options(k, min_count, max_count, backend)?;
    o.max_memory = max_memory.unwrap_or(0);
    o.temp_dir = temp_dir;
    o.compress_temp = compress_temp;
    o.threads = threads.unwrap_or(0);
    let colors = match (color_names, per_record) {
        (Some(names), _) => Some(Colors::PerSource(names)),
        (None, true) => Some(Colors::PerRecord),
        (None, false) => None,
    };
    if color_sets.is_some() && colors.is_none() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "color_sets needs a colored graph: give colors=",
        ));
    }
    let outs = Outs {
        fasta,
        gfa,
        eulertigs,
        eulertigs_path,
        colors,
        color_sets,
        sets_format: color_sets_format
            .parse()
            .map_err(pyo3::exceptions::PyValueError::new_err)?,
    };
    if k <= 31 {
        assemble_typed::<u64>(py, &paths, &o, &outs)
    } else {
        assemble_typed::<u128>(py, &paths, &o, &outs)
    }
}

/// The files `assemble` writes, and whether it returns the eulertigs.
struct Outs {
    fasta: Option<PathBuf>,
    gfa: Option<PathBuf>,
    eulertigs: bool,
    eulertigs_path: Option<PathBuf>,
    colors: Option<Colors>,
    color_sets: Option<PathBuf>,
    sets_format: assembly::SetsFormat,
}

/// Writes a file under a temporary name, renamed when complete.
fn write_file(
    path: &std::path::Path,
    f: impl FnOnce(&mut dyn std::io::Write) -> Result<(), AssemblyError>,
) -> Result<(), AssemblyError> {
    let mut file = PartialFile::create(path)?;
    f(&mut file)?;
    file.commit()
}

fn assemble_typed<'py, W: CountWord>(
    py: Python<'py>,
    paths: &[PathBuf],
    o: &CountOptions,
    outs: &Outs,
) -> PyResult<Assembled<'py>> {
    let exec = o.exec;
    let (a, eulertigs) = py
        .detach(|| {
            let sources: Vec<ReadSource<'_>> = paths.iter().map(|p| ReadSource::File(p)).collect();
            let a = match &outs.colors {
                Some(c) => assembly::assemble_colored::<W>(&sources, c, o, true, &mut |_| {})?,
                None => assembly::assemble::<W>(&sources, o, true, &mut |_| {})?,
            };
            if let Err(e) = &a.stats.check {
                return Err(AssemblyError::Internal(format!(
                    "the unitigs failed verification: {e}"
                )));
            }
            if let Some(p) = &outs.fasta {
                write_file(p, |w| a.write_fasta(w))?;
            }
            if let Some(p) = &outs.gfa {
                write_file(p, |w| a.write_gfa(w))?;
            }
            if let Some(p) = &outs.color_sets {
                write_file(p, |w| a.write_color_sets(w, outs.sets_format))?;
            }
            if let Some(p) = &outs.eulertigs_path {
                write_file(p, |w| a.write_eulertigs(w, exec).map(|_| ()))?;
            }
            let eulertigs = if outs.eulertigs {
                let mut text = Vec::new();
                a.write_eulertigs(&mut text, exec)?;
                Some(
                    String::from_utf8_lossy(&text)
                        .lines()
                        .filter(|l| !l.starts_with('>'))
                        .map(str::to_string)
                        .collect::<Vec<_>>(),
                )
            } else {
                None
            };
            Ok::<_, AssemblyError>((a, eulertigs))
        })
        .map_err(py_err)?;
    let mut sequences = Vec::with_capacity(a.stats.unitigs as usize);
    let mut totals = Vec::with_capacity(a.stats.unitigs as usize);
    let mut sizes = Vec::with_capacity(a.stats.unitigs as usize);
    let mut circular = Vec::with_capacity(a.stats.unitigs as usize);
    let mut flat: Vec<i64> = Vec::new();
    let (mut offsets, mut run_sets, mut run_kmers) = (vec![0i64], Vec::new(), Vec::new());
    py.detach(|| {
        a.for_each_unitig(&mut |u, links| {
            for r in &u.colors {
                run_sets.push(r.set);
                run_kmers.push(r.kmers);
            }
            offsets.push(run_sets.len() as i64);
            sequences.push(String::from_utf8_lossy(&u.sequence).into_owned());
            totals.push(u.total_count);
            sizes.push(u.kmers);
            circular.push(u.circular);
            // each edge of the bidirected graph once, as the GFA writes them
            for l in unique_links(&[links.to_vec()]) {
                flat.extend([
                    l.from as i64,
                    l.from_rev as i64,
                    l.to as i64,
                    l.to_rev as i64,
                ]);
            }
            Ok(())
        })
    })
    .map_err(py_err)?;
    let links_array = ndarray::Array2::from_shape_vec((flat.len() / 4, 4), flat)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let stats = PyDict::new(py);
    let st = &a.stats;
    let s = &st.counting;
    stats.set_item("reads", s.reads.reads)?;
    stats.set_item("kmers_seen", s.kmers_seen)?;
    stats.set_item("distinct", s.distinct)?;
    stats.set_item("solid", s.solid)?;
    stats.set_item("backend", s.backend.to_string())?;
    stats.set_item("compaction_backend", st.compaction_backend.to_string())?;
    stats.set_item("buckets", s.partitions)?;
    stats.set_item("pieces", st.pieces)?;
    stats.set_item("temp_disk_bytes", st.temp_bytes)?;
    stats.set_item("max_memory", st.max_memory)?;
    let painted = a.colors().map(|c| {
        (
            c.names.clone(),
            c.sets.to_vecs(),
            offsets.into_pyarray(py),
            run_sets.into_pyarray(py),
            run_kmers.into_pyarray(py),
        )
    });
    Ok((
        sequences,
        totals.into_pyarray(py),
        sizes.into_pyarray(py),
        circular.into_pyarray(py),
        links_array.into_pyarray(py),
        stats,
        eulertigs,
        painted,
    ))
}
