#!/usr/bin/env bash
# warpath's linear assignment against scipy, lap (gatagat) and lapjv (src-d) on the matrices
# of issue 35, in one Python process per table: builds a virtual environment with the peers
# from PyPI and warpath itself (pip install ./crates/warpath-py, a release build), then runs
# lap_peers.py with the arguments given (none: every table at the issue's sizes).
#
#   crates/assignment/scripts/lap_peers.sh                    # dense, sparse and batch tables
#   crates/assignment/scripts/lap_peers.sh --dense --sizes 1000,4000
#   VENV=/tmp/lap-venv crates/assignment/scripts/lap_peers.sh --batch
#
# Note: `lapx` (a fork) also installs itself as the module `lap`; this script installs
# gatagat's `lap` and says which one it imported.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
venv="${VENV:-$root/target/lap-peers-venv}"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "numpy==2.4.6" "scipy==1.17.1" "lap==0.5.13" "lapjv==1.3.29"
if [ -z "${SKIP_BUILD:-}" ]; then
    echo "lap_peers: pip install ./crates/warpath-py (release build, a few minutes)" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$root/crates/warpath-py"
fi
"$venv/bin/python" -c 'import lap; print("lap module:", lap.__file__, getattr(lap, "__version__", "?"))' >&2
echo "$(lscpu | grep -i 'model name\|family' | tr -s ' ' | tr '\n' ';')" >&2
cd "$root/target" 2>/dev/null || cd /tmp
exec "$venv/bin/python" "$root/crates/assignment/scripts/lap_peers.py" "$@"
