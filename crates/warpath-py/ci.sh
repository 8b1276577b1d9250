#!/usr/bin/env bash
# Builds the Python package warpath (crates/warpath-py) into a fresh virtual environment with
# `pip install ./crates/warpath-py` (maturin, release build of the extension), installs the
# pinned test dependencies (requirements-test.txt: numpy, scipy, scikit-learn, networkx,
# pytest) and runs the pytest suite against the installed package; then, when the simulated
# CUDA driver has been built (`cargo xtask sim`, as CI does before), runs the backend="cuda"
# tests (tests/test_gpu.py) again through it. Exits non-zero when the build or any test fails.
# Needs python3 (>= 3.10, with venv) and access to PyPI; no GPU (GPU tests skip themselves).
# Usage: crates/warpath-py/ci.sh   (from anywhere; PYTHON=python3.12 picks the interpreter)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
py="${PYTHON:-python3}"
ci="$root/target/warpath-py-ci"
venv="$ci/venv"

start=$(date +%s)
echo "warpath-py ci: fresh virtual environment in $venv ($("$py" --version))"
rm -rf "$venv"
mkdir -p "$ci"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r crates/warpath-py/requirements-test.txt
echo "warpath-py ci: pip install ./crates/warpath-py (release build)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check ./crates/warpath-py
built=$(date +%s)

# Run from outside the source tree, so that `import warpath` is the installed package.
cd "$ci"
echo "warpath-py ci: pytest"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/crates/warpath-py/tests"

sim="$root/target/cuda-sim"
if [ -e "$sim/libcuda.so" ]; then
    echo "warpath-py ci: backend=\"cuda\" tests through the simulated CUDA driver ($sim)"
    LD_LIBRARY_PATH="$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" WARPATH_SIM=1 WARPATH_SIM_MEM=1G \
        WARPATH_REQUIRE_GPU=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
        "$root/crates/warpath-py/tests/test_gpu.py"
else
    echo "warpath-py ci: no simulated CUDA driver at $sim (cargo xtask sim builds it): GPU tests skipped"
fi
end=$(date +%s)
echo "warpath-py ci: ok (install $((built - start)) s, tests $((end - built)) s)"
