#![doc = include_str!("../README.md")]

mod bases;
mod bucketing;
mod budget;
mod colors;
mod contigs;
mod count;
mod count_word;
mod cuda;
mod error;
mod eulertigs;
mod glue;
mod graph;
mod kmer;
mod kmer_counts;
mod oriented;
mod output;
mod pieces;
mod pipeline;
mod placement;
mod plan;
mod query;
mod reads;
mod records;
mod set_code;
mod simulate;
mod spill;
mod store;
mod temp;
mod unitigs;
mod work;

/// The typed launchers of `kernels-cuda/assembly.cu` (used by `cuda.rs`).
mod kernels {
    gpu_runtime::kernels!("assembly");
}

pub use budget::{default_max_memory, limit_allocator_arenas};
pub use colors::{ColorSets, ColorTable, Colors, SetsFormat};
pub use contigs::{Contig, ContigOptions, contigs};
pub use count::CountStats;
pub use count_word::CountWord;
pub use error::AssemblyError;
pub use eulertigs::{EULERTIGS_GPU_THRESHOLD, EulertigStats};
pub use gpu_runtime::{Backend, Exec};
pub use graph::{ColorRun, Link, StoredUnitig, UnitigFn};
pub use kmer::{
    Word, base_code, base_letter, canonical, check_k, pack, reverse_complement_letters, unpack,
};
pub use kmer_counts::{KmerBuckets, KmerCounts, SortedFn, count_kmer_buckets, count_kmers};
pub use output::{
    n50, unique_links, write_counts_text, write_dot, write_gfa, write_histogram,
    write_unitigs_fasta,
};
pub use pipeline::{Assembly, AssemblyStats, assemble, assemble_colored};
pub use plan::CountOptions;
pub use query::{ColoredGraph, QueryMatch, QueryStats};
pub use reads::{Batch, ReadSource, ReadStats, for_each_batch};
pub use simulate::{
    GENE_MAX, GENE_MIN, GenomeFn, INDEL_MAX, Pangenome, PangenomeEvents, PangenomeOptions,
    random_genome, reads_to_fasta, simulate_pangenome, simulate_reads, synthetic_genome,
    write_pangenome, write_simulated_reads,
};
pub use temp::{Cancel, PartialFile, remove_temporary_files};
pub use unitigs::{
    COMPACT_GPU_THRESHOLD, Compacted, Unitig, compact, compact_with, compaction_backend,
    verify_unitigs,
};
pub use work::Progress;
