"""The recipes of the README's "Results as a dataset", run as written.

Each recipe is a ```python block of README.md whose first line is `# recipe: NAME`. They run
in a folder holding `results/`, made by real runs of all three games with the default
output paths (one folder per game), beside a results/README.md as in a checkout. Their
figures are checked against the same computation in plain pandas, and the paired counts
against sim compare's."""

import re

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, sim

from sim.engine.analysis.compare import comparison
from sim.engine.analysis.inputs import load_runs
from sim.engine.stats import wilson_interval

RECIPE = re.compile(r"^```python\n(# recipe: ([\w-]+)\n.*?)^```", re.S | re.M)
TOOLS = ("pandas", "duckdb", "polars", "pyarrow")
RUN = ["game", "rules", "policy", "params"]
RUNS = [  # (game, policy, options): cheap policies, two rules of calc, a sweep of planner
    ("calc", "greedy", []),
    ("calc", "planner", []),
    ("calc", "greedy", ["--wastes", 3]),
    ("calc", "planner", ["--param", "depth_weight=0,2"]),  # two files, in a sweep's folder
    ("montana", "first", []),
    ("montana", "greedy", []),
    ("jokers", "greedy", []),
]
FILES = len(RUNS) + 1
# What the recipes compare: planner (A) against greedy (B), deal by deal.
A, B = "planner", "greedy"
# Column names as each tool leaves them, and the names checked here.
RATE_NAMES = {"won_count": "deals", "won_sum": "wins"}
PAIR_NAMES = {"params": "params_a", "deal_count": "paired", "a_only_sum": "a_only",
              "b_only_sum": "b_only"}  # fmt: skip


def recipes():
    return {name: code for code, name in RECIPE.findall((ROOT / "README.md").read_text())}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder whose results/ holds the runs of RUNS, 300 deals of seed 11 each."""
    folder = tmp_path_factory.mktemp("dataset")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for game, policy, options in RUNS:
            args = (game, "-p", policy, "-n", 300, "--seed", 11, "--workers", 1, "-q", *options)
            result = sim(*args)
            assert result.exit_code == 0, result.output
    (folder / "results" / "README.md").write_text("Result files land here by default.\n")
    return folder


@pytest.fixture(scope="module")
def rows(folder):
    """Every row of every result file, text columns as str, read file by file."""
    results = folder / "results"
    files = sorted(results.rglob("*.parquet"))
    games = {path.relative_to(results).parts[0] for path in files}
    assert sorted(games) == ["calc", "jokers", "montana"]
    assert len(files) == FILES
    rows = pd.concat(pd.read_parquet(path, columns=[*RUN, "seed", "deal", "won"]) for path in files)
    return rows.astype({name: str for name in RUN})


def expected_rates(rows):
    rates = rows.groupby(RUN)["won"].agg(deals="size", wins="sum").reset_index()
    intervals = [wilson_interval(w, n) for w, n in zip(rates["wins"], rates["deals"], strict=True)]
    rates["win_rate"] = rates["wins"] / rates["deals"]
    rates["low"], rates["high"] = np.array(intervals).T
    return rates


def expected_counts(rows):
    a, b = rows[rows["policy"] == A], rows[rows["policy"] == B]
    pairs = a.merge(b, on=["game", "rules", "seed", "deal"], suffixes=("_a", "_b"))
    pairs["a_only"] = pairs["won_a"] & ~pairs["won_b"]
    pairs["b_only"] = pairs["won_b"] & ~pairs["won_a"]
    keys = ["game", "rules", "params_a", "params_b"]
    return (
        pairs.groupby(keys)
        .agg(paired=("deal", "size"), a_only=("a_only", "sum"), b_only=("b_only", "sum"))
        .reset_index()
    )


def run_recipe(name, folder):
    """The namespace a recipe leaves, run in folder after the shared `wilson` helper."""
    code = recipes()["wilson"] + "\n" + recipes()[name]
    namespace = {"__name__": f"recipe_{name.replace('-', '_')}"}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        exec(compile(code, f"README.md: {name}", "exec"), namespace)
    return namespace


def as_frame(value, names, columns):
    """A recipe's result as a pandas frame of the checked columns, sorted, text as str."""
    frame = value if isinstance(value, pd.DataFrame) else value.to_pandas()
    frame = frame.rename(columns=names)[columns]
    text = [c for c in columns if c in RUN or c.startswith("params")]
    frame = frame.astype({c: str for c in text})
    return frame.sort_values(text).reset_index(drop=True)


def assert_same(got, expected):
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected), (got, expected)
    for column in expected:
        if expected[column].dtype == object or isinstance(expected[column].dtype, pd.StringDtype):
            assert got[column].tolist() == expected[column].tolist(), column
        else:
            values, want = got[column].to_numpy(float), expected[column].to_numpy(float)
            assert np.allclose(values, want, rtol=1e-6, atol=1e-9), (column, values, want)


def test_the_readme_has_both_recipes_for_every_tool():
    names = set(recipes())
    assert names == {"wilson"} | {f"{tool}-{kind}" for tool in TOOLS
                                  for kind in ("win-rate", "paired")}  # fmt: skip


@pytest.mark.parametrize("tool", TOOLS)
def test_win_rate_recipe_gives_every_runs_rate_and_interval(tool, folder, rows):
    columns = [*RUN, "deals", "wins", "low", "high"]
    expected = as_frame(expected_rates(rows), {}, columns)
    assert len(expected) == FILES
    got = as_frame(run_recipe(f"{tool}-win-rate", folder)["rates"], RATE_NAMES, columns)
    assert_same(got, expected)


@pytest.mark.parametrize("tool", TOOLS)
def test_paired_recipe_counts_deals_won_by_one_policy_only(tool, folder, rows):
    columns = ["game", "rules", "params_a", "params_b", "paired", "a_only", "b_only"]
    expected = as_frame(expected_counts(rows), {}, columns)
    # planner's three settings, each paired with greedy on the 300 deals of calc, wastes=4
    assert expected[["game", "rules", "paired"]].values.tolist() == [["calc", "wastes=4", 300]] * 3
    assert expected["params_a"].nunique() == 3
    got = as_frame(run_recipe(f"{tool}-paired", folder)["counts"], PAIR_NAMES, columns)
    assert_same(got, expected)
    # the same counts as sim compare's, on the same folder
    table = comparison(load_runs([folder / "results"]), B)
    planner = table[(table["rules"] == "wastes=4") & (table["policy"] == A)]
    cells = ["params", "paired", "only_policy", "only_baseline"]
    assert planner[cells].sort_values("params").values.tolist() == (
        expected[["params_a", "paired", "a_only", "b_only"]].values.tolist()
    )
