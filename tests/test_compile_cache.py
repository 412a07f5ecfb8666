"""Cached kernels never outlive the sources they were built from: every cached function is
stamped with the rules and policy sources, not only with its own file."""

import os
import subprocess
import sys

from sim.engine import compile_cache


def test_the_sources_stamp_moves_when_any_source_file_changes(tmp_path):
    rules, policies = tmp_path / "engine", tmp_path / "policies"
    rules.mkdir()
    policies.mkdir()
    (rules / "calc.py").write_text("x = 1\n")
    (policies / "calc.py").write_text("y = 2\n")
    roots = (str(rules), str(policies))
    before = compile_cache.sources_stamp.__wrapped__(roots)
    os.utime(rules / "calc.py", (1e9, 2e9))
    assert compile_cache.sources_stamp.__wrapped__(roots) != before
    (policies / "calc.py").write_text("y = 22\n")
    os.utime(rules / "calc.py", (1e9, before[0]))
    assert compile_cache.sources_stamp.__wrapped__(roots)[1] == before[1] + 1


def test_a_policy_kernel_is_stamped_with_the_rules_it_calls():
    # policies/calc.py calls engine/calc.py: its cache must notice a change there too.
    from sim.policies import calc as calc_policies

    locator = calc_policies.greedy.choose._cache._impl._locator
    own, shared = locator.get_source_stamp()
    assert shared == compile_cache.sources_stamp()
    roots = compile_cache._source_roots()
    assert any(root.endswith("engine") for root in roots)
    assert any(root.endswith("policies") for root in roots)


def test_loading_a_kernel_leaves_scipy_linalg_unimported_until_a_kernel_needs_blas():
    # In a fresh process: this one may have imported scipy already.
    script = """
import sys
import numpy as np
from numba import njit
from sim.engine import calc
assert "scipy.linalg" not in sys.modules, "loading a kernel imported scipy.linalg"

@njit
def inner(a, b):
    return np.correlate(a, b)

a, b = np.arange(5.0), np.array([1.0, 2.0, 3.0])
assert np.array_equal(inner(a, b), np.correlate(a, b))
from numba.np import arraymath
assert bool(arraymath._HAVE_BLAS) == _importable("scipy.linalg.cython_blas")
print("ok")
"""
    prelude = (
        "import importlib\n"
        "def _importable(name):\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError:\n"
        "        return False\n"
        "    return True\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
