//! `warpath simulate pangenome`: a seeded pangenome written as one FASTA file per genome, with
//! the list `assemble --colored-inputs` (and GGCAT's `-d`) reads and the tree in Newick.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use assembly::{AssemblyError, PangenomeOptions, PartialFile, write_pangenome};

use warpath_io::named_list::{Named, format_named_list};

use crate::cli_io::count;
use crate::report::{format_seconds, progress};

/// Arguments of `warpath simulate`.
#[derive(clap::Args)]
pub(crate) struct SimulateArgs {
    #[command(subcommand)]
    what: Simulate,
}

/// What `warpath simulate` makes.
#[derive(clap::Subcommand)]
enum Simulate {
    /// A base genome and descendants along a random tree (SNPs, indels, gene loss and gain),
    /// one FASTA file each: the colored-graph benchmarks' input.
    Pangenome(PangenomeArgs),
}

/// Arguments of `warpath simulate pangenome`.
#[derive(clap::Args)]
#[command(after_help = "\
The base genome is random (seeded); the tree is a Yule tree whose leaves are the genomes, so a
genome is about 2 ln N edges from the base. Every edge applies, independently, at the rates
given: substitutions, small insertions and deletions (1-10 bp), gene loss (a deletion of
500-5,000 bp) and gene gain (an insertion of 500-5,000 bp, new random sequence or, for
--transfer-fraction of them, a segment of the genome made just before: horizontal transfer).
With the defaults a genome differs from the base by about 1% of its bases at 100 genomes, and
its length stays near the base's. The same seed gives the same files on any machine.

Writes, in --out (created if missing):
  g0000.fa g0001.fa ...   one record each, named after its file (80 bases a line)
  list.tsv                NAME<TAB>PATH lines (absolute paths): `warpath assemble
                          --colored-inputs` and `ggcat build -c -d` read it
  tree.nwk                the tree in Newick, the base at the root

Memory: the genomes on the path from the base to the genome being made (about 2 ln N of
them), so 1,000 genomes of 5 Mbp take about 150 MB.

Examples:
  warpath simulate pangenome --genomes 100 --length 5M --out pangenome
  warpath simulate pangenome --genomes 8 --length 200k --seed 3 --snp-rate 0.005 --out small")]
pub(crate) struct PangenomeArgs {
    /// Genomes to write.
    #[arg(long, value_parser = count)]
    genomes: usize,
    /// Length of the base genome in bases (5M, 200k, 1e6).
    #[arg(long, value_parser = count)]
    length: usize,
    /// Seed of the base genome, the tree and every change.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Substitutions per base and edge of the tree.
    #[arg(long, default_value_t = PangenomeOptions::DEFAULT_SNP_RATE)]
    snp_rate: f64,
    /// Small insertions and deletions (1-10 bp) per base and edge.
    #[arg(long, default_value_t = PangenomeOptions::DEFAULT_INDEL_RATE)]
    indel_rate: f64,
    /// Genes lost (500-5,000 bp deleted) per edge and million bases.
    #[arg(long, default_value_t = PangenomeOptions::DEFAULT_LOSSES_PER_MBP)]
    losses_per_mbp: f64,
    /// Genes gained (500-5,000 bp inserted) per edge and million bases.
    #[arg(long, default_value_t = PangenomeOptions::DEFAULT_GAINS_PER_MBP)]
    gains_per_mbp: f64,
    /// Fraction of the gained genes copied from another lineage (horizontal transfer).
    #[arg(long, default_value_t = PangenomeOptions::DEFAULT_TRANSFER_FRACTION)]
    transfer_fraction: f64,
    /// Folder for the genomes, list.tsv and tree.nwk.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// `warpath simulate ...`.
pub(crate) fn run_simulate(args: SimulateArgs, json: bool) -> Result<()> {
    match args.what {
        Simulate::Pangenome(a) => run_pangenome(&a, json),
    }
}

impl PangenomeArgs {
    /// The generator's options these arguments ask for.
    fn options(&self) -> PangenomeOptions {
        PangenomeOptions {
            genomes: self.genomes,
            length: self.length,
            seed: self.seed,
            snp_rate: self.snp_rate,
            indel_rate: self.indel_rate,
            losses_per_mbp: self.losses_per_mbp,
            gains_per_mbp: self.gains_per_mbp,
            transfer_fraction: self.transfer_fraction,
        }
    }
}

/// `warpath simulate pangenome`.
fn run_pangenome(a: &PangenomeArgs, json: bool) -> Result<()> {
    let o = a.options();
    o.check().map_err(|e| crate::fail::usage(e.to_string()))?;
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("--out {}: cannot create the folder", a.out.display()))?;
    let dir =
        std::fs::canonicalize(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
    let bar = progress(a.genomes as u64, "genomes", json);
    let t = Instant::now();
    let mut list = Vec::new();
    let made = write_pangenome(&o, &mut |name, genome| {
        let path = dir.join(format!("{name}.fa"));
        write_file(&path, |w| write_fasta(w, name, genome))?;
        list.push(Named {
            name: name.to_string(),
            path,
        });
        bar.inc(1);
        Ok(())
    });
    bar.finish_and_clear();
    let p = made?;
    let list = format_named_list(&list)?;
    write_file(&dir.join("list.tsv"), |w| w.write_all(list.as_bytes()))?;
    write_file(&dir.join("tree.nwk"), |w| writeln!(w, "{}", p.newick))?;
    let seconds = t.elapsed().as_secs_f64();
    let e = &p.events;
    if json {
        crate::cli_io::print_json!({
            "genomes": p.names.len(),
            "bases": p.bases,
            "out": dir,
            "list": dir.join("list.tsv"),
            "seconds": seconds,
            "events": {
                "snps": e.snps, "insertions": e.insertions, "deletions": e.deletions,
                "gene_losses": e.losses, "gene_gains": e.gains, "transfers": e.transfers,
            },
        });
    } else {
        println!(
            "{} genomes, {} bases in {}, written to {} (list.tsv, tree.nwk)",
            p.names.len(),
            p.bases,
            format_seconds(seconds),
            dir.display()
        );
        println!(
            "changes along the tree: {} SNPs, {} insertions and {} deletions of 1-10 bp, \
             {} genes lost, {} new genes gained, {} transferred",
            e.snps, e.insertions, e.deletions, e.losses, e.gains, e.transfers
        );
    }
    Ok(())
}

/// Writes one file through a partial file renamed when complete (no half-written genome is
/// left under its final name).
fn write_file(
    path: &Path,
    f: impl FnOnce(&mut PartialFile) -> std::io::Result<()>,
) -> Result<(), AssemblyError> {
    let mut w = PartialFile::create(path)?;
    f(&mut w).map_err(|error| AssemblyError::Disk {
        path: path.to_path_buf(),
        error,
    })?;
    w.commit()
}

/// One FASTA record, 80 bases a line.
fn write_fasta(w: &mut dyn Write, name: &str, seq: &[u8]) -> std::io::Result<()> {
    writeln!(w, ">{name}")?;
    for line in seq.chunks(80) {
        w.write_all(line)?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fasta_lines_are_80_bases() {
        let mut out = Vec::new();
        write_fasta(&mut out, "g0", &[b'A'; 170]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], ">g0");
        assert_eq!(
            lines[1..].iter().map(|l| l.len()).collect::<Vec<_>>(),
            [80, 80, 10]
        );
    }

    #[test]
    fn writes_genomes_list_and_tree() {
        let dir = std::env::temp_dir().join(format!("warpath-pangenome-{}", std::process::id()));
        let args = PangenomeArgs {
            genomes: 3,
            length: 5_000,
            seed: 4,
            snp_rate: 0.01,
            indel_rate: 0.001,
            losses_per_mbp: 100.0,
            gains_per_mbp: 100.0,
            transfer_fraction: 0.5,
            out: dir.join("sub"),
        };
        run_pangenome(&args, true).unwrap();
        let out = std::fs::canonicalize(dir.join("sub")).unwrap();
        let list = std::fs::read_to_string(out.join("list.tsv")).unwrap();
        let rows: Vec<(&str, &str)> = list.lines().map(|l| l.split_once('\t').unwrap()).collect();
        assert_eq!(rows.len(), 3);
        let expected = assembly::simulate_pangenome(&args.options()).unwrap();
        for ((name, path), (want_name, genome)) in rows.iter().zip(&expected) {
            assert_eq!(name, want_name);
            assert_eq!(*path, out.join(format!("{name}.fa")).to_str().unwrap());
            let text = std::fs::read_to_string(path).unwrap();
            let mut lines = text.lines();
            assert_eq!(lines.next(), Some(format!(">{name}").as_str()));
            assert_eq!(lines.collect::<String>().as_bytes(), genome.as_slice());
        }
        let tree = std::fs::read_to_string(out.join("tree.nwk")).unwrap();
        assert!(tree.ends_with(";\n") && tree.contains("g0002"));
        // no partial file left behind
        let names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_rates_are_usage_errors() {
        let dir =
            std::env::temp_dir().join(format!("warpath-pangenome-bad-{}", std::process::id()));
        let args = PangenomeArgs {
            genomes: 2,
            length: 1_000,
            seed: 1,
            snp_rate: 2.0,
            indel_rate: 0.0,
            losses_per_mbp: 0.0,
            gains_per_mbp: 0.0,
            transfer_fraction: 0.0,
            out: dir.clone(),
        };
        let e = run_pangenome(&args, true).unwrap_err();
        assert_eq!(crate::fail::kind_of(&e), "usage");
        assert!(e.to_string().contains("SNP rate"), "{e}");
        assert!(!dir.exists(), "the folder is made only for valid options");
    }
}
