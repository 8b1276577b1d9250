//! `warpath assemble`: reads to the maximal unitigs of their De Bruijn graph (BCALM2's job),
//! as BCALM-style FASTA, GFA 1.0 and GraphViz.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use assembly::{
    Assembly, AssemblyError, Colors, Contig, ContigOptions, CountOptions, CountWord, EulertigStats,
    ReadSource, contigs, n50,
};
use warpath_io::{Format, Output};

use super::{CountArgs, Sink, StageBar, input_bytes, peak_memory, write_out};
use crate::cli_io::{one_stdout, outputs, report, written};
use crate::fail::{unverified, usage};
use crate::report::format_seconds;

/// Arguments of `warpath assemble`.
#[derive(clap::Args)]
#[command(after_help = "\
Counts canonical k-mers, keeps those seen at least --min-count times (the solid ones), and
compacts them into the maximal unitigs of the bidirected De Bruijn graph: the same unitigs as
BCALM2, Cuttlefish and GGCAT (circular ones included).

The k-mers go to buckets by minimizer in temporary files (--temp-dir); each bucket is counted
and compacted on its own and the pieces are glued across buckets, so the run stays within
--max-memory (a bound on its peak resident memory, not a hint) whatever the genome's size.
The output files are the same, byte for byte, for any --threads and --max-memory, and are
written under a temporary name and renamed when complete: a failed or stopped run (Ctrl-C, a
full disk) leaves no partial file under an output's name. --backend picks where the counting
sorts run (cuda: on the GPU, k <= 31). Afterwards the unitigs' k-mers are counted again and
compared with the solid k-mers: each solid k-mer in exactly one unitig, once.

Outputs:
  --unitigs  FASTA with BCALM2's headers: >ID LN:i:LEN KC:i:COUNT km:f:MEAN L:+:ID:- ...
             (standard output by default, except under --json)
  --gfa      GFA 1.0 (S lines with LN/KC/km tags, L lines with (k-1)M overlaps); Bandage opens it
  --dot      GraphViz: a box per unitig, an edge per link
  --contigs  FASTA of contigs: the graph cleaned of tips (< 2k), bubbles of single errors and
             unitigs far below their neighbours' coverage, then walked along unique links;
             contigs of at least 2k bases, longest first (>contig_N LN:i:LEN km:f:MEAN)
  --eulertigs  FASTA of eulertigs (>ID LN:i:LEN KC:i:COUNT km:f:MEAN): the same k-mers as the
             unitigs, each once, in as few strings as possible (Schmidt & Alanko 2022), so
             k-1 bases shorter per join; SSHash, Fulgor and GGCAT read them as they read
             unitigs. Deterministic on the CPU; --backend cuda runs the Euler circuit on the
             GPU (the same count and length, the text may differ)

Colored graphs (pangenomes): --colors A.fa B.fa ... (each file one color, named by its file
name), --colored-inputs LIST (lines NAME<TAB>PATH, GGCAT's -d; files may share a name) or
--color-per-record READS (each record one color, named by its header's first word). A k-mer is
solid when some color holds it --min-count times (default 1, counted per input); the unitigs
are those of the uncolored graph of these k-mers. Each unitig's header then carries GGCAT's
color runs, C:<set id in hex>:<k-mers> for consecutive k-mers held by the same colors, before
its links; the GFA's S lines a CR:Z:<set>:<k-mers>,... tag (decimal ids); --color-sets writes
the sets as JSON lines: first {\"colors\": [names]}, then {\"id\": N, \"colors\": [names]} per set.
A pangenome's sets hold hundreds of names each (gigabytes for a thousand genomes):
--color-sets-format numbers lists each set's colors by number in the first line's order
instead, a run of three or more as its inclusive [first, last] ({\"id\": 4, \"colors\": [[0, 2], 7]}). `warpath query` and
`warpath.query` read both forms.

Examples:
  warpath assemble reads.fq.gz --k 31 --unitigs unitigs.fa --gfa graph.gfa --contigs contigs.fa
  warpath assemble r1.fa r2.fa --k 21 --min-count 3 --unitigs u.fa --json
  warpath assemble --colors g1.fa g2.fa g3.fa --k 31 --unitigs pan.fa --color-sets pan.jsonl
  warpath assemble --colored-inputs list.tsv --k 31 --gfa pan.gfa --color-sets pan.jsonl")]
pub(crate) struct AssembleArgs {
    #[command(flatten)]
    count: CountArgs,
    /// Write the unitigs here (.fa, .fasta or -).
    #[arg(long)]
    unitigs: Option<PathBuf>,
    /// Write the compacted graph as GFA 1.0 here (.gfa or -).
    #[arg(long)]
    gfa: Option<PathBuf>,
    /// Write the compacted graph as GraphViz DOT here (.dot or -).
    #[arg(long)]
    dot: Option<PathBuf>,
    /// Write contigs here (.fa, .fasta or -): the cleaned graph walked along unique links.
    #[arg(long)]
    contigs: Option<PathBuf>,
    /// Write eulertigs here (.fa, .fasta or -): the fewest strings holding every solid k-mer
    /// exactly once (Schmidt & Alanko), from Euler circuits of the compacted graph.
    #[arg(long)]
    eulertigs: Option<PathBuf>,
    /// Build a colored graph: each of these files is one color, named by its file name.
    #[arg(long, num_args = 1.., value_name = "FILE", conflicts_with_all = ["colored_inputs", "color_per_record"])]
    colors: Vec<PathBuf>,
    /// Build a colored graph from a list of `NAME<TAB>PATH` lines (GGCAT's -d): each file has
    /// the color of its name. Relative paths are taken from the current folder, else from the
    /// list's folder; empty lines and lines starting with `#` are skipped.
    #[arg(long, value_name = "LIST", conflicts_with = "color_per_record")]
    colored_inputs: Option<PathBuf>,
    /// Build a colored graph of READS where each record is a color, named by its header's
    /// first word (records with one name share a color).
    #[arg(long)]
    color_per_record: bool,
    /// Write the color sets of a colored graph here as JSON lines (.jsonl or -).
    #[arg(long, value_name = "PATH")]
    color_sets: Option<PathBuf>,
    /// How --color-sets lists each set's colors: names ({"id": 4, "colors": ["g0", "g1",
    /// "g2", "g7"]}) or numbers, runs as [first, last] ({"id": 4, "colors": [[0, 2], 7]}: a
    /// pangenome's file many times smaller).
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "names",
        requires = "color_sets"
    )]
    color_sets_format: assembly::SetsFormat,
}

/// The inputs of a run and, for a colored graph, how they are colored.
fn inputs(args: &AssembleArgs) -> Result<(Vec<PathBuf>, Option<Colors>)> {
    let reads = &args.count.reads;
    let colored = !args.colors.is_empty() || args.colored_inputs.is_some();
    if colored && !reads.is_empty() {
        return Err(usage(
            "give the inputs either as READS or with --colors / --colored-inputs, not both",
        ));
    }
    if !args.colors.is_empty() {
        let names = args
            .colors
            .iter()
            .map(|p| {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            })
            .collect();
        return Ok((args.colors.clone(), Some(Colors::PerSource(names))));
    }
    if let Some(list) = &args.colored_inputs {
        // the error names the list file (parse errors their line)
        let (names, paths) = warpath_io::named_list::read_named_list(list)?
            .into_iter()
            .map(|e| (e.name, e.path))
            .unzip();
        return Ok((paths, Some(Colors::PerSource(names))));
    }
    args.count.require_reads()?;
    let colors = args.color_per_record.then_some(Colors::PerRecord);
    Ok((reads.clone(), colors))
}

/// `warpath assemble`.
pub(crate) fn run_assemble(args: AssembleArgs, json: bool) -> Result<()> {
    // before any thread starts: freed blocks shared by the threads count once under the bound
    assembly::limit_allocator_arenas(args.count.threads.unwrap_or(0));
    crate::cli_io::check_backend(args.count.backend, "assemble", args.count.k <= 31)?;
    // One format each; only the unitigs go to standard output by default.
    let (fasta, lines): (&[Format], &[Format]) = (&[Format::Fasta], &[Format::JsonLines]);
    let [unitigs, gfa, dot, contigs, eulertigs, color_sets] = outputs(
        json,
        [
            ("--unitigs", args.unitigs.as_deref(), fasta, true),
            ("--gfa", args.gfa.as_deref(), &[Format::Gfa], false),
            ("--dot", args.dot.as_deref(), &[Format::Dot], false),
            ("--contigs", args.contigs.as_deref(), fasta, false),
            ("--eulertigs", args.eulertigs.as_deref(), fasta, false),
            ("--color-sets", args.color_sets.as_deref(), lines, false),
        ],
    )?;
    let (paths, colors) = inputs(&args)?;
    if color_sets.is_some() && colors.is_none() {
        return Err(usage(
            "--color-sets needs a colored graph: --colors, --colored-inputs or \
             --color-per-record",
        ));
    }
    one_stdout(&[
        ("--unitigs", &unitigs),
        ("--gfa", &gfa),
        ("--dot", &dot),
        ("--contigs", &contigs),
        ("--eulertigs", &eulertigs),
        ("--color-sets", &color_sets),
    ])?;
    let outs = Outs {
        unitigs: unitigs.as_ref(),
        gfa: gfa.as_ref(),
        dot: dot.as_ref(),
        contigs: contigs.as_ref(),
        eulertigs: eulertigs.as_ref(),
        color_sets: color_sets.as_ref(),
    };
    let run = Run {
        args: &args,
        paths: &paths,
        colors: colors.as_ref(),
    };
    if args.count.k <= 31 {
        assemble_typed::<u64>(&run, &outs, json)
    } else {
        assemble_typed::<u128>(&run, &outs, json)
    }
}

/// What to assemble: the arguments, the input files and their colors.
struct Run<'a> {
    args: &'a AssembleArgs,
    paths: &'a [PathBuf],
    colors: Option<&'a Colors>,
}

struct Outs<'a> {
    unitigs: Option<&'a Output>,
    gfa: Option<&'a Output>,
    dot: Option<&'a Output>,
    contigs: Option<&'a Output>,
    eulertigs: Option<&'a Output>,
    color_sets: Option<&'a Output>,
}

impl Outs<'_> {
    /// The first output that is a file, for the default temporary folder.
    fn first_file(&self) -> Option<&Path> {
        [
            self.unitigs,
            self.gfa,
            self.dot,
            self.contigs,
            self.eulertigs,
            self.color_sets,
        ]
        .into_iter()
        .flatten()
        .find_map(Output::path)
    }
}

/// Builds the contigs when `--contigs` asks for them (the graph is built for them and dropped
/// before writing) and writes them to `o` as FASTA: the sink, to commit with the others, and
/// the contigs.
fn write_contigs(a: &Assembly, o: Option<&Output>) -> Result<(Option<Sink>, Option<Vec<Contig>>)> {
    let Some(o) = o else {
        return Ok((None, None));
    };
    let (g, links) = a.to_graph()?;
    let found = contigs(&g, &links, &ContigOptions::default());
    drop((g, links));
    let sink = write_out(Some(o), |w| {
        for (i, c) in found.iter().enumerate() {
            let io = |e| AssemblyError::Disk {
                path: PathBuf::new(),
                error: e,
            };
            w.write_all(
                format!(
                    ">contig_{i} LN:i:{} km:f:{:.1}\n",
                    c.sequence.len(),
                    c.mean_count
                )
                .as_bytes(),
            )
            .map_err(io)?;
            w.write_all(&c.sequence).map_err(io)?;
            w.write_all(b"\n").map_err(io)?;
        }
        Ok(())
    })?;
    Ok((sink, Some(found)))
}

/// What a finished run of `warpath assemble` reports: the assembly, its settings, where the
/// outputs went and the time of each step.
struct Done<'a> {
    a: &'a Assembly,
    k: usize,
    options: &'a CountOptions,
    outs: &'a Outs<'a>,
    /// Wall time of the whole run.
    seconds: f64,
    /// Writing the unitigs, GFA, DOT and color sets.
    writing: Duration,
    /// Building and writing the contigs.
    contig_time: Duration,
    /// Building and writing the eulertigs.
    euler_time: Duration,
    /// The contigs' lengths, longest first, when they were built.
    contig_lengths: Option<Vec<usize>>,
    /// The eulertigs' figures, when they were built.
    euler: Option<EulertigStats>,
}

/// Prints the run's JSON object (`--json`).
fn print_json(done: &Done<'_>) {
    let Done {
        a,
        k,
        options,
        outs,
        seconds,
        writing,
        contig_time,
        euler_time,
        ref contig_lengths,
        ref euler,
    } = *done;
    let st = &a.stats;
    let s = &st.counting;
    let mut stages = serde_json::Map::new();
    for (name, t) in &st.seconds {
        stages.insert((*name).into(), (*t).into());
    }
    stages.insert("output".into(), writing.as_secs_f64().into());
    stages.insert("contigs".into(), contig_time.as_secs_f64().into());
    stages.insert("eulertigs".into(), euler_time.as_secs_f64().into());
    super::print_count_report(
        "assemble",
        k,
        s,
        serde_json::json!({
            "min_count": options.min_count,
            "colors": a.colors().map(|c| serde_json::json!({
                "colors": c.names.len(),
                "color_sets": c.sets.len(),
                "output": outs.color_sets.map(Output::describe),
            })),
            "unitigs": st.unitigs,
            "circular_unitigs": st.circular,
            "links": st.links,
            "total_length": st.bases,
            "n50": st.n50,
            "longest": st.longest,
            "backend": s.backend,
            "compaction_backend": st.compaction_backend,
            "buckets": s.partitions,
            "pieces": st.pieces,
            "threads": if options.threads == 0 { rayon::current_num_threads() } else { options.threads },
            "max_memory_bytes": st.max_memory,
            "temp_dir": options.temp_dir.as_ref().map(|d| d.display().to_string()),
            "temp_disk_bytes": st.temp_bytes,
            "seconds": seconds,
            "stages": stages,
            "contigs": contig_lengths.as_ref().map(|l| serde_json::json!({
                "count": l.len(),
                "total_length": l.iter().sum::<usize>(),
                "n50": n50(l),
                "longest": l.first().copied().unwrap_or(0),
            })),
            "eulertigs": euler.as_ref().map(|e| serde_json::json!({
                "count": e.strings,
                "total_length": e.bases,
                "kmers": e.kmers,
                "components": e.components,
                "backend": e.backend,
                "output": outs.eulertigs.map(Output::describe),
            })),
            "peak_memory_bytes": peak_memory(),
            "verified": st.check.is_ok(),
            "unitigs_output": outs.unitigs.map(Output::describe),
            "gfa": outs.gfa.map(Output::describe),
            "dot": outs.dot.map(Output::describe),
        }),
    );
}

/// Prints the run's report lines (assembly, colors, eulertigs, contigs), on standard error
/// when an output goes to standard output.
fn print_text(done: &Done<'_>) {
    let Done { a, k, outs, .. } = *done;
    let st = &a.stats;
    let s = &st.counting;
    let stage = |name: &str| {
        st.seconds
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0.0, |(_, t)| *t)
    };
    let quiet_to = outs
        .unitigs
        .or(outs.gfa)
        .or(outs.dot)
        .or(outs.contigs)
        .or(outs.eulertigs)
        .or(outs.color_sets)
        .filter(|o| o.is_stdout());
    // Each line names the file it wrote; standard output goes unnamed.
    let to_file = |o: Option<&Output>| written(o.filter(|o| !o.is_stdout()));
    let lines = [
        Some(format!(
            "assemble: {} reads, {} {k}-mers seen, {} distinct, {} solid -> {} unitigs ({} circular), {} bases, N50 {} on {} in {} (counting {}, compaction {} on {}, glue {}, ordering {}), {} temporary, verified{}",
            s.reads.reads,
            s.kmers_seen,
            s.distinct,
            s.solid,
            st.unitigs,
            st.circular,
            st.bases,
            st.n50,
            s.backend,
            format_seconds(done.seconds),
            format_seconds(stage("counting")),
            format_seconds(stage("compaction")),
            st.compaction_backend,
            format_seconds(stage("glue")),
            format_seconds(stage("ordering")),
            human(st.temp_bytes),
            to_file(outs.unitigs)
        )),
        a.colors().map(|c| {
            format!(
                "colors: {} colors, {} color sets (painting {}){}",
                c.names.len(),
                c.sets.len(),
                format_seconds(stage("colors")),
                to_file(outs.color_sets)
            )
        }),
        done.euler.as_ref().map(|e| {
            format!(
                "eulertigs: {} strings ({} unitigs), {} bases ({} in unitigs), {} components, circuit on {} in {}{}",
                e.strings,
                st.unitigs,
                e.bases,
                st.bases,
                e.components,
                e.backend,
                format_seconds(done.euler_time.as_secs_f64()),
                to_file(outs.eulertigs)
            )
        }),
        done.contig_lengths.as_ref().map(|l| {
            format!(
                "contigs: {} of at least {} bases, {} bases, N50 {}, longest {}{}",
                l.len(),
                2 * k,
                l.iter().sum::<usize>(),
                n50(l),
                l.first().copied().unwrap_or(0),
                to_file(outs.contigs)
            )
        }),
    ];
    for line in lines.into_iter().flatten() {
        report(&line, quiet_to);
    }
}

/// Assembles with `W` words for the k-mers (`u64` up to k = 31, `u128` above), writes the
/// outputs and prints the report.
fn assemble_typed<W: CountWord>(run: &Run<'_>, outs: &Outs<'_>, json: bool) -> Result<()> {
    let args = run.args;
    let k = args.count.k;
    let mut options = args.count.options(outs.first_file())?;
    let sources: Vec<ReadSource<'_>> = run.paths.iter().map(|p| ReadSource::File(p)).collect();
    let mut bar = StageBar::new(json, input_bytes(run.paths));
    let t0 = Instant::now();
    let a = match run.colors {
        Some(colors) => {
            options.min_count = args.count.min_count_or(1);
            assembly::assemble_colored::<W>(&sources, colors, &options, true, &mut |p| {
                bar.update(p)
            })
        }
        None => assembly::assemble::<W>(&sources, &options, true, &mut |p| bar.update(p)),
    };
    bar.finish();
    let a: Assembly = a?;
    if let Err(e) = &a.stats.check {
        return Err(unverified(format!("the unitigs failed verification: {e}")));
    }
    let t = Instant::now();
    // the color sets (a pangenome's are gigabytes of names, formatted on rayon's threads) are
    // written beside the graph's files, which one thread reads from the store in order
    let format = args.color_sets_format;
    let (graph, sets) = std::thread::scope(|s| {
        let sets = s.spawn(|| write_out(outs.color_sets, |w| a.write_color_sets(w, format)));
        let graph = (|| {
            Ok::<_, anyhow::Error>(vec![
                write_out(outs.unitigs, |w| a.write_fasta(w))?,
                write_out(outs.gfa, |w| a.write_gfa(w))?,
                write_out(outs.dot, |w| a.write_dot(w))?,
            ])
        })();
        (graph, sets.join().expect("writing the color sets"))
    });
    let mut sinks = graph?;
    sinks.push(sets?);
    let writing = t.elapsed();
    let t = Instant::now();
    let (contig_sink, found) = write_contigs(&a, outs.contigs)?;
    sinks.push(contig_sink);
    let contig_time = t.elapsed();
    let t = Instant::now();
    let mut euler = None;
    sinks.push(write_out(outs.eulertigs, |w| {
        euler = Some(a.write_eulertigs(w, args.count.backend)?);
        Ok(())
    })?);
    let euler_time = t.elapsed();
    // every output is complete: make them visible
    for s in sinks.into_iter().flatten() {
        s.commit()?;
    }
    let contig_lengths: Option<Vec<usize>> = found
        .as_ref()
        .map(|f| f.iter().map(|c| c.sequence.len()).collect());
    let done = Done {
        a: &a,
        k,
        options: &options,
        outs,
        seconds: t0.elapsed().as_secs_f64(),
        writing,
        contig_time,
        euler_time,
        contig_lengths,
        euler,
    };
    if json {
        print_json(&done);
    } else {
        print_text(&done);
    }
    Ok(())
}

/// Bytes for the report line.
fn human(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64)
    }
}
