"""`sim compare --sort`: each group's runs as a leaderboard, in the printed tables and in
every machine format, the baselines untouched; and every printed figure is a column of
the machine formats."""

import io
import json
import math
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import sim
from test_compare import MIXED_GROUPS, mixed_folder, write_result

from sim.cli.analysis import compare
from sim.engine.analysis import formats
from sim.engine.analysis.compare import PAIRED_COUNTS, SORT_KEYS, comparison
from sim.engine.analysis.inputs import load_runs

# Named so that the folder's order (the input order) is no leaderboard's: random, read
# first, is every sort's default baseline.
REAL_RUNS = {"1-random": ("random", 300), "2-planner": ("planner", 200),
             "3-greedy": ("greedy", 400), "4-kings-bottom": ("kings-bottom", 250)}  # fmt: skip
BAD_KEY = (
    "Error: Invalid value for '--sort': 'best' is not one of "
    "'win_rate', 'score', 'deals', 'name', 'diff'."
)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    """A folder of four small Calculation runs of one seed, each of another length."""
    folder = tmp_path_factory.mktemp("leaderboard")
    for name, (policy, deals) in REAL_RUNS.items():
        out = folder / f"{name}.parquet"
        args = ("calc", "-p", policy, "-n", deals, "--seed", 1, "--workers", 1, "-q", "--out", out)
        assert sim(*args).exit_code == 0
    return folder


def expected_order(table, key):
    """The run labels of a one-group comparison in the order key promises, worked out
    here with Python's sort from the unsorted rows."""
    rows = list(table.itertuples())
    baseline = next(row.baseline for row in rows if row.baseline)

    def missing_last(value, largest_first=True):
        return (math.isnan(value), -value if largest_first else value)

    ordering = {
        "win_rate": lambda row: (missing_last(row.win_rate), row.run),
        "score": lambda row: (missing_last(row.score_mean), row.run),
        "deals": lambda row: (-row.deals, row.run),
        "name": lambda row: row.run,
        "diff": lambda row: (row.run != baseline, missing_last(row.win_rate_diff), row.run),
    }[key]
    return [row.run for row in sorted(rows, key=ordering)]


def printed_runs(text):
    """The run labels of the first run table printed, in their order."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("run "))
    return _labels_until_a_break(lines[header + 1 :])


def printed_pairs(text):
    """The run labels of the first paired table printed, in their order."""
    lines = text.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("paired with "))
    return _labels_until_a_break(lines[heading + 2 :])


def _labels_until_a_break(lines):
    """The first cell of each line up to a blank line or a note (indented)."""
    labels = []
    for line in lines:
        if not line or line.startswith("  "):
            break
        labels.append(re.split(r" {2,}", line)[0])  # labels hold single spaces: `planner depth=1`
    return labels


def csv_of(*args):
    """The comparison `sim compare ARGS --format csv` prints, as a table."""
    result = sim("compare", *args, "--format", "csv")
    assert result.exit_code == 0, result.output
    return pd.read_csv(io.StringIO(result.stdout), keep_default_na=False, na_values=[""])


def read_back(out, fmt):
    """A machine output read as a table, its `about` (where the format keeps one) as attrs,
    its counts as the integers they were written as."""
    if fmt == "csv":
        table = pd.read_csv(out, keep_default_na=False, na_values=[""])
    elif fmt == "parquet":
        table = pd.read_parquet(out)
        table.attrs = json.loads(pq.read_metadata(out).metadata[formats.ABOUT_KEY])
    else:
        document = json.loads(out.read_text())
        table = pd.DataFrame(document["runs"])
        table.attrs = document["about"]
    for name in (*PAIRED_COUNTS, "winnable", "winnable_wins"):
        if name in table:
            table[name] = table[name].astype("Int64")
    return table


def test_the_default_order_is_by_win_rate_best_first(real_runs):
    unsorted = comparison(load_runs([real_runs]))
    expected = expected_order(unsorted, "win_rate")
    assert expected != list(unsorted["run"]), "the runs must not be read in leaderboard order"
    printed = sim("compare", real_runs)
    assert printed.exit_code == 0, printed.output
    assert printed_runs(printed.stdout) == expected
    assert printed_pairs(printed.stdout) == [run for run in expected if run != "random"]
    rates = list(unsorted.set_index("run").loc[expected, "win_rate"])
    assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1]


@pytest.mark.parametrize("key", list(SORT_KEYS))
def test_each_key_orders_the_tables_and_every_machine_format_alike(real_runs, key, tmp_path):
    expected = expected_order(comparison(load_runs([real_runs])), key)
    printed = sim("compare", real_runs, "--sort", key)
    assert printed.exit_code == 0, printed.output
    assert printed_runs(printed.stdout) == expected
    assert printed_pairs(printed.stdout) == [run for run in expected if run != "random"]
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"c.{fmt}"
        assert sim("compare", real_runs, "--sort", key, "--out", out).exit_code == 0
        assert list(read_back(out, fmt)["run"]) == expected, fmt
    markdown = sim("compare", real_runs, "--sort", key, "--format", "markdown").stdout
    rows = [line.split(" | ")[0].removeprefix("| ") for line in markdown.splitlines()]
    table_rows = rows[rows.index("run") + 2 :][: len(expected)]
    assert table_rows == expected


def test_the_keys_order_the_real_runs_five_ways(real_runs):
    """The fixture tells the keys apart: a key that sorted like another would fail."""
    unsorted = comparison(load_runs([real_runs]))
    orders = {key: tuple(expected_order(unsorted, key)) for key in SORT_KEYS}
    assert len(set(orders.values())) == len(SORT_KEYS)
    assert orders["name"] == ("greedy", "kings-bottom", "planner", "random")
    assert orders["diff"][0] == "random"  # the baseline, first by diff
    assert orders["win_rate"][-1] == "random"  # and last by win rate: it wins none


@pytest.mark.parametrize("baseline", [None, "greedy"])
def test_the_baseline_and_its_figures_are_the_same_whatever_the_sort(real_runs, baseline):
    asked = () if baseline is None else ("--baseline", baseline)
    chosen = baseline or "random"  # the first run read, whatever the sort
    tables = []
    for key in SORT_KEYS:
        printed = sim("compare", real_runs, *asked, "--sort", key)
        assert f"\npaired with {chosen}\n" in printed.stdout
        machine = csv_of(real_runs, *asked, "--sort", key)
        others = machine[machine["run"] != chosen]
        assert set(others["baseline"]) == {chosen}
        assert machine.loc[machine["run"] == chosen, "baseline"].isna().all()
        tables.append(machine.sort_values("run").reset_index(drop=True))
    for table in tables[1:]:
        pd.testing.assert_frame_equal(table, tables[0])
    by_diff = printed_runs(sim("compare", real_runs, *asked, "--sort", "diff").stdout)
    assert by_diff[0] == chosen


def test_ties_go_by_label_and_runs_without_the_figure_come_last(tmp_path):
    #  run   outcomes                      win rate  diff with b (the first read)
    #  b     won lost                      1/2       baseline
    #  a     won lost won lost             1/2       0 on deals 0-1
    #  c     won won                       1        +1/2
    #  d     unknown unknown               none      none: no deal decided in both
    outcomes = {"1-b": ["won", "lost"], "2-a": ["won", "lost", "won", "lost"],
                "3-c": ["won", "won"], "4-d": ["unknown", "unknown"]}  # fmt: skip
    for name, outcome in outcomes.items():
        write_result(tmp_path / f"{name}.parquet", name[2:], outcome=outcome, game="jokers")
    expected = {
        "win_rate": ["c", "a", "b", "d"],
        "diff": ["b", "c", "a", "d"],
        "deals": ["a", "b", "c", "d"],
        "name": ["a", "b", "c", "d"],
    }
    for key, order in expected.items():
        printed = sim("compare", tmp_path, "--sort", key)
        assert printed.exit_code == 0, printed.output
        assert printed_runs(printed.stdout) == order, key
        out = tmp_path / "out" / f"{key}.csv"
        assert sim("compare", tmp_path, "--sort", key, "--out", out).exit_code == 0
        assert list(pd.read_csv(out)["run"]) == order, key


def test_groups_keep_their_order_and_each_is_sorted_on_its_own(tmp_path):
    folder = mixed_folder(tmp_path / "results")
    for key in SORT_KEYS:
        printed = sim("compare", folder, "--sort", key)
        assert [line for line in printed.stdout.splitlines() if " · " in line] == MIXED_GROUPS
        table = csv_of(folder, "--sort", key)
        unsorted = comparison(load_runs([folder]))
        for (game, rules), part in unsorted.groupby(["game", "rules"], sort=False):
            if part["baseline"].eq("").all():
                continue  # a group of one run
            shown = table[(table["game"] == game) & (table["rules"] == rules)]
            assert list(shown["run"]) == expected_order(part, key), (key, game, rules)


def test_a_bad_key_is_one_usage_error_line(tmp_path, real_runs):
    out = tmp_path / "c.csv"
    result = sim("compare", real_runs, "--sort", "best", "--out", out)
    assert result.exit_code == 2
    assert result.output.strip() == BAD_KEY
    assert not out.exists()


def test_the_command_offers_every_sort_key():
    (option,) = [param for param in compare.params if param.name == "sort_key"]
    assert list(option.type.choices) == list(SORT_KEYS)
    assert option.default == "win_rate"


def every_figure_folder(folder, scratch):
    """One Calculation group showing every kind of figure: an exact oracle (winnable
    deals), unknown and capped outcomes, a run pooled from two files, two runs in one
    file (so the group's files are not the sum of its runs'), and deal sets that differ."""
    oracle = ["won", "won", "won", "won", "lost", "lost", "unknown", "won"]
    write_result(folder / "o.parquet", "oracle", outcome=oracle)
    write_result(folder / "g1.parquet", "greedy", outcome=["won", "lost", "unknown", "won"])
    write_result(folder / "g2.parquet", "greedy", outcome=["won", "capped", "won", "lost"],
                 deals=range(3, 7))  # fmt: skip
    planner = ["won", "won", "lost", "won", "lost", "won"]
    random = ["lost", "won", "lost", "lost", "capped", "lost"]
    one = pq.read_table(write_result(scratch / "p.parquet", "planner", outcome=planner))
    two = pq.read_table(write_result(scratch / "r.parquet", "random", outcome=random))
    both = pa.concat_tables([one, two]).replace_schema_metadata(one.schema.metadata)
    pq.write_table(both, folder / "both.parquet")
    return folder


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
@pytest.mark.parametrize("key", ["win_rate", "diff"])
def test_every_printed_figure_is_in_the_machine_formats(tmp_path, fmt, key):
    folder = every_figure_folder(tmp_path / "results", tmp_path / "parts")
    printed = sim("compare", folder, "--sort", key)
    assert printed.exit_code == 0, printed.output
    text = printed.stdout
    # the figures this folder is meant to show, so that none goes unchecked
    for shown in ("4 runs, 4 files", "decided", "won of winnable", "capped", "unknown",
                  "undecided", "deals paired"):  # fmt: skip
        assert shown in text, shown
    out = tmp_path / f"c.{fmt}"
    assert sim("compare", folder, "--sort", key, "--out", out).exit_code == 0
    machine = read_back(out, fmt)
    assert set(machine["group_runs"]) == {4} and set(machine["group_files"]) == {4}
    assert machine["files"].sum() == 5  # the file of two runs counted once in the group
    # every figure of every table, printed again from the machine output alone
    assert formats.to_text(machine) == text
