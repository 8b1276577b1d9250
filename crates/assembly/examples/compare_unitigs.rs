//! Compares two unitig FASTA files (warpath's, BCALM2's, GGCAT's) as partitions of the
//! canonical k-mer set: the same unitigs whatever their strand, start or order. Exits 1 when
//! they differ, naming how.
//!
//! `cargo run --release -p assembly --example compare_unitigs -- K A.fa B.fa`

use std::collections::HashMap;

use assembly::{Word, canonical, pack};

/// The unitig of each canonical k-mer, and the number of k-mers of each unitig.
type Partition = (HashMap<u128, u32>, Vec<u32>);

/// canonical k-mer -> (unitig number, k-mers in that unitig)
fn load(path: &str, k: usize) -> Result<Partition, Box<dyn std::error::Error>> {
    let mut reader = needletail::parse_fastx_file(path)?;
    let mut of = HashMap::new();
    let mut sizes = Vec::new();
    while let Some(r) = reader.next() {
        let r = r?;
        let seq = r.seq();
        let id = sizes.len() as u32;
        let mut n = 0;
        for i in 0..=seq.len().saturating_sub(k) {
            if seq.len() < k {
                break;
            }
            let x: u128 = pack(&seq[i..], k).ok_or("not a base")?;
            if of.insert(canonical(x, k), id).is_some() {
                return Err(format!("{path}: a k-mer appears twice (unitig {id})").into());
            }
            n += 1;
        }
        sizes.push(n);
    }
    Ok((of, sizes))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let k: usize = a
        .first()
        .ok_or("usage: compare_unitigs K A.fa B.fa")?
        .parse()?;
    assert!(k <= <u128 as Word>::MAX_K);
    let (ka, sa) = load(&a[1], k)?;
    let (kb, sb) = load(&a[2], k)?;
    println!("{}: {} unitigs, {} k-mers", a[1], sa.len(), ka.len());
    println!("{}: {} unitigs, {} k-mers", a[2], sb.len(), kb.len());
    let mut differ = 0u64;
    // same partition: same k-mer sets, and unitig ids correspond one to one
    let mut map: HashMap<u32, u32> = HashMap::new();
    for (x, &ua) in &ka {
        match kb.get(x) {
            None => differ += 1,
            Some(&ub) => {
                if *map.entry(ua).or_insert(ub) != ub {
                    differ += 1;
                }
            }
        }
    }
    let only_b = kb.keys().filter(|x| !ka.contains_key(x)).count();
    let sizes_match = map
        .iter()
        .all(|(&ua, &ub)| sa[ua as usize] == sb[ub as usize]);
    if differ == 0 && only_b == 0 && sizes_match && sa.len() == sb.len() {
        println!(
            "identical: the same {} unitigs over the same {} k-mers",
            sa.len(),
            ka.len()
        );
        Ok(())
    } else {
        println!(
            "DIFFERENT: {differ} k-mers of the first placed differently or missing, {only_b} only in the second, unitig sizes {}",
            if sizes_match { "match" } else { "differ" }
        );
        std::process::exit(1)
    }
}
