//! `cargo xtask sim`: builds the simulated CUDA driver, `target/cuda-sim/libcuda.so`.
//!
//! The library is `kernels-cuda/sim/driver.cpp` (the driver API) plus one generated unit per
//! `kernels-cuda/<module>.cu` that compiles the kernels as C++ under `sim/cuda_sim.hpp` and
//! registers every `.entry` of the committed `ptx/<module>.ptx` (the C++ compiler deduces each
//! kernel's parameters from its signature, see `sim/driver_registry.hpp`), plus the sm_90
//! register counts from ptxas. Beside it, `libcublas.so.13`: the simulated cuBLAS
//! (`sim/cublas.cpp`) for the host code of the cuBLAS paths. It needs g++ (Debian's) and `cuda.h`, which comes with the nvcc
//! wheels that `cargo xtask kernels` installs from PyPI. A re-run with unchanged inputs does
//! nothing.
//!
//! Use: `LD_LIBRARY_PATH=target/cuda-sim WARPATH_SIM=1 cargo test ...`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::kernels::{Fnv, install_nvcc, ptxas_path};
use crate::{resources, target_dir};

/// Flags for every unit. `-ffp-contract=off`: no fused multiply-adds the kernels did not ask
/// for, so float results match the CPU references bit for bit.
const CXXFLAGS: &[&str] = &["-std=c++20", "-O2", "-fPIC", "-ffp-contract=off", "-g0"];

/// Exported symbols: the driver API and warpath's probes; everything else (kernels, helpers)
/// stays inside the library.
const VERSION_SCRIPT: &str = "{ global: cu*; warpath_sim_*; local: *; };\n";

pub(crate) fn run(root: &Path) -> Result<()> {
    let dir = build(root)?;
    println!(
        "sim: {} is ready; use it with\n  LD_LIBRARY_PATH={} WARPATH_SIM=1 cargo test ...",
        dir.join("libcuda.so").display(),
        dir.display()
    );
    Ok(())
}

/// Builds the library if any input changed and returns its directory.
pub(crate) fn build(root: &Path) -> Result<PathBuf> {
    let kernels = root.join("kernels-cuda");
    let out = target_dir(root).join("cuda-sim");
    let gen_dir = out.join("gen");
    fs::create_dir_all(&gen_dir)?;

    let gxx = Command::new("g++")
        .arg("--version")
        .output()
        .context("g++ is needed to build the simulated driver (apt-get install g++)")?;
    let gxx_version = String::from_utf8_lossy(&gxx.stdout).into_owned();

    let inputs = input_files(&kernels)?;
    let mut stamp = format!("{gxx_version}\n{CXXFLAGS:?}\n{VERSION_SCRIPT}\n");
    for p in &inputs {
        let mut h = Fnv::new();
        h.write(&fs::read(p)?);
        let _ = writeln!(stamp, "{} {:016x}", p.display(), h.finish());
    }
    let lib = out.join("libcuda.so.1");
    let stamp_path = out.join("inputs.txt");
    if lib.exists()
        && out.join("libcublas.so.13").exists()
        && fs::read_to_string(&stamp_path).is_ok_and(|s| s == stamp)
    {
        println!("sim: {} up to date", lib.display());
        return Ok(out);
    }

    let nvcc = install_nvcc(root)?;
    let include = nvcc
        .parent()
        .and_then(Path::parent)
        .context("nvcc has no install directory")?
        .join("include");
    if !include.join("cuda.h").exists() {
        bail!("cuda.h not found in {}", include.display());
    }
    let ptxas = ptxas_path(&nvcc);

    let units = write_units(&kernels, &gen_dir, &inputs, &ptxas)?;
    let tmp = compile_and_link(&kernels, &include, &units, &out)?;
    fs::rename(&tmp, &lib)?;
    link_as(&out, "libcuda.so.1", "libcuda.so")?;
    build_cublas(&kernels, &out)?;
    fs::write(&stamp_path, stamp)?;
    println!("sim: built {}", lib.display());
    Ok(out)
}

/// The inputs of the library, sorted: every kernel source and header (`block/` too), the
/// committed PTX and the simulator's sources (not its `test_` harnesses).
fn input_files(kernels: &Path) -> Result<Vec<PathBuf>> {
    let mut inputs: Vec<PathBuf> = Vec::new();
    for dir in [
        kernels.to_path_buf(),
        kernels.join("block"),
        kernels.join("ptx"),
        kernels.join("sim"),
    ] {
        for e in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let p = e?.path();
            if p.extension().is_some_and(|x| {
                ["cu", "cuh", "ptx", "hpp", "cpp"].contains(&x.to_str().unwrap_or(""))
            }) && !p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("test_"))
            {
                inputs.push(p);
            }
        }
    }
    inputs.sort();
    Ok(inputs)
}

/// Writes one generated unit per PTX module among `inputs` into `gen_dir` (the module's
/// kernels compiled as C++, every `.entry` registered with its sm_90 register counts from
/// `ptxas`), and returns every unit to compile: the driver's sources, then those.
fn write_units(
    kernels: &Path,
    gen_dir: &Path,
    inputs: &[PathBuf],
    ptxas: &Path,
) -> Result<Vec<PathBuf>> {
    let mut units: Vec<PathBuf> = vec![
        kernels.join("sim/driver.cpp"),
        kernels.join("sim/driver_selftest.cpp"),
    ];
    let mut ptx_files: Vec<PathBuf> = inputs
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .cloned()
        .collect();
    ptx_files.sort();
    for ptx in &ptx_files {
        let module = ptx.file_stem().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(ptx)?;
        let header = text.lines().next().unwrap_or_default();
        let entries = entry_names(&text);
        let regs = resources::ptxas(ptxas, ptx, "sm_90")?;
        let mut unit = format!(
            "// generated by `cargo xtask sim` from kernels-cuda/ptx/{module}.ptx; do not edit\n\
             #include \"sim/cuda_sim.hpp\"\n#include \"sim/driver_registry.hpp\"\n#include \"{module}.cu\"\n\
             WARPATH_SIM_MODULE(\"{module}\", \"{}\");\n",
            c_escape(header)
        );
        for e in &entries {
            let _ = writeln!(unit, "WARPATH_SIM_KERNEL(\"{module}\", {e});");
            if let Some(r) = regs.iter().find(|r| &r.name == e) {
                let _ = writeln!(
                    unit,
                    "WARPATH_SIM_RESOURCES({e}, {}, {});",
                    r.registers, r.shared
                );
            }
        }
        let path = gen_dir.join(format!("{module}.cpp"));
        fs::write(&path, unit)?;
        units.push(path);
    }
    Ok(units)
}

/// Compiles the units into objects in `out`, as many at once as there are cores, and links
/// them into a temporary library; returns its path (the caller renames it into place).
fn compile_and_link(
    kernels: &Path,
    include: &Path,
    units: &[PathBuf],
    out: &Path,
) -> Result<PathBuf> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let objects: Vec<PathBuf> = units
        .iter()
        .map(|u| out.join(format!("{}.o", u.file_stem().unwrap().to_string_lossy())))
        .collect();
    println!(
        "sim: compiling {} units with g++ ({jobs} at a time) ...",
        units.len()
    );
    let work: Vec<(PathBuf, PathBuf)> =
        units.iter().cloned().zip(objects.iter().cloned()).collect();
    for chunk in work.chunks(jobs) {
        let children: Vec<_> = chunk
            .iter()
            .map(|(src, obj)| {
                let mut cmd = Command::new("g++");
                cmd.args(CXXFLAGS)
                    .arg("-I")
                    .arg(kernels)
                    .arg("-I")
                    .arg(include)
                    .args(if src.ends_with("sim/driver.cpp") {
                        &["-Wall", "-Wextra", "-Werror"][..]
                    } else {
                        &["-w"][..]
                    })
                    .arg("-c")
                    .arg(src)
                    .arg("-o")
                    .arg(obj);
                cmd.spawn()
                    .with_context(|| format!("could not start g++ for {}", src.display()))
                    .map(|c| (src.clone(), c))
            })
            .collect::<Result<_>>()?;
        for (src, child) in children {
            let out = child.wait_with_output()?;
            if !out.status.success() {
                bail!("g++ failed on {}", src.display());
            }
        }
    }
    let script = out.join("exports.map");
    fs::write(&script, VERSION_SCRIPT)?;
    let tmp = out.join("libcuda.so.1.tmp");
    let status = Command::new("g++")
        .arg("-shared")
        .arg("-o")
        .arg(&tmp)
        .args(&objects)
        .arg("-Wl,-soname,libcuda.so.1")
        .arg(format!("-Wl,--version-script={}", script.display()))
        .args(["-lpthread", "-ldl"])
        .status()
        .context("could not start g++ to link")?;
    if !status.success() {
        bail!("linking the simulated driver failed");
    }
    Ok(tmp)
}

/// Points `out/name` at `target` (replacing what was there).
fn link_as(out: &Path, target: &str, name: &str) -> Result<()> {
    let link = out.join(name);
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(target, &link)?;
    Ok(())
}

/// Builds the simulated cuBLAS (`kernels-cuda/sim/cublas.cpp`, standalone: it only reads and
/// writes the simulated driver's memory, which is host memory) into `out/libcublas.so.13`, with
/// `libcublas.so` beside it, the first name cudarc looks for.
fn build_cublas(kernels: &Path, out: &Path) -> Result<()> {
    let tmp = out.join("libcublas.so.13.tmp");
    let status = Command::new("g++")
        .args(CXXFLAGS)
        .args(["-Wall", "-Wextra", "-Werror", "-shared"])
        .arg(kernels.join("sim/cublas.cpp"))
        .arg("-o")
        .arg(&tmp)
        .arg("-Wl,-soname,libcublas.so.13")
        .status()
        .context("could not start g++ for the simulated cuBLAS")?;
    if !status.success() {
        bail!("building the simulated cuBLAS failed");
    }
    fs::rename(&tmp, out.join("libcublas.so.13"))?;
    link_as(out, "libcublas.so.13", "libcublas.so")
}

/// The `.entry` names of a PTX module, in order.
fn entry_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            l.trim_start()
                .strip_prefix(".visible .entry ")
                .or_else(|| l.trim_start().strip_prefix(".entry "))
        })
        .map(|rest| rest.split('(').next().unwrap_or_default().trim().to_owned())
        .collect()
}

fn c_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_entries_of_ptx() {
        let ptx = "// header\n.version 9.0\n.visible .entry runtime_iota_u32(\n\t.param .u64 a\n)\n{\n}\n.entry foo(\n)\n";
        assert_eq!(entry_names(ptx), ["runtime_iota_u32", "foo"]);
    }
}
