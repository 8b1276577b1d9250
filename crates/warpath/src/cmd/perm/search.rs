//! `warpath perm --search`: the permutation minimising an assignment or tour objective over
//! all n! (combinatorics' permutation search), verified; its options are flattened into
//! `warpath perm`'s arguments.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use combinatorics::{
    Objective, SearchResult, factorial_u64, rank_permutation, search_permutations,
    search_permutations_range, search_permutations_reference,
};
use gpu_runtime::Exec;

use super::generated_matrix;
use crate::cli_io::InputInfo;
use crate::fail::{unverified, usage};
use crate::report::{format_seconds, progress};

/// Built-in objective of `warpath perm --search`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SearchKind {
    /// Assignment cost sum_i M[i, p(i)].
    Assignment,
    /// Closed tour length over a distance matrix.
    Tour,
}

/// The search options of `warpath perm` (flattened into its arguments).
#[derive(clap::Args)]
pub(super) struct SearchArgs {
    /// Instead of listing permutations, find the one minimising this objective over all n!.
    #[arg(long, value_enum)]
    pub(super) search: Option<SearchKind>,
    /// The n x n matrix of --search: a text table (commas, tabs or spaces; an optional header;
    /// `inf` = forbidden) or a 2-D `.npy` array. Default: a random matrix (seeded by --seed).
    #[arg(long, requires = "search")]
    matrix: Option<PathBuf>,
    /// Seed of the generated matrix (only with --search and no --matrix) [default: 1].
    #[arg(long, conflicts_with = "matrix")]
    pub(super) seed: Option<u64>,
}

/// Conservative rate of `--search` in permutation elements per second (CPU).
const SEARCH_RATE: f64 = 1e9;

/// Reads a square matrix through the shared reader (a text table or a 2-D `.npy` array).
fn read_matrix(path: &Path) -> Result<(usize, Vec<f64>, Option<Vec<String>>)> {
    let a = warpath_io::read_array::<f64>(path)?;
    let header = a.header.clone();
    let (r, c, data) = a.into_matrix("the matrix").map_err(|e| e.in_file(path))?;
    if r != c {
        return Err(usage(format!(
            "{}: the matrix must be square, it is {r} x {c}",
            path.display()
        )));
    }
    Ok((r, data, header))
}

/// `warpath perm --search` (`given_n`: `--n`): the permutation of `0..n` minimising the objective over a matrix
/// (read, or generated from the seed), searched over all n! in pieces, verified by
/// recomputing its score and rank (and, for n <= 9, by the reference search).
pub(super) fn run_search(
    args: &SearchArgs,
    given_n: Option<usize>,
    force: bool,
    backend: Exec,
    json: bool,
) -> Result<()> {
    let kind = args.search.unwrap_or(SearchKind::Assignment);
    let (n, m, header) = match &args.matrix {
        Some(p) => {
            let (n, m, header) = read_matrix(p)?;
            if let Some(want) = given_n
                && want != n
            {
                return Err(usage(format!("--n {want} but the matrix is {n} x {n}")));
            }
            (n, m, header)
        }
        None => {
            let n = given_n.unwrap_or(10);
            (
                n,
                generated_matrix(n, args.seed.unwrap_or(1), kind == SearchKind::Tour),
                None,
            )
        }
    };
    let obj = match kind {
        SearchKind::Assignment => Objective::Assignment(&m),
        SearchKind::Tour => Objective::Tour(&m),
    };
    let total =
        factorial_u64(n).ok_or_else(|| usage(format!("--n {n} is too large: at most 20")))?;
    warpath_io::check_duration(
        &format!("--search over all {n}! = {total} permutations"),
        total as f64 * n as f64 / SEARCH_RATE,
        &format!("{n}! x {n} elements at about {SEARCH_RATE:.0e} per second"),
        force,
    )?;
    let started = Instant::now();
    // Pieces of the rank range (about 2^22 permutations each, at most 4096), so the progress
    // bar moves steadily; combined by (score, rank).
    let pieces = if total >= 1 << 24 {
        (total >> 22).clamp(64, 4096)
    } else {
        1
    };
    let piece = total.div_ceil(pieces);
    let bar = progress(total, "search", json || pieces == 1);
    let mut best: Option<SearchResult> = None;
    let mut s = 0u64;
    while s < total {
        let len = piece.min(total - s);
        let r = search_permutations_range(n, &obj, s, len, backend)?;
        if best.as_ref().is_none_or(|b| r.is_better_than(b)) {
            best = Some(r);
        }
        s += len;
        bar.set_position(s);
    }
    bar.finish_and_clear();
    let best = match best {
        Some(b) => b,
        None => search_permutations(n, &obj, backend)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    // Verify: the score of the reported permutation recomputed directly; the rank of the
    // permutation; and, where affordable, the reference search.
    let mut verified = obj.score(&best.permutation)?.to_bits() == best.score.to_bits()
        && rank_permutation(&best.permutation)? == best.rank;
    if n <= 9 {
        let want = search_permutations_reference(n, &obj)?;
        verified &= want.rank == best.rank && want.score.to_bits() == best.score.to_bits();
    }
    if json {
        crate::cli_io::print_json!({
            "n": n, "objective": obj.name(), "backend": best.backend, "seconds": seconds,
            "permutation": best.permutation, "rank": best.rank, "score": best.score,
            "evaluated": total, "verified": verified, "header": header,
        });
    } else {
        if let (Some(h), Some(path)) = (&header, &args.matrix) {
            let input = InputInfo {
                source: path.display().to_string(),
                header: Some(h.clone()),
            };
            println!("perm --search: {}", input.describe());
        }
        println!(
            "perm --search {}: n = {n}, best score {} at rank {} on {} in {} ({} permutations), verified: {}",
            obj.name(),
            best.score,
            best.rank,
            best.backend,
            format_seconds(seconds),
            total,
            if verified { "yes" } else { "NO" }
        );
        println!("  permutation {:?}", best.permutation);
    }
    if !verified {
        return Err(unverified("verification failed"));
    }
    Ok(())
}
