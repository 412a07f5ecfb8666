"""Result files as analysis inputs, as other writers leave them: text columns coded or
plain, columns of another type or with nulls, read by sim compare and sim report."""

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import sim
from test_compare import write_result

from sim.engine.analysis.compare import comparison
from sim.engine.analysis.inputs import load_runs

OUTCOME = ["won", "lost", "unknown", "lost", "won", "lost"]


def rewritten(source, path, **columns):
    """A copy of a result file, some columns replaced or added (a name -> an Arrow array),
    its run description kept."""
    table = pq.read_table(source)
    for name, values in columns.items():
        if name in table.column_names:
            table = table.drop_columns(name)
        table = table.append_column(name, values)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(pq.read_schema(source).metadata), path)
    return path


def plain_text(source, path):
    """The file as a writer that does not code text leaves it: every text column plain."""
    table = pq.read_table(source)
    texts = ("game", "rules", "policy", "params", "outcome")
    return rewritten(source, path, **{name: table[name].cast(pa.string()) for name in texts})


def figures(paths):
    table = comparison(load_runs(paths))
    return table.drop(columns=["files", "group_files"]).to_dict("records")


def test_text_columns_coded_in_one_file_and_plain_in_another_pool(tmp_path):
    coded = write_result(tmp_path / "a.parquet", "a", outcome=OUTCOME)
    plain = plain_text(coded, tmp_path / "plain" / "a.parquet")
    assert pq.read_schema(plain).field("outcome").type == pa.string()
    result = sim("compare", plain, coded)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2].split()[:5] == ["a", "2", "6", "5", "2"]
    assert figures([plain, coded]) == figures([coded])
    reported = sim("report", plain, coded, "--out", tmp_path / "r.html")
    assert reported.exit_code == 0, reported.output


def test_files_rewritten_by_pandas_and_polars_pool_with_sims(tmp_path):
    coded = write_result(tmp_path / "a.parquet", "a", outcome=OUTCOME)
    maps = ["param", "rule", "stats"]  # pandas gives (key, value) lists, and takes them back typed
    frame = pd.read_parquet(coded).drop(columns=maps)
    texts = ["setting", "game", "rules", "policy", "params", "code", "outcome"]
    by_pandas = pa.Table.from_pandas(frame.astype(dict.fromkeys(texts, str)), preserve_index=False)
    for name in maps:
        by_pandas = by_pandas.append_column(name, pq.read_table(coded)[name])
    assert not pa.types.is_dictionary(by_pandas.schema.field("outcome").type)
    by_polars = pl.read_parquet(coded).to_arrow()
    assert pa.types.is_large_string(by_polars.schema.field("outcome").type.value_type)
    copies = []
    for name, table in (("pandas", by_pandas), ("polars", by_polars)):
        copies.append(tmp_path / name / "a.parquet")
        copies[-1].parent.mkdir()
        pq.write_table(table.replace_schema_metadata(pq.read_schema(coded).metadata), copies[-1])
    assert figures([*copies, coded]) == figures([coded])
    assert sim("compare", tmp_path).exit_code == 0


def bad_columns(tmp_path):
    """(a file with one bad column, the one error line about it)."""
    good = write_result(tmp_path / "good.parquet", "a", outcome=OUTCOME)
    n = len(OUTCOME)
    cases = [
        ("deal", pa.array([None, *range(1, n)], pa.int64()), "holds nulls"),
        ("deal", pa.array([str(i) for i in range(n)]), "has type string, expected an integer"),
        ("deal", pa.array([float(i) for i in range(n)]), "has type double, expected an integer"),
        ("seed", pa.array([None] * n, pa.int64()), "holds nulls"),
        ("score", pa.array(["x"] * n), "has type string, expected an integer"),
        ("moves", pa.array([1, None, 3, 4, 5, 6], pa.int32()), "holds nulls"),
        ("won", pa.array([1, 0, 0, 0, 1, 0], pa.int8()), "has type int8, expected true or false"),
        ("outcome", pa.array([None, *OUTCOME[1:]]), "holds nulls"),
        ("outcome", pa.array(range(n), pa.int8()), "has type int8, expected text"),
        ("policy", pa.array([None] * n, pa.string()), "holds nulls"),
        ("deal", pa.array([2**64 - 1] * n, pa.uint64()), "holds too large values"),
    ]
    return [
        (
            rewritten(good, tmp_path / f"bad-{i}.parquet", **{name: values}),
            f"column {name} {message}",
        )
        for i, (name, values, message) in enumerate(cases)
    ]


@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_column_of_another_type_or_with_nulls_is_one_error_line(tmp_path, command):
    for path, message in bad_columns(tmp_path):
        out = tmp_path / ("out.csv" if command == "compare" else "r.md")
        result = sim(command, path, "--out", out)
        assert result.exit_code == 1, (path, result.output)
        assert result.output.strip() == f"Error: {path}: {message}"
        assert not out.exists()


def test_a_game_column_that_a_mean_is_taken_of_is_checked_too(tmp_path):
    good = write_result(tmp_path / "j.parquet", "greedy", outcome=OUTCOME, game="jokers")
    bad = rewritten(good, tmp_path / "bad.parquet", nodes=pa.array(["1"] * len(OUTCOME)))
    result = sim("compare", bad)
    assert result.output.strip() == (
        f"Error: {bad}: column nodes has type string, expected an integer"
    )


@pytest.mark.parametrize("target", ["csv", "parquet"])
def test_export_refuses_a_column_of_another_type_or_with_nulls(tmp_path, target):
    for path, message in bad_columns(tmp_path):
        if "too large" in message:
            continue  # an unsigned integer is an integer: a copy keeps it as it is
        out = tmp_path / f"out.{target}"
        result = sim("export", path, "--to", target, "--out", out)
        assert result.exit_code == 1, (path, result.output)
        assert result.output.strip() == f"Error: {path}: {message}"
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(("out", ".out"))]


def test_a_file_with_a_negative_deal_is_named(tmp_path):
    good = write_result(tmp_path / "g.parquet", "greedy", outcome=OUTCOME)
    deals = pa.array([-1] + list(range(1, len(OUTCOME))), pa.int64())
    bad = rewritten(good, tmp_path / "bad.parquet", deal=deals)
    result = sim("compare", good, bad)
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {bad}: deal indices below 0 (a deal is never negative)\n",
    )
