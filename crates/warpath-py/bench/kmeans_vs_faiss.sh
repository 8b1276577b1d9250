#!/usr/bin/env bash
# Sets up target/bench-kmeans/venv (numpy, scikit-learn, faiss-cpu, threadpoolctl from PyPI;
# warpath built from this checkout, release) and runs kmeans_vs_faiss.py with the arguments
# given. Needs python3 with venv and access to PyPI.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
venv="$root/target/bench-kmeans/venv"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    mkdir -p "$(dirname "$venv")"
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check numpy scikit-learn faiss-cpu threadpoolctl
fi
if [ -z "${SKIP_BUILD:-}" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$root/crates/warpath-py"
fi
exec "$venv/bin/python" "$root/crates/warpath-py/bench/kmeans_vs_faiss.py" "$@"
