"""scipy's own ``test_linear_assignment.py``, whole, with ``warpath.linear_sum_assignment``
swapped in for ``scipy.optimize.linear_sum_assignment`` (issue 24), and scipy's
``test_matching.py`` with ``warpath.min_weight_full_bipartite_matching`` swapped in for
scipy's (issue 35; the file's ``maximum_bipartite_matching`` tests keep scipy's function).

The file is taken from the installed scipy (its wheels ship their tests), its one import of
the solver is replaced, and pytest runs it in a subprocess: every test must pass, none may be
skipped. Exception types and, since warpath's messages start with scipy's words, the messages
too.
"""

import pathlib
import subprocess
import sys

import scipy

IMPORT = "from scipy.optimize import linear_sum_assignment\n"


def run_all_passing(test_file, *options):
    """Runs pytest on ``test_file`` in a subprocess (from its folder); asserts that it passed
    with nothing failed or skipped, and returns its whole report and its summary line."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", *options,
         str(test_file)],
        capture_output=True,
        text=True,
        cwd=test_file.parent,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    summary = report.strip().splitlines()[-1]
    assert "passed" in summary and "failed" not in summary and "skipped" not in summary, summary
    return report, summary


def test_scipy_linear_assignment_suite_passes_with_warpath_swapped_in(tmp_path):
    src = pathlib.Path(scipy.__file__).parent / "optimize" / "tests" / "test_linear_assignment.py"
    assert src.exists(), f"scipy {scipy.__version__} ships no {src}"
    text = src.read_text()
    assert text.count(IMPORT) == 1, "scipy's test file no longer imports the solver this way"
    swapped = tmp_path / "test_lsa_with_warpath.py"
    swapped.write_text(text.replace(IMPORT, "from warpath import linear_sum_assignment\n"))
    report, summary = run_all_passing(swapped)
    # the parametrized cases ran too (scipy 1.17 has 22 tests in the file)
    passed = int(summary.split(" passed")[0].split()[-1])
    assert passed >= 20, summary


MATCHING_IMPORT = (
    "from scipy.sparse.csgraph import (\n"
    "    maximum_bipartite_matching, min_weight_full_bipartite_matching\n"
    ")\n"
)


def test_scipy_matching_suite_passes_with_warpath_swapped_in(tmp_path):
    src = pathlib.Path(scipy.__file__).parent / "sparse" / "csgraph" / "tests" / "test_matching.py"
    assert src.exists(), f"scipy {scipy.__version__} ships no {src}"
    text = src.read_text()
    assert text.count(MATCHING_IMPORT) == 1, "scipy's test file no longer imports the functions this way"
    swapped = tmp_path / "test_matching_with_warpath.py"
    swapped.write_text(text.replace(
        MATCHING_IMPORT,
        "from scipy.sparse.csgraph import maximum_bipartite_matching\n"
        "from warpath import min_weight_full_bipartite_matching\n",
    ))
    report, _ = run_all_passing(swapped, "-rA")
    # every test of min_weight_full_bipartite_matching ran (scipy 1.17: 3 + 6 + 1 + 1 + 10)
    ran = [line for line in report.splitlines() if line.startswith("PASSED") and "min_weight" in line or
           line.startswith("PASSED") and "explicit_zero_causes_warning" in line]
    assert len(ran) >= 20, report
