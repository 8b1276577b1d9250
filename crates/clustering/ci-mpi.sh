#!/usr/bin/env bash
# Builds and tests clustering's `mpi` feature: the kmeans-mpi worker under `mpirun -n 3`,
# including a rank killed mid-run and resumed from its checkpoint, a rank whose all-reduce
# differs in the last bit, resumes refused for another seed or init, and CSV weights
# (tests/mpi.rs).
# Idempotent: installs OpenMPI and libclang (for the mpi crate's bindgen) only when missing.
# Usage: crates/clustering/ci-mpi.sh   (from anywhere; needs root or sudo for apt-get)
set -euo pipefail
cd "$(dirname "$0")/../.."

need=()
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/openmpi/mpi.h ] || [ -n "$(find /usr/lib /usr/include -name mpi.h -path '*openmpi*' -print -quit 2>/dev/null)" ] || need+=(libopenmpi-dev)
ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so' || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
    echo "ci-mpi: installing ${need[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libopenmpi-dev openmpi-bin libclang-dev >/dev/null
fi

# OpenMPI refuses to run as root without these (containers, CI).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# `--workspace --features clustering/mpi` rather than `-p clustering --features mpi`: cargo
# resolves the dependencies' features over the selected packages, so with the whole workspace
# selected they come out as in CI's clippy and test steps and their builds are reused; with
# `-p clustering` alone every dependency would be checked and built once more (minutes).
echo "ci-mpi: clippy + build of the mpi feature"
cargo clippy --workspace --features clustering/mpi --all-targets -- -D warnings
echo "ci-mpi: mpirun -n 1/2/3 tests (kill a rank, resume)"
# Only the MPI tests: the library's own tests ran in CI's test step, and with this feature
# they would compile the library's test build once more (minutes on 2 cores) for nothing new.
cargo test --workspace --features clustering/mpi --test mpi
echo "ci-mpi: warpath kmeans --ranks 2 (the CLI's launcher, run_job and the check)"
# Both binaries come from test builds, which cargo leaves in target/debug: kmeans-mpi from the
# MPI tests above, warpath from CI's test step (`cargo test --workspace`, a no-op here).
# `cargo build` would compile them again: cargo keeps the test profile's builds apart from the
# dev profile's (even with the same settings), and `-p warpath` would resolve other features.
cargo test -q --workspace --no-run
target=${CARGO_TARGET_DIR:-target}
out=$(WARPATH_KMEANS_MPI="$target/debug/kmeans-mpi" "$target/debug/warpath" --json kmeans \
    --generate 20000 --dim 4 --k 5 --seed 3 --ranks 2)
echo "$out"
echo "$out" | grep -q '"verified":true' || { echo "ci-mpi: the distributed CLI run did not verify"; exit 1; }
echo "ci-mpi: ok"
