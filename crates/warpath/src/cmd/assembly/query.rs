//! `warpath query`: which colors (genomes, samples) of a colored compacted De Bruijn graph
//! hold the k-mers of each query sequence (GGCAT's `query --colors`, Bifrost's `query`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use assembly::{AssemblyError, ColoredGraph, QueryMatch, ReadSource};
use warpath_io::{Destination, Format, Output};

use super::{ctrl_c, peak_memory, write_out};
use crate::cli_io::{report, written};
use crate::fail::usage;
use crate::report::format_seconds;

/// What `warpath query` writes per query record.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum QueryFormat {
    /// One JSON object a line: `{"query": NAME, "kmers": N, "matches": {COLOR: COUNT, ...}}`.
    Json,
    /// Bifrost's table: `query_name` then one 0/1 column per color.
    Tsv,
}

/// Arguments of `warpath query`.
#[derive(clap::Args)]
#[command(after_help = "\
Joins the k-mers of the query records (FASTA/FASTQ, plain or gzip) with a colored compacted De
Bruijn graph (the unitigs FASTA with GGCAT's color runs C:<set id in hex>:<k-mers> in its
headers, and the color-sets JSON lines, as `warpath assemble --colors` writes them). The query
records are read in passes that fit --max-memory; a pass puts their distinct k-mers in a table,
streams the unitigs once to find each one's color set, and reads only the color sets so reached
(the graph is never loaded whole). A query's k-mers are its windows of k bases that are all A,
C, G or T (a window across an N is not counted); a color holds a k-mer when the k-mer's color
set names it.

Outputs (one line per query record, in input order; standard output by default):
  --format json  {\"query\": NAME, \"kmers\": N, \"matches\": {COLOR: COUNT, ...}}: for each color
                 holding at least one of the query's k-mers, how many it holds (GGCAT's
                 `query --colors` counts); NAME is the header's first word
  --format tsv   Bifrost's table: a header `query_name<TAB>COLOR...`, then per query its name and
                 a 0/1 column per color, 1 when the color holds at least --ratio of its k-mers
                 (all 0 for a query without k-mers)
A file output is written under a temporary name and renamed when complete.

Examples:
  warpath query --unitigs pangenome.fa --color-sets pangenome.jsonl --k 31 reads.fq.gz -o hits.jsonl
  warpath query --unitigs g.fa --color-sets g.jsonl --k 31 genes.fa --format tsv --ratio 0.9 -o genes.tsv")]
pub(crate) struct QueryArgs {
    /// Query sequences: FASTA or FASTQ files, plain or gzip, read one after the other.
    #[arg(required = true, value_name = "QUERIES")]
    queries: Vec<PathBuf>,
    /// The graph's unitigs: FASTA (plain or gzip) with color runs C:SET:KMERS (the set id in
    /// hex, the run's k-mers).
    #[arg(long, value_name = "FASTA")]
    unitigs: PathBuf,
    /// The graph's color sets: JSON lines {"id": N, "colors": [NAME, ...]} (plain or gzip),
    /// after an optional header line {"colors": [every color]}.
    #[arg(long, value_name = "JSONL")]
    color_sets: PathBuf,
    /// The graph's k-mer length: odd, from 3 to 63.
    #[arg(long)]
    k: usize,
    /// Where the results go: a file (any name) or - (standard output, the default without
    /// --json).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// The results' format.
    #[arg(long, value_enum, default_value = "json")]
    format: QueryFormat,
    /// With --format tsv: the share of a query's k-mers a color must hold to be present
    /// (0 < ratio <= 1). Default 0.8.
    #[arg(long)]
    ratio: Option<f64>,
    /// A bound on the memory of a pass (4G, 500M): the table of the queries' k-mers (about
    /// 30 bytes each for k <= 31, 50 above), their records and the color sets they reach.
    /// Queries beyond it are read in further passes over the graph. Default: half of the
    /// memory available when the run starts.
    #[arg(long, value_parser = crate::cli_io::count64)]
    max_memory: Option<u64>,
    /// Worker threads. Default: RAYON_NUM_THREADS, else every core.
    #[arg(long)]
    threads: Option<usize>,
}

/// `warpath query`.
pub(crate) fn run_query(args: QueryArgs, json: bool) -> Result<()> {
    // before any thread starts (see `run_assemble`)
    assembly::limit_allocator_arenas(args.threads.unwrap_or(0));
    if args.ratio.is_some() && args.format != QueryFormat::Tsv {
        return Err(usage("--ratio applies to --format tsv only"));
    }
    let ratio = args.ratio.unwrap_or(0.8);
    if !(ratio > 0.0 && ratio <= 1.0) {
        return Err(usage(format!(
            "--ratio {ratio}: give a share above 0, at most 1"
        )));
    }
    if args.threads == Some(0) {
        return Err(usage("--threads must be at least 1"));
    }
    let out = match args.output.as_deref() {
        Some(p) if p.as_os_str() == "-" && json => {
            return Err(usage(
                "--output - and --json both write to standard output: give --output a file",
            ));
        }
        Some(p) if p.as_os_str() == "-" => Some(Output::stdout(Format::Text)),
        Some(p) => Some(Output {
            destination: Destination::File(p.to_path_buf()),
            format: Format::Text,
        }),
        None if json => None,
        None => Some(Output::stdout(Format::Text)),
    };
    if let Some(o) = &out {
        o.check()?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the worker threads: {e}"))?;
    pool.install(|| query(&args, ratio, out.as_ref(), json))
}

/// Opens the graph, runs the queries into `out`, reports.
fn query(args: &QueryArgs, ratio: f64, out: Option<&Output>, json: bool) -> Result<()> {
    let t0 = Instant::now();
    let mut graph = ColoredGraph::open(
        ReadSource::File(&args.unitigs),
        ReadSource::File(&args.color_sets),
        args.k,
    )?;
    if let Some(m) = args.max_memory {
        graph = graph.with_max_memory(m);
    }
    let sources: Vec<ReadSource<'_>> = args.queries.iter().map(|p| ReadSource::File(p)).collect();
    let cancel = ctrl_c();
    let mut stats = None;
    let sink = write_out(out, |w| {
        let mut line = Writer::new(graph.colors(), args.format, ratio);
        line.header(w)?;
        stats = Some(graph.query(&sources, &mut |m| {
            if cancel.is_cancelled() {
                return Err(AssemblyError::Interrupted);
            }
            line.record(w, m)
        })?);
        Ok(())
    })?;
    let stats = match stats {
        Some(s) => s,
        // no output (--json alone): the queries are still run, for the summary
        None => graph.query(&sources, &mut |_| {
            if cancel.is_cancelled() {
                return Err(AssemblyError::Interrupted);
            }
            Ok(())
        })?,
    };
    if let Some(s) = sink {
        s.commit()?;
    }
    let seconds = t0.elapsed().as_secs_f64();
    if json {
        crate::cli_io::print_json!({
            "command": "query",
            "k": args.k,
            "records": stats.records,
            "kmers": stats.kmers,
            "found": stats.found,
            "colors": graph.colors().len(),
            "color_sets": stats.color_sets,
            "graph_kmers": stats.graph_kmers,
            "passes": stats.passes,
            "max_memory_bytes": graph.max_memory(),
            "format": match args.format { QueryFormat::Json => "json", QueryFormat::Tsv => "tsv" },
            "ratio": (args.format == QueryFormat::Tsv).then_some(ratio),
            "threads": rayon::current_num_threads(),
            "seconds": seconds,
            "records_per_second": stats.records as f64 / seconds.max(1e-12),
            "peak_memory_bytes": peak_memory(),
            "output": out.map(Output::describe),
        });
    } else {
        report(
            &format!(
                "query: {} records, {} {}-mers, {} found ({:.1}%) in a graph of {} k-mers, {} color sets, {} colors; {} pass{} over the graph, {} ({:.0} records/s){}",
                stats.records,
                stats.kmers,
                args.k,
                stats.found,
                100.0 * stats.found as f64 / (stats.kmers.max(1)) as f64,
                stats.graph_kmers,
                stats.color_sets,
                graph.colors().len(),
                stats.passes,
                if stats.passes == 1 { "" } else { "es" },
                format_seconds(seconds),
                stats.records as f64 / seconds.max(1e-12),
                written(out)
            ),
            out,
        );
    }
    Ok(())
}

/// Writes the results' lines: the color names escaped once, a line built per record.
struct Writer {
    format: QueryFormat,
    ratio: f64,
    /// Each color's name as a JSON string (json) or as it is (tsv).
    colors: Vec<String>,
    /// A TSV row's 0/1 per color.
    present: Vec<bool>,
    line: Vec<u8>,
}

impl Writer {
    fn new(colors: &[String], format: QueryFormat, ratio: f64) -> Writer {
        let colors = colors
            .iter()
            .map(|c| match format {
                QueryFormat::Json => serde_json::Value::from(c.as_str()).to_string(),
                QueryFormat::Tsv => c.clone(),
            })
            .collect::<Vec<_>>();
        Writer {
            format,
            ratio,
            present: vec![false; colors.len()],
            colors,
            line: Vec::with_capacity(1 << 12),
        }
    }

    /// The TSV header line (nothing for JSON lines).
    fn header(&mut self, w: &mut dyn Write) -> Result<(), AssemblyError> {
        if self.format == QueryFormat::Tsv {
            self.line.clear();
            self.line.extend_from_slice(b"query_name");
            for c in &self.colors {
                self.line.push(b'\t');
                self.line.extend_from_slice(c.as_bytes());
            }
            self.line.push(b'\n');
            w.write_all(&self.line).map_err(disk)?;
        }
        Ok(())
    }

    /// One record's line.
    fn record(&mut self, w: &mut dyn Write, m: &QueryMatch<'_>) -> Result<(), AssemblyError> {
        let l = &mut self.line;
        l.clear();
        match self.format {
            QueryFormat::Json => {
                let mut number = itoa::Buffer::new();
                l.extend_from_slice(b"{\"query\": ");
                l.extend_from_slice(serde_json::Value::from(m.name).to_string().as_bytes());
                l.extend_from_slice(b", \"kmers\": ");
                l.extend_from_slice(number.format(m.kmers).as_bytes());
                l.extend_from_slice(b", \"matches\": {");
                for (i, &(c, n)) in m.matches.iter().enumerate() {
                    if i > 0 {
                        l.extend_from_slice(b", ");
                    }
                    l.extend_from_slice(self.colors[c as usize].as_bytes());
                    l.extend_from_slice(b": ");
                    l.extend_from_slice(number.format(n).as_bytes());
                }
                l.extend_from_slice(b"}}\n");
            }
            QueryFormat::Tsv => {
                let need = self.ratio * m.kmers as f64;
                for &(c, n) in m.matches {
                    self.present[c as usize] = m.kmers > 0 && f64::from(n) >= need;
                }
                l.extend_from_slice(m.name.as_bytes());
                for p in self.present.iter_mut() {
                    l.extend_from_slice(if *p { b"\t1" } else { b"\t0" });
                    *p = false;
                }
                l.push(b'\n');
            }
        }
        w.write_all(l).map_err(disk)
    }
}

/// A failed write (the sink names the output).
fn disk(error: std::io::Error) -> AssemblyError {
    AssemblyError::Disk {
        path: PathBuf::new(),
        error,
    }
}
