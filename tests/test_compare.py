"""`sim compare` on crafted result files whose counts are known, its formats and its errors."""

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

OUTCOMES = ("lost", "won", "capped", "unknown")


def write_result(path, policy, won=None, *, deals=None, outcome=None, game="calc", rules=None,
                 params=None, seed=0, score=None):  # fmt: skip
    """A result file as the runner writes it, with chosen outcomes per deal."""
    if outcome is not None:
        codes = np.array([OUTCOMES.index(x) for x in outcome], np.int8)
        won = codes == OUTCOMES.index("won")
    won = np.asarray(won, bool)
    n = len(won)
    deals = np.arange(n) if deals is None else np.asarray(deals)
    columns = {
        "seed": pa.array(np.full(n, seed, np.int64)),
        "deal": pa.array(deals, pa.int64()),
        "policy": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), [policy]),
    }
    if outcome is not None:
        columns["outcome"] = pa.DictionaryArray.from_arrays(pa.array(codes), list(OUTCOMES))
    columns["won"] = pa.array(won)
    default_score = np.where(won, 52, 20 + deals % 7)
    columns["score"] = pa.array(default_score if score is None else score, pa.int8())
    columns["moves"] = pa.array(50 + deals % 11, pa.int16())
    meta = {
        "game": game,
        "rules": rules or ({"wastes": 4} if game == "calc" else {"max_moves": 1000}),
        "policy": policy,
        "policy_spec": policy,
        "params": params or {},
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
    table = pa.table(columns).replace_schema_metadata({b"sim": json.dumps(meta)})
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
    table = comparison(runs, find_baseline(runs, "b")).set_index("run")
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
    assert a["diff_low"] < 0.15 < a["diff_high"]
    assert (a["deals"], a["wins"]) == (25, 13)
    assert (table.loc["b", "deals"], table.loc["b", "wins"]) == (23, 5)
    assert pd.isna(table.loc["b", "paired"])


def test_compare_says_how_many_deals_were_paired_when_deal_sets_differ(tmp_path):
    result = sim("compare", *known_pair(tmp_path), "--baseline", "b")
    assert result.exit_code == 0
    assert "a played 25 deals and b 23: 20 deals paired" in result.output


def test_files_of_one_run_are_pooled_and_a_deal_played_twice_counts_once(tmp_path):
    won = np.arange(25) % 3 == 0
    write_result(tmp_path / "first.parquet", "a", won[:15], deals=range(15))
    write_result(tmp_path / "second.parquet", "a", won[10:], deals=range(10, 25))
    (run,) = load_runs([tmp_path])
    row = comparison([run]).iloc[0]
    assert (row["files"], row["deals"], row["wins"]) == (2, 25, int(won.sum()))


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
    table = comparison(runs, find_baseline(runs, "heuristic")).set_index("run")
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


def test_runs_of_other_rules_get_their_own_rows(tmp_path):
    write_result(tmp_path / "w4.parquet", "a", [True, False])
    write_result(tmp_path / "w3.parquet", "a", [False, False], rules={"wastes": 3})
    result = sim("compare", tmp_path)
    assert result.exit_code == 0
    assert "rules differ between runs" in result.output
    assert "a wastes=3" in result.output and "a wastes=4" in result.output


def test_readable_numbers():
    assert formats.percent(0.00407) == "0.407%"
    assert formats.percent(0.4512) == "45.12%"
    assert formats.percent(0.000192) == "0.0192%"
    assert formats.points(-0.0046) == "-0.460 pp"
    assert formats.count(1_234_567) == "1,234,567"
    assert formats.number(26.6667) == "26.67" and formats.number(12345.6) == "12,346"
    assert formats.p_value(0.41234) == "0.412" and formats.p_value(4.04e-28) == "4.0e-28"
    assert formats.span(0.00395, 0.0042, formats.percent) == "0.395 – 0.420%"


def expected_table(tmp_path):
    runs = load_runs(known_pair(tmp_path))
    return comparison(runs, find_baseline(runs, "b"))


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
    assert text.startswith("## calc · wastes=4") and "| run |" in text


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
    assert out.read_text().startswith("run,game,policy")


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
    empty.mkdir()
    other_game = write_result(tmp_path / "j.parquet", "j", outcome=["won"], game="jokers")
    other_rules = write_result(tmp_path / "w3.parquet", "c", [True], rules={"wastes": 3})

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
        ([empty], f"Error: {empty}: no result files (*.parquet) in this folder"),
        ([a, "--baseline", "c"], "Error: baseline 'c' is not among the runs (a)"),
        ([a, other_game], f"Error: files of different games: {a} is calc, {other_game} is jokers"),
        (
            [a, other_rules, "--baseline", "a"],
            "Error: cannot pair runs of different rules: a played wastes=4, c wastes=3",
        ),
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
    assert result.exit_code == 1
    assert result.output.strip() == "Error: --format parquet needs --out FILE"
