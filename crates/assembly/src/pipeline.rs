//! The whole pipeline from reads to the unitigs on disk, under a memory bound: counting into
//! buckets (`count/`), compaction inside each bucket (`pieces.rs`), glue across buckets
//! (`glue.rs`), the final order and the links (`store.rs`), and an independent check.

use std::io::Write;
use std::time::Instant;

use crate::AssemblyError;
use crate::bucketing::{for_each_kmer, superkmers};
use crate::colors::{ColorTable, Colors, color_names, paint, source_tags};
use crate::count::{CountStats, Solid, count_buckets};
use crate::count_word::CountWord;
use crate::glue::glue;
use crate::graph::{Link, StoredUnitig, UnitigFn, UnitigGraph};
use crate::output;
use crate::pieces::compact_buckets;
use crate::plan::{CountOptions, Plan, plan};
use crate::reads::{ReadSource, SourceTags};
use crate::records::solid_runs;
use crate::store::{Store, order_unitigs};
use crate::unitigs::{Compacted, Unitig, compaction_backend};
use crate::work::Progress;

/// What [`assemble`] found and how long each stage took.
#[derive(Debug, Clone, PartialEq)]
pub struct AssemblyStats {
    /// Counting's figures.
    pub counting: CountStats,
    /// Maximal unitigs.
    pub unitigs: u64,
    /// Of which circular.
    pub circular: u64,
    /// Bases in all unitigs.
    pub bases: u64,
    /// N50 of the unitig lengths.
    pub n50: u64,
    /// The longest unitig.
    pub longest: u64,
    /// Links between unitigs, each edge of the bidirected graph once.
    pub links: u64,
    /// Pieces the buckets compacted into (before the glue).
    pub pieces: u64,
    /// Where compaction sorted each bucket's end records ([`crate::compaction_backend`]).
    pub compaction_backend: gpu_runtime::Backend,
    /// The largest total size of the temporary files (0 when they were kept in memory).
    pub temp_bytes: u64,
    /// The memory bound the run sized itself to (`None`: no bound).
    pub max_memory: Option<u64>,
    /// Seconds per stage: `counting`, `compaction`, `glue`, `ordering` (the final order and
    /// the links), `colors` (a colored graph's painting), `verification`.
    pub seconds: Vec<(&'static str, f64)>,
    /// The independent check's verdict: `Ok` or what is wrong.
    pub check: Result<(), String>,
}

/// The maximal unitigs of a read set, on disk (or in memory without a temporary folder),
/// ready to write. Dropping it removes its temporary files.
pub struct Assembly {
    store: Store,
    /// Holds the temporary folder (removed when dropped).
    plan: Plan,
    /// What the run found.
    pub stats: AssemblyStats,
    /// The colors and color sets of a colored graph.
    colors: Option<ColorTable>,
}

/// Counts the reads' k-mers and compacts the solid ones into the maximal unitigs of their
/// bidirected De Bruijn graph, bucket by bucket, within `options.max_memory`.
///
/// The unitigs are those of [`crate::compact`] on the same k-mers, unitig for unitig: the same
/// numbering (chains by their first k-mer, then cycles by their smallest), readings and links,
/// so the files written from the result are byte for byte those of
/// [`crate::write_unitigs_fasta`] and [`crate::write_gfa`] — and the same for any thread count,
/// number of buckets and memory bound.
///
/// Stages (each reports [`Progress`]): counting into minimizer buckets (in temporary files
/// under a bound); compaction inside each bucket into pieces; glue of the pieces across
/// buckets (8 bytes a piece in memory); the unitigs spelled, sorted and numbered; their links.
/// With `verify`, the unitigs' k-mers are counted again and compared with the solid k-mers
/// (each once, every one; the count sums agree).
///
/// # Complexity
/// `O(L)` time for `L` bases of reads (radix sorts and hashing, no step over all k-mers in
/// memory); memory within the bound: one bucket per thread, the glue's 8 bytes per piece of
/// unitig (about one piece per ten solid k-mers); temporary disk about a byte per base of
/// reads while counting, then about 13 bytes per solid k-mer.
///
/// # Errors
/// As [`crate::count_kmers`]; [`AssemblyError::Memory`] when a bucket or the glue cannot fit
/// the bound (the message says how much it needs); [`AssemblyError::Internal`] for a broken
/// invariant (a bug).
///
/// # Examples
/// ```
/// use assembly::{assemble, CountOptions, ReadSource};
/// let fa = b">a\nACCGTATGGCTA\n>b\nACCGTATGGCTA\n";
/// let a = assemble::<u64>(&[ReadSource::Bytes(fa, "r.fa")], &CountOptions::new(5), true, &mut |_| {})?;
/// assert_eq!(a.stats.unitigs, 1);
/// assert_eq!(a.stats.check, Ok(()));
/// let mut fasta = Vec::new();
/// a.write_fasta(&mut fasta)?;
/// assert_eq!(fasta, b">0 LN:i:12 KC:i:16 km:f:2.0\nACCGTATGGCTA\n");
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn assemble<W: CountWord>(
    sources: &[ReadSource<'_>],
    options: &CountOptions,
    verify: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Assembly, AssemblyError> {
    build::<W>(sources, None, options, verify, progress)
}

/// [`assemble`] with colors: the colored compacted De Bruijn graph of `sources`, each input
/// (or record) a color as `colors` says.
///
/// A k-mer is solid when some color holds it `min_count..=max_count` times (counted in that
/// color's inputs alone; set `min_count` to 1 for assemblies); the unitigs are then exactly
/// [`assemble`]'s unitigs of those k-mers, and each carries its color runs
/// ([`crate::StoredUnitig::colors`]): consecutive k-mers held by the same set of colors. The
/// sets are numbered in order of first appearance along the unitigs, so every file written
/// is the same for any thread count, number of buckets and memory bound. Counting runs on
/// the CPU. Painting the unitigs meets every k-mer once more, so it always checks them as
/// `verify` does (and costs no separate pass).
///
/// # Complexity
/// As [`assemble`], plus each bucket's identical super-k-mers of different inputs grouped
/// (in a hash table; their k-mers then sorted once a group), the unitigs spelled once more
/// to find each k-mer's set, and in memory the color sets, packed (from an eighth of a byte
/// to about a byte a color), and a hash-to-id map (16 bytes a set), which the memory bound
/// does not yet count.
///
/// # Errors
/// As [`assemble`]; [`AssemblyError::InvalidParameter`] when `colors` names another number of
/// inputs than `sources`.
///
/// # Examples
/// ```
/// use assembly::{assemble_colored, Colors, CountOptions, ReadSource};
/// let a = b">a\nACCGTATGGCTA\n";
/// let b = b">b\nACCGTATGGC\n";
/// let mut o = CountOptions::new(5);
/// o.min_count = 1;
/// let colors = Colors::PerSource(vec!["a".into(), "b".into()]);
/// let g = assemble_colored::<u64>(
///     &[ReadSource::Bytes(a, "a.fa"), ReadSource::Bytes(b, "b.fa")],
///     &colors, &o, true, &mut |_| {},
/// )?;
/// let table = g.colors().expect("a colored graph");
/// assert_eq!(table.names, ["a", "b"]);
/// let mut fasta = Vec::new();
/// g.write_fasta(&mut fasta)?;
/// // six k-mers in both, the last two in `a` alone (set ids in hex, as GGCAT writes them)
/// assert_eq!(fasta, b">0 LN:i:12 KC:i:14 km:f:1.8 C:0:6 C:1:2\nACCGTATGGCTA\n");
/// assert_eq!(table.sets.to_vecs(), [vec![0, 1], vec![0]]);
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn assemble_colored<W: CountWord>(
    sources: &[ReadSource<'_>],
    colors: &Colors,
    options: &CountOptions,
    verify: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Assembly, AssemblyError> {
    let (tags, known) = source_tags(colors, sources.len())?;
    let mut a = build::<W>(sources, Some(&tags), options, verify, progress)?;
    if let Some(table) = &mut a.colors {
        table.names = color_names(tags, known);
    }
    Ok(a)
}

/// The pipeline, colored when `tags` is given (the color table then without names).
fn build<W: CountWord>(
    sources: &[ReadSource<'_>],
    tags: Option<&SourceTags>,
    options: &CountOptions,
    verify: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Assembly, AssemblyError> {
    let plan = plan::<W>(sources, options)?;
    let mut seconds = Vec::new();
    let mut timed =
        |name: &'static str, t: Instant| seconds.push((name, t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let mut solid = count_buckets::<W>(sources, tags, &plan, progress)?;
    sample(&plan);
    timed("counting", t);
    let t = Instant::now();
    let compaction = compaction_backend::<W>(solid.stats.solid as usize, plan.exec)?;
    let pieces = compact_buckets::<W>(&plan, &solid, compaction, progress)?;
    if pieces.kmers != solid.stats.solid {
        return Err(AssemblyError::Internal(format!(
            "{} solid k-mers, {} in pieces",
            solid.stats.solid, pieces.kmers
        )));
    }
    // compaction was the foreign ends' last reader: their files go now, not with `solid`
    solid.foreign = plan.spill("foreign", 0);
    sample(&plan);
    timed("compaction", t);
    let t = Instant::now();
    let mut pieces = pieces;
    let runs = glue::<W>(&plan, &mut pieces, progress)?;
    sample(&plan);
    timed("glue", t);
    let t = Instant::now();
    let piece_count: u64 = pieces.counts.iter().sum();
    let links = pieces.links;
    let mut store = order_unitigs::<W>(&plan, runs, &links, progress)?;
    drop(links);
    sample(&plan);
    timed("ordering", t);
    // a colored run's painting meets every unitig k-mer in its bucket: it is the check
    let (colors, painted) = match &solid.colors {
        Some(c) => {
            let t = Instant::now();
            let (sets, check) = paint::<W>(&plan, &mut store, &solid, c, progress)?;
            sample(&plan);
            timed("colors", t);
            let table = ColorTable {
                names: Vec::new(),
                sets,
            };
            (Some(table), Some(check))
        }
        None => (None, None),
    };
    let t = Instant::now();
    let check = match painted {
        Some(check) => check,
        None if verify => verify_store::<W>(&plan, &store, &solid, progress)?,
        None => Ok(()),
    };
    timed("verification", t);
    let s = &store.stats;
    let stats = AssemblyStats {
        counting: solid.stats.clone(),
        unitigs: s.unitigs,
        circular: s.circular,
        bases: s.bases,
        n50: s.n50(),
        longest: s.longest,
        links: s.edges,
        pieces: piece_count,
        compaction_backend: compaction,
        temp_bytes: plan.space().map_or(0, |sp| {
            sp.sample();
            sp.peak()
        }),
        max_memory: (plan.budget.total < u64::MAX / 4).then_some(plan.budget.total),
        seconds,
        check,
    };
    drop(solid);
    Ok(Assembly {
        store,
        plan,
        stats,
        colors,
    })
}

/// After a stage: the temporary disk in use sampled for its peak, and the memory the stage
/// freed handed back to the system.
fn sample(plan: &Plan) {
    if let Some(s) = plan.space() {
        s.sample();
    }
    crate::budget::release_freed_memory();
}

/// Counts the unitigs' k-mers again, into the same buckets, and compares each bucket with its
/// solid k-mers: every solid k-mer once, no other; the unitigs' count sums add up.
fn verify_store<W: CountWord>(
    plan: &Plan,
    store: &Store,
    solid: &Solid,
    progress: &mut dyn FnMut(Progress),
) -> Result<Result<(), String>, AssemblyError> {
    let k = plan.k;
    let b = plan.buckets;
    let spill = plan.spill("verify", b);
    let mut occ = vec![0u64; b];
    let mut kc_total = 0u64;
    let mut problem: Option<String> = None;
    {
        let mut out =
            spill.writer((plan.budget.usable() / 8 / b as u64).clamp(256, 1 << 16) as usize)?;
        let mut keys = Vec::new();
        let mut codes = Vec::new();
        store.for_each_unitig(&mut |u, _| {
            kc_total += u.total_count;
            u.codes_checked(k, &mut codes, &mut problem);
            // a cycle's last k-1 bases repeat its first: its k-mers are the first `kmers`
            let m = plan.m;
            superkmers(&codes, k, m, &mut out, &mut occ, &mut keys)?;
            Ok(())
        })?;
        out.finish()?;
    }
    if let Some(p) = problem {
        return Ok(Err(p));
    }
    let bad: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let sums = std::sync::atomic::AtomicU64::new(0);
    plan.for_buckets(
        "verification",
        b,
        progress,
        &|| {
            Ok((
                Vec::<u8>::new(),
                Vec::<u8>::new(),
                Vec::<W>::new(),
                Vec::<W>::new(),
            ))
        },
        &|(scratch, buf, spelled, own), c| {
            spelled.clear();
            spill.for_each_chunk(c, scratch, &mut |chunk| {
                for_each_kmer::<W>(chunk, k, |fw, rc| {
                    spelled.push(if rc < fw { rc } else { fw });
                });
                Ok(())
            })?;
            W::sort_words(spelled)?;
            own.clear();
            let mut sum = 0u64;
            solid.spill.read(c, buf)?;
            for run in solid_runs::<W>(buf) {
                own.extend(run.kmers());
                sum += run.counts().map(u64::from).sum::<u64>();
            }
            own.sort_unstable();
            sums.fetch_add(sum, std::sync::atomic::Ordering::Relaxed);
            if spelled != own {
                let why = if spelled.windows(2).any(|w| w[0] == w[1]) {
                    "the unitigs spell a k-mer twice"
                } else if spelled.len() < own.len() {
                    "a solid k-mer is in no unitig"
                } else {
                    "the unitigs spell a k-mer that is not solid"
                };
                bad.lock()
                    .expect("verdict")
                    .get_or_insert_with(|| format!("bucket {c}: {why}"));
            }
            Ok(())
        },
        &|_| Ok(()),
    )?;
    if let Some(p) = bad.into_inner().expect("verdict") {
        return Ok(Err(p));
    }
    let sums = sums.into_inner();
    if sums != kc_total {
        return Ok(Err(format!(
            "the unitigs' KC add up to {kc_total}, the solid k-mers' counts to {sums}"
        )));
    }
    Ok(Ok(()))
}

impl Assembly {
    /// The k-mer length.
    pub fn k(&self) -> usize {
        self.store.k()
    }

    /// The colors and color sets of a colored graph ([`assemble_colored`]); `None` otherwise.
    pub fn colors(&self) -> Option<&ColorTable> {
        self.colors.as_ref()
    }

    /// Writes a colored graph's color sets as JSON lines, their colors by name or by number
    /// ([`ColorTable::write_json_lines`]).
    ///
    /// # Errors
    /// [`AssemblyError::InvalidParameter`] for an uncolored graph; [`AssemblyError::Disk`]
    /// for the writer.
    pub fn write_color_sets(
        &self,
        out: &mut dyn Write,
        format: crate::SetsFormat,
    ) -> Result<(), AssemblyError> {
        let table = self.colors.as_ref().ok_or_else(|| {
            AssemblyError::InvalidParameter("an uncolored graph has no color sets".into())
        })?;
        table
            .write_json_lines(out, format)
            .map_err(|e| disk("color sets", e))
    }

    /// Calls `f` with each unitig in order and its links (as in the FASTA headers).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] reading the temporary files; the first error of `f`.
    pub fn for_each_unitig(&self, f: &mut UnitigFn<'_>) -> Result<(), AssemblyError> {
        let mut u = StoredUnitig {
            id: 0,
            sequence: Vec::new(),
            kmers: 0,
            total_count: 0,
            circular: false,
            colors: Vec::new(),
        };
        self.store.for_each_unitig(&mut |view, links| {
            u.set(view);
            f(&u, links)
        })
    }

    /// Writes the unitigs as FASTA with BCALM2's headers, byte for byte as
    /// [`crate::write_unitigs_fasta`] writes [`crate::compact`]'s.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for the temporary files or the writer.
    pub fn write_fasta(&self, out: &mut dyn Write) -> Result<(), AssemblyError> {
        output::fasta(&self.store, out, &|e| disk("unitigs", e))
    }

    /// Writes the compacted graph as GFA 1.0, as [`crate::write_gfa`] does.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for the temporary files or the writer.
    pub fn write_gfa(&self, out: &mut dyn Write) -> Result<(), AssemblyError> {
        output::gfa(&self.store, out, &|e| disk("GFA", e))
    }

    /// Writes the compacted graph as GraphViz DOT, as [`crate::write_dot`] does.
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] for the temporary files or the writer.
    pub fn write_dot(&self, out: &mut dyn Write) -> Result<(), AssemblyError> {
        output::dot(&self.store, out, &|e| disk("DOT", e))
    }

    /// The unitigs and their links in memory (for [`crate::contigs`] and callers that want the
    /// whole graph): about the unitigs' bases plus 40 bytes a unitig.
    ///
    /// The [`Compacted`] has no per-k-mer index: use the links returned with it
    /// ([`Compacted::all_links`] and [`crate::verify_unitigs`] need the k-mer array that
    /// [`crate::compact`] keeps).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] reading the temporary files; [`AssemblyError::Memory`] when
    /// the graph would take more than half the run's memory bound.
    pub fn to_graph(&self) -> Result<(Compacted, Vec<Vec<Link>>), AssemblyError> {
        let need = self.stats.bases + 48 * self.stats.unitigs + 32 * self.stats.links;
        if let Some(bound) = self.stats.max_memory
            && need > bound / 2
        {
            return Err(AssemblyError::Memory(format!(
                "the graph of {} unitigs takes about {} in memory (for contigs), more than half \
                 the memory bound allows; raise --max-memory",
                self.stats.unitigs,
                crate::error::human_bytes(need)
            )));
        }
        let mut unitigs = Vec::with_capacity(self.stats.unitigs as usize);
        let mut links = Vec::with_capacity(self.stats.unitigs as usize);
        self.store.for_each_unitig(&mut |u, l| {
            unitigs.push(Unitig::stored(u));
            links.push(l.to_vec());
            Ok(())
        })?;
        Ok((Compacted::from_unitigs(self.k(), unitigs), links))
    }

    /// How the run sized itself: buckets, threads, memory bound.
    pub fn buckets(&self) -> usize {
        self.plan.buckets
    }

    /// The compacted graph on disk.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The threads the run works with (`CountOptions::threads`, or the cores).
    pub(crate) fn threads(&self) -> usize {
        self.plan.threads()
    }
}

/// A failed write of an output (named `what`).
fn disk(what: &str, error: std::io::Error) -> AssemblyError {
    AssemblyError::Disk {
        path: what.into(),
        error,
    }
}
