//! Helpers the integration tests share: k-mers as text, read the obvious way.
#![allow(dead_code, unreachable_pub)]

/// The reverse complement of ACGT text.
pub fn rc(s: &str) -> String {
    String::from_utf8(assembly::reverse_complement_letters(s.as_bytes())).expect("ACGT letters")
}

/// The canonical form of ACGT text: the smaller of it and its reverse complement.
pub fn canon(s: &str) -> String {
    let r = rc(s);
    if r.as_str() < s { r } else { s.to_string() }
}

/// Options for k-mers of length `k` counted on the CPU, kept from `min_count` occurrences.
pub fn cpu_options(k: usize, min_count: u32) -> assembly::CountOptions {
    let mut o = assembly::CountOptions::new(k);
    o.min_count = min_count;
    o.exec = assembly::Exec::Cpu;
    o
}

/// An empty folder `<name>-<process id>` under the system's temporary folder.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
