"""The dataset recipes of the documentation, run as written on a results folder as real use
leaves it, and checked against `sim compare` to the deal.

Each recipe is a ```python block of docs/guide/dataset.md whose first line is
`# recipe: NAME`. The folder holds, beside a results/README.md as in a checkout: a greedy
run; a rerun of its first deals; a planner run and a sweep of planner over depth_weight
landing beside it by default (its depth_weight=1 file is that run's setting again); greedy
under other rules; two plug-in files that both call their policy `bury_late` with
different code; a slow plug-in's complete run and an incomplete one over the same deals
(stopped by SIGTERM); and runs of Montana and Jokers. Every recipe must count one row per
(setting, seed, deal), as `sim compare` does."""

import os
import re
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import PLUGINS, ROOT, sim
from test_faults import wait_for_rows

from sim.engine.analysis.compare import comparison
from sim.engine.analysis.inputs import load_runs
from sim.engine.stats import wilson_interval

RECIPES_PAGE = ROOT / "docs" / "guide" / "dataset.md"
RECIPE = re.compile(r"^```python\n(# recipe: ([\w-]+)\n.*?)^```", re.S | re.M)
TOOLS = ("pandas", "duckdb", "polars", "pyarrow")
SEED = 11
SLOW = ("-p", "slow_greedy:py_greedy", "--param", "delay_ms=5")
SLOW_DEALS = 150
# Two plug-in files whose policy has one name and different play: bury_late ranks the
# piles as greedy does, one of them with its choice reversed.
BURY_LATE = '''
from sim.policies.calc import greedy
from sim.policies.registry import policy

_greedy = greedy.choose.py_func


@policy("calc", name="bury_late")
def bury_late(state, legal, n_legal, params, stream):
    """Greedy's choice{how}."""
    choice = _greedy(state, legal, n_legal, params, stream)
    return {choice}
'''
# What the recipes compare: planner (A) against greedy (B), deal by deal.
A, B = "planner", "greedy"
RATE_NAMES = {"deal_count": "deals", "decided_sum": "decided", "won_sum": "wins"}
PAIR_NAMES = {"setting": "setting_a", "params": "params_a", "deal_count": "paired",
              "a_only_sum": "a_only", "b_only_sum": "b_only"}  # fmt: skip


def recipes():
    return {name: code for code, name in RECIPE.findall(RECIPES_PAGE.read_text())}


def run(*args):
    result = sim(*args, "--seed", SEED, "--workers", 1, "-q")
    assert result.exit_code == 0, result.output


def interrupted_run(folder, out):
    """A slow plug-in run stopped by SIGTERM once it has kept some deals: an incomplete
    file, as an operator's Ctrl-C or a batch scheduler leaves it."""
    env = os.environ | {"PYTHONPATH": f"{PLUGINS}{os.pathsep}{os.environ['PYTHONPATH']}"}
    args = ["calc", *SLOW, "-n", 5000]
    args += ["--seed", SEED, "--workers", 1, "-q", "--out", out]
    process = subprocess.Popen(
        [sys.executable, "-m", "sim", *map(str, args)],
        cwd=folder,
        env=env | {"TQDM_DISABLE": "1"},
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_for_rows(out, SLOW_DEALS + 50, timeout=120)
    os.killpg(process.pid, signal.SIGTERM)
    process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dataset")
    calc = folder / "results" / "calc"
    plugins = folder / "plugins"
    for name, how, choice in (("a", "", "choice"), ("b", ", the last legal action", "n_legal - 1")):
        (plugins / name).mkdir(parents=True)
        (plugins / name / "bury.py").write_text(BURY_LATE.format(how=how, choice=choice))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        run("calc", "-p", "greedy", "-n", 1200)
        run("calc", "-p", "greedy", "-n", 300)  # a rerun of its first deals
        run("calc", "-p", "planner", "-n", 600)
        run("calc", "-p", "planner", "-n", 800, "--param", "depth_weight=0,1,2")
        run("calc", "-p", "greedy", "-n", 300, "--wastes", 3)
        run("calc", "-p", plugins / "a" / "bury.py:bury_late", "-n", 400)
        run("calc", "-p", plugins / "b" / "bury.py:bury_late", "-n", 400,
            "--out", calc / "bury-late-b.parquet")  # fmt: skip
        run("calc", *SLOW, "-n", SLOW_DEALS, "--out", calc / "slow.parquet")
        run("montana", "-p", "greedy", "-n", 300)
        run("jokers", "-p", "greedy", "-n", 300)
    interrupted_run(folder, calc / "slow-stopped.parquet")
    (folder / "results" / "README.md").write_text("Result files land here by default.\n")
    return folder


@pytest.fixture(scope="module")
def compared(folder):
    """sim compare's table of the folder, greedy the baseline of every group."""
    return comparison(load_runs([folder / "results"]), B)


def test_the_folder_holds_overlaps_twins_and_an_incomplete_file(folder):
    files = sorted((folder / "results").rglob("*.parquet"))
    rows = pd.concat(pd.read_parquet(path, columns=["setting", "policy", "seed", "deal"])
                     for path in files)  # fmt: skip
    # the rerun's 300, planner's 600 again in the sweep, the slow run's 150 again
    assert rows.duplicated(["setting", "seed", "deal"]).sum() == 300 + 600 + SLOW_DEALS
    twins = rows[rows["policy"] == "bury_late"]["setting"].unique()
    assert len(twins) == 2
    stopped = pq.read_metadata(folder / "results" / "calc" / "slow-stopped.parquet").metadata
    assert b'"completed": false' in stopped[b"sim"]


def test_the_dataset_page_has_every_recipe_for_every_tool():
    names = set(recipes())
    expected = {f"{tool}-{kind}" for tool in TOOLS for kind in ("win-rate", "paired")}
    assert names == {"wilson", "duckdb-sweep", "polars-sweep"} | expected


def run_recipe(name, folder):
    """The namespace a recipe leaves, run in folder after the shared `wilson` helper."""
    code = recipes()["wilson"] + "\n" + recipes()[name]
    namespace = {"__name__": f"recipe_{name.replace('-', '_')}"}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        exec(compile(code, f"docs/guide/dataset.md: {name}", "exec"), namespace)
    return namespace


def as_frame(value, names, columns):
    """A recipe's result as a pandas frame of the checked columns, text as str, sorted."""
    frame = value if isinstance(value, pd.DataFrame) else value.to_pandas()
    frame = frame.rename(columns=names)[columns]
    text = [c for c in columns if frame[c].dtype == object or str(frame[c].dtype) == "category"]
    frame = frame.astype({c: str for c in text})
    return frame.sort_values(columns[0]).reset_index(drop=True)


@pytest.mark.parametrize("tool", TOOLS)
def test_win_rate_recipe_counts_every_setting_as_compare_does(tool, folder, compared):
    columns = ["setting", "deals", "decided", "wins", "low", "high"]
    got = as_frame(run_recipe(f"{tool}-win-rate", folder)["rates"], RATE_NAMES, columns)
    expected = compared.rename(columns={"win_rate_low": "low", "win_rate_high": "high"})
    expected = as_frame(expected, {}, columns)
    assert got[columns[:4]].values.tolist() == expected[columns[:4]].values.tolist()
    assert np.allclose(got[["low", "high"]], expected[["low", "high"]], rtol=1e-9)
    # the Wilson helper of the recipes is compare's interval
    low, high = wilson_interval(int(got["wins"][0]), int(got["decided"][0]))
    assert np.allclose([low, high], got.loc[0, ["low", "high"]].astype(float))


@pytest.mark.parametrize("tool", TOOLS)
def test_paired_recipe_counts_the_deals_compare_pairs(tool, folder, compared):
    columns = ["setting_a", "paired", "a_only", "b_only"]
    got = as_frame(run_recipe(f"{tool}-paired", folder)["counts"], PAIR_NAMES, columns)
    planner = compared[(compared["policy"] == A) & (compared["rules"] == "wastes=4")]
    planner = planner.rename(columns={"setting": "setting_a", "only_policy": "a_only",
                                      "only_baseline": "b_only"})  # fmt: skip
    expected = as_frame(planner, {}, columns)
    assert len(expected) == 3  # planner's three settings, the default one run twice
    assert expected["paired"].tolist() == [800, 800, 800]
    assert got.values.tolist() == expected.values.tolist()


@pytest.mark.parametrize("tool", ["duckdb", "polars"])
def test_sweep_recipe_gives_the_win_rate_at_each_swept_value(tool, folder, compared):
    sweep = run_recipe(f"{tool}-sweep", folder)["sweep"]
    sweep = sweep if isinstance(sweep, pd.DataFrame) else sweep.to_pandas()
    assert sweep["depth_weight"].tolist() == [0.0, 1.0, 2.0]
    planner = compared[(compared["policy"] == A) & (compared["rules"] == "wastes=4")]
    by_value = {row.params.split()[0]: (row.deals, row.wins) for row in planner.itertuples()}
    for value, deals, wins in zip(
        sweep["depth_weight"], sweep["deals"], sweep["wins"], strict=True
    ):
        assert by_value[f"depth_weight={value!r}"] == (deals, wins)


def test_export_of_the_folder_holds_the_rows_compare_counts(folder, compared, tmp_path):
    out = tmp_path / "all.parquet"
    result = sim("export", folder / "results", "--to", "parquet", "--out", out)
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out, columns=["setting", "seed", "deal", "won"]).to_pandas()
    assert not rows.duplicated(["setting", "seed", "deal"]).any()
    counts = rows.groupby("setting", observed=True)["won"].agg(["size", "sum"])
    expected = compared.set_index("setting")[["deals", "wins"]]
    assert counts.loc[expected.index].values.tolist() == expected.values.tolist()
    again = comparison(load_runs([out]), B)
    assert again.set_index("setting")[["deals", "wins"]].sort_index().equals(expected.sort_index())


def test_every_game_writes_one_schema(tmp_path):
    """The built-in games and a game from outside (examples/pairs): the same columns of
    the same types, so a glob over their files reads with no option in any tool."""
    schemas = {}
    for game in ("calc", "montana", "jokers", "pairs"):
        out = tmp_path / f"{game}.parquet"
        result = sim(game, "-n", 20, "--seed", 1, "--workers", 1, "-q", "--out", out)
        assert result.exit_code == 0, result.output
        schemas[game] = [(field.name, str(field.type)) for field in pq.read_schema(out)]
    assert all(schema == schemas["calc"] for schema in schemas.values()), schemas
    pl = pytest.importorskip("polars")
    counts = pl.scan_parquet(tmp_path / "*.parquet").group_by("game").len().collect()
    assert sorted(counts.rows()) == [(game, 20) for game in sorted(schemas)]


def test_report_of_the_folder_counts_what_compare_counts(folder, compared, tmp_path):
    out = tmp_path / "report.md"
    result = sim("report", folder / "results", "--baseline", B, "--out", out)
    assert result.exit_code == 0, result.output
    rows, header = {}, None
    for line in out.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            header = None
        elif cells[0] == "run":
            header = cells if "wins" in cells else None
        elif header and not set(cells[0]) <= set(":-"):
            deals, wins = (int(cells[header.index(k)].replace(",", "")) for k in ("deals", "wins"))
            rows.setdefault(cells[0], []).append((deals, wins))
    expected = {}
    for run in compared.itertuples():
        expected.setdefault(run.run, []).append((run.deals, run.wins))
    assert rows == expected


HELPED = '''
import helper

from sim.policies.calc import greedy
from sim.policies.registry import policy

_greedy = greedy.choose.py_func


@policy("calc", name="helped")
def helped(state, legal, n_legal, params, stream):
    """Greedy's choice, through a helper module beside it."""
    return helper.pick(_greedy(state, legal, n_legal, params, stream), n_legal)
'''


def test_a_plugins_helper_module_is_part_of_its_code(tmp_path):
    """Editing a helper the plug-in imports from beside it changes its play: a new setting."""
    (tmp_path / "policy.py").write_text(HELPED)
    settings = []
    for name, pick in (("first", "choice"), ("last", "n_legal - 1")):
        (tmp_path / "helper.py").write_text(f"def pick(choice, n_legal):\n    return {pick}\n")
        out = tmp_path / f"{name}.parquet"
        args = ("-p", f"{tmp_path / 'policy.py'}:helped", "-n", 30, "--out", out)
        process = subprocess.run(
            [sys.executable, "-m", "sim", "calc", *map(str, args), "-q", "--workers", "1"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert process.returncode == 0, process.stderr
        settings.append(pq.read_table(out, columns=["setting"]).column("setting")[0].as_py())
    assert settings[0] != settings[1]
