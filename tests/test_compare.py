"""`sim compare` on crafted result files whose counts are known, its formats and its errors;
folders of several games, rules and parameters, grouped; files of the old layout."""

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import sim
from scipy import stats

from sim.engine.analysis import formats
from sim.engine.analysis.compare import comparison, find_baseline
from sim.engine.analysis.inputs import load_runs
from sim.engine.games import registered_games
from sim.engine.run.results import params_text, upgrade_table

OUTCOMES = ("lost", "won", "capped", "unknown")


def write_result(path, policy, won=None, *, deals=None, outcome=None, game="calc", rules=None,
                 params=None, seed=0, score=None, old=False):  # fmt: skip
    """A result file as the runner writes it, with chosen outcomes per deal.

    old=True: as files were written before rows said their setting: of the text columns
    only `policy`, the game, rules and params in the run description alone."""
    if outcome is not None:
        codes = np.array([OUTCOMES.index(x) for x in outcome], np.int8)
        won = codes == OUTCOMES.index("won")
    won = np.asarray(won, bool)
    n = len(won)
    deals = np.arange(n) if deals is None else np.asarray(deals)
    rules = rules or ({"wastes": 4} if game == "calc" else {"max_moves": 1000})
    params = params or {}
    texts = {
        "game": game,
        "rules": " ".join(f"{k}={v}" for k, v in rules.items()),
        "policy": policy,
        "params": params_text(params),
    }
    columns = {
        "seed": pa.array(np.full(n, seed, np.int64)),
        "deal": pa.array(deals, pa.int64()),
    }
    for name, text in texts.items():
        if not old or name == "policy":
            columns[name] = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), [text])
    if outcome is not None:
        columns["outcome"] = pa.DictionaryArray.from_arrays(pa.array(codes), list(OUTCOMES))
    columns["won"] = pa.array(won)
    default_score = np.where(won, 52, 20 + deals % 7)
    columns["score"] = pa.array(default_score if score is None else score, pa.int8())
    columns["moves"] = pa.array(50 + deals % 11, pa.int16())
    meta = {
        "game": game,
        "rules": rules,
        "policy": policy,
        "policy_spec": policy,
        "params": params,
        "seed": seed,
        "start": int(deals.min()) if n else 0,
        "n": n,
        "n_done": n,
        "completed": True,
        "sim_version": "0.1.0",
        "started_at": "2025-01-01T00:00:00+00:00",
        "wall_time": 0.1,
        "executor": "local, 1 worker(s)",
    }
    table = pa.table(columns)
    if not old:
        table = upgrade_table(registered_games()[game], meta, table)
    table = table.replace_schema_metadata({b"sim": json.dumps(meta)})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def known_pair(folder):
    """Policy a and baseline b share deals 0..19: both won 3, only a 5, only b 2, neither 10.

    a also played deals 20..24 (all won), b deals 30..32 (all lost); a's rows are shuffled.
    """
    #  deal   0-2    3-7     8-9     10-19
    #  a      won    won     lost    lost
    #  b      won    lost    won     lost
    a_won = [True] * 8 + [False] * 12 + [True] * 5
    b_won = [True] * 3 + [False] * 5 + [True] * 2 + [False] * 10 + [False] * 3
    order = np.random.default_rng(7).permutation(25)
    a = write_result(folder / "a.parquet", "a", np.array(a_won)[order], deals=order)
    b = write_result(folder / "b.parquet", "b", b_won, deals=list(range(20)) + [30, 31, 32])
    return a, b


def test_paired_counts_of_a_known_pair_are_exact(tmp_path):
    runs = load_runs(known_pair(tmp_path))
    table = comparison(runs, "b").set_index("run")
    a = table.loc["a"]
    assert (a["paired"], a["both_won"], a["only_policy"], a["only_baseline"], a["neither"]) == (
        20,
        3,
        5,
        2,
        10,
    )
    assert a["win_rate_diff"] == pytest.approx((5 - 2) / 20)
    assert a["mcnemar_p"] == pytest.approx(stats.binomtest(5, 7, 0.5).pvalue, rel=1e-12)
    assert a["mcnemar_log10_p"] == pytest.approx(np.log10(a["mcnemar_p"]), rel=1e-12)
    assert a["diff_low"] < 0.15 < a["diff_high"]
    assert (a["deals"], a["wins"]) == (25, 13)
    assert (table.loc["b", "deals"], table.loc["b", "wins"]) == (23, 5)
    assert pd.isna(table.loc["b", "paired"]) and table.loc["b", "baseline"] == ""


def test_compare_says_how_many_deals_were_paired_when_deal_sets_differ(tmp_path):
    result = sim("compare", *known_pair(tmp_path), "--baseline", "b")
    assert result.exit_code == 0
    assert "a played 25 deals and b 23: 20 deals paired" in result.output


def test_runs_sharing_no_deal_get_no_mcnemar_p_rather_than_one(tmp_path):
    write_result(tmp_path / "a.parquet", "a", np.arange(10) % 2 == 0)
    write_result(tmp_path / "b.parquet", "b", np.arange(10) % 3 == 0, deals=np.arange(10, 20))
    runs = load_runs([tmp_path / "a.parquet", tmp_path / "b.parquet"])
    a = comparison(runs, "b").set_index("run").loc["a"]
    assert a["paired"] == 0
    assert pd.isna(a["mcnemar_p"]) and pd.isna(a["win_rate_diff"])
    result = sim(
        "compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "--baseline", "b"
    )
    assert result.exit_code == 0
    paired = result.output.split("paired with b")[1]
    row = next(line for line in paired.splitlines() if line.startswith("a "))
    assert row.split()[-3:] == ["–", "–", "–"]


def test_files_of_one_run_are_pooled_and_a_deal_played_twice_counts_once(tmp_path):
    won = np.arange(25) % 3 == 0
    write_result(tmp_path / "first.parquet", "a", won[:15], deals=range(15))
    write_result(tmp_path / "second.parquet", "a", won[10:], deals=range(10, 25))
    (run,) = load_runs([tmp_path])
    row = comparison([run]).iloc[0]
    assert (row["files"], row["deals"], row["wins"]) == (2, 25, int(won.sum()))
    result = sim("compare", tmp_path)  # the deals both hold agree: no note
    assert result.exit_code == 0 and "differ" not in result.output


def test_a_deal_whose_files_disagree_is_counted_once_with_a_note(tmp_path):
    # Two files of one run (same policy and settings) whose rows for deals 10..14
    # differ: a run's results should be the same wherever a deal was played, so the
    # difference is said, never silently dropped.
    won = np.arange(25) % 3 == 0
    changed = won.copy()
    changed[[10, 13]] = ~changed[[10, 13]]
    write_result(tmp_path / "first.parquet", "a", won[:15], deals=range(15))
    write_result(tmp_path / "second.parquet", "a", changed[10:], deals=range(10, 25))
    (run,) = load_runs([tmp_path / "first.parquet", tmp_path / "second.parquet"])
    assert (run.deals, int(run.won.sum()), run.conflicts) == (25, int(won.sum()), 2)
    result = sim("compare", tmp_path / "first.parquet", tmp_path / "second.parquet")
    assert result.exit_code == 0
    note = (
        f"note: 2 deals of a differ between its files ({tmp_path / 'first.parquet'}, "
        f"{tmp_path / 'second.parquet'}); each is counted from the first"
    )
    assert note in result.output.splitlines()
    changed[13] = won[13]  # one deal left that differs
    write_result(tmp_path / "second.parquet", "a", changed[10:], deals=range(10, 25))
    result = sim(
        "report",
        tmp_path / "first.parquet",
        tmp_path / "second.parquet",
        "--out",
        tmp_path / "r.md",
    )
    assert result.exit_code == 0
    assert "note: 1 deal of a differs between its files" in result.output


def test_same_deal_index_under_another_seed_is_another_deal(tmp_path):
    write_result(tmp_path / "s0.parquet", "a", [True, False], seed=0)
    write_result(tmp_path / "s1.parquet", "a", [True, True], seed=1)
    (run,) = load_runs([tmp_path])
    assert run.deals == 4 and int(run.won.sum()) == 3


def test_unknown_outcomes_are_neither_wins_nor_losses(tmp_path):
    solver = ["won", "won", "unknown", "lost", "won", "unknown", "lost", "lost", "capped", "won"]
    heuristic = ["won", "lost", "won", "lost", "lost", "lost", "unknown", "lost", "lost", "won"]
    write_result(tmp_path / "s.parquet", "solver", outcome=solver, game="jokers")
    write_result(tmp_path / "h.parquet", "heuristic", outcome=heuristic, game="jokers")
    runs = load_runs([tmp_path / "s.parquet", tmp_path / "h.parquet"])
    table = comparison(runs, "heuristic").set_index("run")
    s = table.loc["solver"]
    assert (s["deals"], s["decided"], s["wins"], s["win_rate"]) == (10, 8, 4, 0.5)
    assert (s["unknown_share"], s["capped_share"]) == (0.2, 0.1)
    cells = ("undecided_pairs", "both_won", "only_policy", "only_baseline", "neither")
    assert tuple(s[c] for c in cells) == (3, 2, 2, 0, 3)
    text = sim("compare", tmp_path / "s.parquet", tmp_path / "h.parquet").output
    assert "unknown" in text and "capped" in text and "decided" in text


def test_runs_of_one_policy_with_other_parameters_are_told_apart(tmp_path):
    write_result(tmp_path / "p1.parquet", "planner", [True], params={"depth": 1})
    write_result(tmp_path / "p2.parquet", "planner", [False], params={"depth": 2})
    runs = load_runs([tmp_path])
    assert [run.label for run in runs] == ["planner depth=1", "planner depth=2"]
    assert find_baseline(runs, "planner depth=2") is runs[1]
    with pytest.raises(ValueError, match="names several runs"):
        find_baseline(runs, "planner")


def test_runs_of_other_rules_are_groups_of_their_own(tmp_path):
    write_result(tmp_path / "w4.parquet", "a", [True, False])
    write_result(tmp_path / "w3.parquet", "a", [False, False], rules={"wastes": 3})
    result = sim("compare", tmp_path)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "calc · wastes=3 · 1 run, 1 file"
    assert "calc · wastes=4 · 1 run, 1 file" in lines
    assert "paired" not in result.output


def test_readable_numbers():
    assert formats.percent(0.00407) == "0.407%"
    assert formats.percent(0.4512) == "45.12%"
    assert formats.percent(0.000192) == "0.0192%"
    assert formats.points(-0.0046) == "-0.460 pp"
    assert formats.count(1_234_567) == "1,234,567"
    assert formats.number(26.6667) == "26.67" and formats.number(12345.6) == "12,346"
    assert formats.p_value(0.41234) == "0.412" and formats.p_value(4.04e-28) == "4.0e-28"
    assert formats.p_value(0.0, -1508.0016) == "1.0e-1508"
    assert formats.p_value(0.0, -5773.8207) == "1.5e-5774"
    assert formats.p_value(0.0) == "<1e-300"
    assert formats.span(0.00395, 0.0042, formats.percent) == "0.395 – 0.420%"


def expected_table(tmp_path):
    runs = load_runs(known_pair(tmp_path))
    return comparison(runs, "b")


def assert_same_values(read, expected):
    read = read.reindex(columns=expected.columns)
    for column in expected.columns:
        want, got = expected[column], read[column]
        if pd.api.types.is_numeric_dtype(want):
            assert np.allclose(got.astype(float), want.astype(float), rtol=1e-12, equal_nan=True)
        else:
            assert [_text(x) for x in got] == [_text(x) for x in want]


def _text(value):
    return "" if pd.isna(value) else str(value)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_each_machine_format_round_trips(tmp_path, fmt):
    expected = expected_table(tmp_path)
    out = tmp_path / f"comparison.{fmt}"
    result = sim("compare", tmp_path / "a.parquet", tmp_path / "b.parquet", "--baseline", "b",
                 "--format", fmt, "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    if fmt == "csv":
        read = pd.read_csv(out, keep_default_na=False, na_values=[""])
    elif fmt == "parquet":
        read = pd.read_parquet(out)
        about = json.loads(pq.read_metadata(out).metadata[formats.ABOUT_KEY])
        assert about["baseline"] == "b" and "Newcombe" in about["difference_interval"]
    else:
        document = json.loads(out.read_text())
        read = pd.DataFrame(document["runs"])
        assert document["about"]["baseline"] == "b"
    assert_same_values(read, expected)


def test_format_follows_the_output_suffix(tmp_path):
    known_pair(tmp_path)
    out = tmp_path / "comparison.md"
    result = sim("compare", tmp_path / "a.parquet", tmp_path / "b.parquet", "--out", out)
    assert result.exit_code == 0
    text = out.read_text()
    assert text.startswith("## calc · wastes=4 · 2 runs, 2 files\n") and "| run |" in text


def test_table_is_aligned_and_names_its_methods(tmp_path):
    result = sim("compare", *known_pair(tmp_path), "--baseline", "b")
    lines = result.output.splitlines()
    header = next(line for line in lines if line.startswith("run "))
    assert "win rate" in header and "95% CI" in header and "mean score" in header
    assert any(line.startswith("a ") and "+15.00 pp" in line for line in lines)
    assert "Newcombe" in result.output and "McNemar" in result.output


def test_existing_output_is_kept_without_overwrite(tmp_path):
    a, b = known_pair(tmp_path)
    out = tmp_path / "c.csv"
    out.write_text("mine")
    result = sim("compare", a, b, "--out", out)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {out} exists; use --overwrite to replace it"
    assert out.read_text() == "mine"
    assert sim("compare", a, b, "--out", out, "--overwrite").exit_code == 0
    assert out.read_text().startswith("run,game,rules,policy,params,setting,code,files,deals")


def bad_inputs(tmp_path):
    """(arguments, the one error line) for each kind of bad input."""
    (tmp_path / "good").mkdir()
    a, _ = known_pair(tmp_path / "good")
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), plain)
    text = tmp_path / "notes.parquet"
    text.write_text("not parquet at all\n")
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(a.read_bytes()[: a.stat().st_size // 2])
    corrupt = tmp_path / "corrupt.parquet"
    data = bytearray(a.read_bytes())
    data[4:400] = bytes(396)
    corrupt.write_bytes(bytes(data))
    empty = tmp_path / "empty"
    (empty / "calc").mkdir(parents=True)
    (empty / "calc" / ".hidden.parquet").write_bytes(a.read_bytes())
    other_game = write_result(tmp_path / "j.parquet", "j", outcome=["won"], game="jokers")

    def arrow_message(path):
        try:
            pq.read_metadata(path)
        except pa.ArrowInvalid as error:
            return str(error)

    missing = tmp_path / "missing.parquet"
    return [
        ([missing], f"Error: {missing}: no such file or folder"),
        ([plain], f"Error: {plain}: a Parquet file, but not a sim result file"),
        ([text], f"Error: {text}: not a readable Parquet file ({arrow_message(text)})"),
        (
            [truncated],
            f"Error: {truncated}: not a readable Parquet file ({arrow_message(truncated)})",
        ),
        ([empty], f"Error: {empty}: no result files (*.parquet) in this folder or below"),
        ([a, "--baseline", "c"], "Error: baseline 'c' is not among the runs (a)"),
        ([a, other_game, "--baseline", "c"], "Error: baseline 'c' is not among the runs (a, j)"),
        ([corrupt], None),
    ]


def test_every_bad_input_is_one_error_line_and_nothing_is_written(tmp_path):
    for args, line in bad_inputs(tmp_path):
        out = tmp_path / "out.csv"
        result = sim("compare", *args, "--out", out)
        assert result.exit_code == 1, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output
        if line is None:
            assert result.output.startswith(f"Error: {args[0]}: corrupt Parquet file (")
        else:
            assert result.output.strip() == line
        assert not out.exists()
        assert not list(tmp_path.glob(".*.tmp"))


def test_no_files_at_all_is_a_usage_error():
    result = sim("compare")
    assert result.exit_code == 2
    assert result.output.strip() == "Error: Missing argument 'PATH...'."


def test_parquet_needs_an_output_file(tmp_path):
    a, _ = known_pair(tmp_path)
    result = sim("compare", a, "--format", "parquet")
    assert result.exit_code == 2
    assert result.output.strip() == "Error: --format parquet needs --out FILE"


def mixed_folder(root):
    """A results folder of three games, one subfolder each: calc under two rules (one in a
    deeper folder), one policy with two settings, a run in two overlapping files, and a
    Montana run whose second file is of the old layout; a hidden folder that is skipped."""
    calc, jokers, montana = root / "calc", root / "jokers", root / "montana"
    deals = np.arange(40)
    write_result(calc / "greedy.parquet", "greedy", deals % 4 == 0)
    write_result(calc / "planner-a.parquet", "planner", deals[:25] % 2 == 0, deals=deals[:25],
                 params={"depth": 1})  # fmt: skip
    write_result(calc / "planner-b.parquet", "planner", deals[20:] % 2 == 0, deals=deals[20:],
                 params={"depth": 1})  # fmt: skip
    write_result(calc / "planner-deep.parquet", "planner", deals % 5 == 0, params={"depth": 2})
    write_result(calc / "w3" / "greedy.parquet", "greedy", deals % 10 == 0, rules={"wastes": 3})
    solver = ["won", "won", "unknown", "lost"] * 10
    write_result(jokers / "solver.parquet", "solver", outcome=solver, game="jokers")
    write_result(jokers / "greedy.parquet", "greedy", outcome=["won", "lost", "lost", "lost"] * 10,
                 game="jokers")  # fmt: skip
    rules = {"redeals": 2, "max_moves": 5000}
    write_result(montana / "first-1.parquet", "first", deals[:20] % 3 == 0, deals=deals[:20],
                 game="montana", rules=rules)  # fmt: skip
    write_result(montana / "first-2.parquet", "first", deals[20:] % 3 == 0, deals=deals[20:],
                 game="montana", rules=rules, old=True)  # fmt: skip
    write_result(montana / "greedy.parquet", "greedy", deals % 2 == 0, game="montana", rules=rules)
    write_result(root / ".trash" / "copy.parquet", "greedy", deals >= 0)
    return root


MIXED_GROUPS = [
    "calc · wastes=4 · 3 runs, 4 files",
    "calc · wastes=3 · 1 run, 1 file",
    "jokers · max_moves=1000 · 2 runs, 2 files",
    "montana · redeals=2 max_moves=5000 · 2 runs, 3 files",
]


def test_a_folder_of_several_games_rules_and_parameters_is_compared_group_by_group(tmp_path):
    result = sim("compare", mixed_folder(tmp_path / "results"))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert [line for line in text.splitlines() if " · " in line] == MIXED_GROUPS
    # every group of several runs is paired with its own first run
    assert [line for line in text.splitlines() if line.startswith("paired with")] == [
        "paired with greedy",  # calc, wastes=4
        "paired with greedy",  # jokers
        "paired with first",  # montana
    ]
    lines = text.splitlines()
    depth1 = next(line for line in lines if line.startswith("planner depth=1  "))
    assert depth1.split()[2:5] == ["2", "40", "20"]  # files, deals (overlap counted once), wins
    assert next(line for line in lines if line.startswith("planner depth=1  ") and "pp" in line)
    note = result.stderr.strip()
    assert note == (
        f"note: {tmp_path / 'results' / 'montana' / 'first-2.parquet'} is of an earlier layout, "
        "without a setting column; its setting was read from its run description (sim export "
        "OLD --to parquet --out NEW converts it)"
    )


def test_groups_figures_and_pairs_of_a_mixed_folder_are_exact(tmp_path):
    runs = load_runs([mixed_folder(tmp_path)])
    table = comparison(runs, "greedy")
    rows = {(r.game, r.rules, r.run): r for r in table.itertuples()}
    assert list(rows) == [
        ("calc", "wastes=4", "greedy"),
        ("calc", "wastes=4", "planner depth=1"),
        ("calc", "wastes=4", "planner depth=2"),
        ("calc", "wastes=3", "greedy"),
        ("jokers", "max_moves=1000", "greedy"),
        ("jokers", "max_moves=1000", "solver"),
        ("montana", "redeals=2 max_moves=5000", "first"),
        ("montana", "redeals=2 max_moves=5000", "greedy"),
    ]
    planner = rows["calc", "wastes=4", "planner depth=1"]
    assert (planner.files, planner.deals, planner.wins, planner.params) == (2, 40, 20, "depth=1")
    cells = ("paired", "both_won", "only_policy", "only_baseline", "neither")
    assert tuple(getattr(planner, c) for c in cells) == (40, 10, 10, 0, 20)
    assert rows["calc", "wastes=3", "greedy"].baseline == ""  # alone in its group
    first = rows["montana", "redeals=2 max_moves=5000", "first"]
    assert (first.files, first.deals, first.wins) == (2, 40, 14)  # an old file pooled in
    assert (first.baseline, first.both_won, first.only_policy, first.only_baseline) == (
        "greedy", 7, 7, 13)  # fmt: skip
    solver = rows["jokers", "max_moves=1000", "solver"]
    assert (solver.decided, solver.wins, solver.both_won, solver.only_policy) == (30, 20, 10, 10)
    assert table.attrs["groups"][3] == {
        "game": "montana", "rules": "redeals=2 max_moves=5000", "runs": 2, "files": 3
    }  # fmt: skip


def test_a_baseline_missing_from_a_group_leaves_that_group_unpaired(tmp_path):
    result = sim("compare", mixed_folder(tmp_path), "--baseline", "solver")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("not paired: no run here is the baseline 'solver'") == 2
    assert "paired with solver" in result.stdout
    ambiguous = sim("compare", tmp_path, "--baseline", "planner")
    assert ambiguous.output.strip() == (
        "Error: baseline 'planner' names several runs; pick one of 'planner depth=1', "
        "'planner depth=2'"
    )
    chosen = sim("compare", tmp_path, "--baseline", "planner depth=2")
    assert "paired with planner depth=2" in chosen.stdout


def test_a_baseline_may_name_a_policy_and_some_of_its_parameters(tmp_path):
    deals = np.arange(30)
    for depth in (1, 2):
        write_result(tmp_path / f"planner-{depth}.parquet", "planner", deals % (depth + 2) == 0,
                     params={"depth": float(depth), "width": 8})  # fmt: skip
    write_result(tmp_path / "greedy.parquet", "greedy", deals % 5 == 0)
    for name in ("planner depth=2", "planner depth=2.0", "planner width=8 depth=2e0"):
        chosen = sim("compare", tmp_path, "--baseline", name)
        assert chosen.exit_code == 0, chosen.output
        assert "paired with planner depth=2.0 width=8" in chosen.stdout.splitlines()
    several = sim("compare", tmp_path, "--baseline", "planner width=8")
    assert several.output.strip() == (
        "Error: baseline 'planner width=8' names several runs; pick one of "
        "'planner depth=1.0 width=8', 'planner depth=2.0 width=8'"
    )
    for name in ("planner depth=3", "planner depth", "greedy depth=2"):
        none = sim("compare", tmp_path, "--baseline", name)
        assert none.exit_code == 1
        assert none.output.strip() == (
            f"Error: baseline {name!r} is not among the runs (greedy, "
            "planner depth=1.0 width=8, planner depth=2.0 width=8)"
        )


@pytest.mark.parametrize(
    "name, twice",
    [("planner depth=2 depth=1", "depth"), ("planner depth=2 width=8 depth=2", "depth")],
)
def test_a_baseline_that_gives_a_parameter_twice_is_refused(tmp_path, name, twice):
    deals = np.arange(30)
    for depth in (1, 2):
        write_result(tmp_path / f"planner-{depth}.parquet", "planner", deals % (depth + 2) == 0,
                     params={"depth": float(depth), "width": 8})  # fmt: skip
    result = sim("compare", tmp_path, "--baseline", name)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: baseline {name!r} gives {twice} twice; give it one value"
    )


def test_a_file_whose_rows_name_several_runs_is_split_between_them(tmp_path):
    one = pq.read_table(write_result(tmp_path / "x" / "a.parquet", "a", [True, False, True]))
    two = pq.read_table(write_result(tmp_path / "x" / "b.parquet", "b", [False, False, True]))
    both = pa.concat_tables([one, two]).replace_schema_metadata(one.schema.metadata)
    pq.write_table(both, tmp_path / "both.parquet")
    runs = load_runs([tmp_path / "both.parquet"])
    assert [(run.label, run.deals, int(run.won.sum())) for run in runs] == [
        ("a", 3, 2),
        ("b", 3, 1),
    ]
    separate = comparison(load_runs([tmp_path / "x"]))
    files = ["files", "group_files"]  # one file here, two there
    assert_same_values(comparison(runs).drop(columns=files), separate.drop(columns=files))


def test_an_old_file_is_read_as_its_current_layout_copy(tmp_path):
    won = np.arange(30) % 3 == 0
    old = write_result(tmp_path / "old" / "a.parquet", "a", won, params={"c": 0.5}, old=True)
    new = write_result(tmp_path / "new" / "a.parquet", "a", won, params={"c": 0.5})
    assert "game" not in pq.read_schema(old).names
    from_old, from_new = comparison(load_runs([old])), comparison(load_runs([new]))
    assert_same_values(from_old, from_new)
    assert from_old.loc[0, "params"] == "c=0.5"
    (pooled,) = load_runs([old, new])
    assert (len(pooled.files), pooled.deals, pooled.old_files) == (2, 30, [old])


def lopsided_pair(folder):
    """Over 20,000 deals, only a wins 13,956 and only b 3,375: p is about 1e-1508."""
    n = 20_000
    a_won = np.arange(n) < 13_956
    b_won = (np.arange(n) >= 13_956) & (np.arange(n) < 13_956 + 3_375)
    return (write_result(folder / "a.parquet", "a", a_won),
            write_result(folder / "b.parquet", "b", b_won))  # fmt: skip


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_machine_formats_keep_a_p_value_below_the_smallest_float(tmp_path, fmt):
    a, b = lopsided_pair(tmp_path)
    out = tmp_path / f"c.{fmt}"
    assert sim("compare", a, b, "--baseline", "b", "--out", out).exit_code == 0
    if fmt == "csv":
        read = pd.read_csv(out)
    elif fmt == "parquet":
        read = pd.read_parquet(out)
    else:
        read = pd.DataFrame(json.loads(out.read_text())["runs"])
    row = read.set_index("run").loc["a"]
    assert row["mcnemar_p"] == 0.0  # what a float can hold
    assert row["mcnemar_log10_p"] == pytest.approx(-1508.00159262625, rel=1e-12)
    table = sim("compare", a, b, "--baseline", "b").stdout
    paired_line = [line for line in table.splitlines() if line.startswith("a ")][-1]
    assert paired_line.endswith("  1.0e-1508")


def test_a_table_written_into_the_folder_is_left_out_of_its_next_scan_with_a_note(tmp_path):
    folder = tmp_path / "results"
    for policy in ("greedy", "planner"):
        out = folder / f"{policy}.parquet"
        assert sim("calc", "-p", policy, "-n", 200, "-q", "--out", out).exit_code == 0
    summary = folder / "summary.parquet"  # a table another tool wrote there
    assert sim("compare", folder, "--out", tmp_path / "summary.parquet").exit_code == 0
    (tmp_path / "summary.parquet").rename(summary)
    result = sim("compare", folder)
    assert result.exit_code == 0, result.output
    assert result.stderr == f"note: {summary} is not a sim result file; left out\n"
    assert result.stdout.startswith("calc · wastes=4 · 2 runs, 2 files\n")
    result = sim("compare", summary)
    assert result.exit_code == 1


def test_win_rates_among_winnable_deals_are_against_the_exact_runs_wins(tmp_path):
    #  deal       0     1     2        3     4     5     6        7
    #  oracle     won   won   won      won   lost  lost  unknown  won
    #  greedy     won   lost  unknown  won   lost  won   won      (not played)
    oracle = ["won", "won", "won", "won", "lost", "lost", "unknown", "won"]
    greedy = ["won", "lost", "unknown", "won", "lost", "won", "won"]
    write_result(tmp_path / "o.parquet", "oracle", outcome=oracle)
    write_result(tmp_path / "g.parquet", "greedy", outcome=greedy)
    table = comparison(load_runs([tmp_path / "o.parquet", tmp_path / "g.parquet"]))
    g = table.set_index("run").loc["greedy"]
    # winnable and played and decided by greedy: deals 0, 1, 3; greedy won 0 and 3
    assert (g["bound"], g["winnable"], g["winnable_wins"]) == ("oracle", 3, 2)
    assert g["winnable_win_rate"] == pytest.approx(2 / 3)
    assert g["winnable_low"] < 2 / 3 < g["winnable_high"]
    text = sim("compare", tmp_path / "o.parquet", tmp_path / "g.parquet").output
    assert "won of winnable" in text and "winnable: the deals won by oracle" in text


def test_a_deal_any_exact_run_won_is_winnable(tmp_path):
    # An oracle run with no exact stage (exact=0) leaves deals unknown; another, given
    # the work, wins them. Neither hides the other's wins.
    #  deal        0        1        2     3
    #  exact=0     won      unknown  won   unknown
    #  exact=60    unknown  won      won   unknown
    #  greedy      won      won      lost  won
    write_result(tmp_path / "idle.parquet", "oracle", outcome=["won", "unknown", "won", "unknown"],
                 params={"nodes": 1000, "exact": 0.0})  # fmt: skip
    write_result(tmp_path / "full.parquet", "oracle", outcome=["unknown", "won", "won", "unknown"],
                 params={"nodes": 1000, "exact": 60.0})  # fmt: skip
    write_result(tmp_path / "g.parquet", "greedy", outcome=["won", "won", "lost", "won"])
    table = comparison(load_runs([tmp_path])).set_index("run")
    # winnable: deals 0, 1 and 2; each oracle run decided two of them, greedy all three
    assert sorted(table["winnable"]) == [2, 2, 3] and table.loc["greedy", "winnable"] == 3
    assert table.loc["greedy", "winnable_wins"] == 2
    text = sim("compare", tmp_path).output
    assert "exact within their budgets (a deal left unknown is not counted)" in text
    assert " or " in table.loc["greedy", "bound"]


def test_only_an_exact_policy_under_its_rules_makes_deals_winnable(tmp_path):
    # The Montana solver is exact only without redeals: a redeal's shuffle is unknown.
    for redeals in (0, 2):
        rules = {"redeals": redeals, "max_moves": 5000}
        for name, won in (("solver", [True, False]), ("greedy", [False, False])):
            path = tmp_path / f"{redeals}" / f"{name}.parquet"
            write_result(path, name, won, game="montana", rules=rules)
    table = comparison(load_runs([tmp_path]))
    exact = table[table["rules"] == "redeals=0 max_moves=5000"]
    assert list(exact["winnable"]) == [1, 1] and list(exact["bound"]) == ["solver"] * 2
    chance = table[table["rules"] == "redeals=2 max_moves=5000"]
    assert chance["winnable"].isna().all()
    plain = comparison(load_runs(known_pair(tmp_path / "plain")))
    assert "winnable" not in plain


def test_a_plug_in_named_like_an_exact_policy_does_not_make_deals_winnable(tmp_path):
    path = write_result(tmp_path / "o.parquet", "oracle", [True, False])
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"sim"])
    meta["policy_spec"] = "mine.py:oracle"
    pq.write_table(table.replace_schema_metadata({b"sim": json.dumps(meta)}), path)
    write_result(tmp_path / "g.parquet", "greedy", [True, True])
    assert "winnable" not in comparison(load_runs([tmp_path]))
