"""Shared fixtures and helpers, and the example game plugged in for every test.

The example game of examples/pairs is registered as `pip install examples/pairs` would
register it: a dist-info folder whose entry_points.txt names it in `sim.games`
(tests/plugins/installed). It is on the module path of this process and, through
PYTHONPATH, of every `sim` the tests start, so the contract tests run it beside the
built-in games without a line of sim knowing it.
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = Path(__file__).parent / "plugins"
EXAMPLE_GAME = ROOT / "examples" / "pairs"
INSTALLED = PLUGINS / "installed"  # the example game's entry point, as pip leaves it

_plugged_in = [str(EXAMPLE_GAME), str(INSTALLED)]
sys.path[:0] = [str(PLUGINS), *_plugged_in]
os.environ["PYTHONPATH"] = os.pathsep.join(
    _plugged_in + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)


def sim(*args, **options):
    """Run `sim ARGS` in this process; every argument may be a path or a number."""
    from click.testing import CliRunner

    from sim.cli.main import main

    return CliRunner().invoke(
        main, [str(a) for a in args], prog_name="sim", catch_exceptions=False, **options
    )


def pytest_collection_modifyitems(config, items):
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        return
    skip = pytest.mark.skip(reason="slow check: runs outside CI (unset CI to run it)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# The columns of a result row that say which setting played it, not how the deal went.
SETTING_COLUMNS = ["setting", "policy", "params", "code", "param"]


def played(table):
    """A result table without the columns that name its setting: what two settings that
    play alike (a policy and its copy, say) must have equal."""
    return table.drop_columns([name for name in SETTING_COLUMNS if name in table.column_names])
