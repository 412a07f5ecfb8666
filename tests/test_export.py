"""`sim export`: a result file to CSV or Parquet, values and description kept."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import sim
from test_compare import bad_inputs, write_result


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A real result file of a few hundred calc deals."""
    path = tmp_path_factory.mktemp("played") / "greedy.parquet"
    result = sim("calc", "-n", "300", "--seed", "5", "--workers", "1", "--out", path, "-q")
    assert result.exit_code == 0, result.output
    return path


def meta(path):
    return json.loads(pq.read_metadata(path).metadata[b"sim"])


def test_csv_export_round_trips_values_and_description(played, tmp_path):
    out = tmp_path / "deals.csv"
    result = sim("export", played, "--to", "csv", "--out", out)
    assert result.exit_code == 0, result.output
    original = flat_columns(pd.read_parquet(played))
    read = pd.read_csv(out, keep_default_na=False)  # an empty `params` stays ""
    assert list(read.columns) == list(original.columns)
    assert "rule.wastes" in read.columns and "max_waste_height" in read.columns
    for column in original.columns:
        text = isinstance(original[column].dtype, pd.CategoricalDtype)
        expected = original[column].astype(str if text else original[column].dtype)
        assert read[column].astype(expected.dtype).tolist() == expected.tolist()
    assert json.loads((tmp_path / "deals.csv.json").read_text()) == meta(played)


def flat_columns(frame):
    """A result frame with its maps as CSV spreads them: `param.KEY` and `rule.KEY` where
    the map was, the game's figures (`stats`) last under their own names."""
    for name in ("param", "rule", "stats"):
        values = pd.DataFrame([dict(pairs) for pairs in frame[name]], index=frame.index)
        if name != "stats":
            values = values.add_prefix(f"{name}.")
        at = frame.columns.get_loc(name)
        frame = frame.drop(columns=name)
        if name == "stats":
            frame = pd.concat([frame, values], axis=1)
        else:
            frame = pd.concat([frame.iloc[:, :at], values, frame.iloc[:, at:]], axis=1)
    return frame


def test_coded_columns_are_written_as_labels(tmp_path):
    source = write_result(tmp_path / "j.parquet", "solver", outcome=["won", "unknown", "capped"],
                          game="jokers")  # fmt: skip
    assert sim("export", source, "--to", "csv", "--out", tmp_path / "j.csv").exit_code == 0
    read = pd.read_csv(tmp_path / "j.csv")
    assert read["outcome"].tolist() == ["won", "unknown", "capped"]
    assert read["won"].tolist() == [True, False, False]


def test_parquet_export_round_trips_values_and_description(played, tmp_path):
    out = tmp_path / "copy.parquet"
    assert sim("export", played, "--to", "parquet", "--out", out).exit_code == 0
    assert pq.read_table(out).equals(pq.read_table(played))
    assert meta(out) == meta(played)
    assert sim("compare", out).exit_code == 0


NEEDS_OUT = (
    "Error: export needs --out FILE, outside the results folder "
    "(a copy beside its input would be read again by scans of that folder)"
)


@pytest.mark.parametrize("target", ["csv", "parquet"])
def test_an_export_without_out_is_refused_in_one_line(played, tmp_path, target):
    source = tmp_path / played.name
    source.write_bytes(played.read_bytes())
    result = sim("export", source, "--to", target)
    assert result.exit_code == 2
    assert result.output == NEEDS_OUT + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["greedy.parquet"]


def test_export_never_replaces_its_input(played):
    result = sim("export", played, "--to", "parquet", "--out", played, "--overwrite")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {played}: the output would replace the input; choose another --out"
    )


def test_export_never_replaces_its_input_with_the_description_beside_a_csv(played, tmp_path):
    # --out y writes y and its description y.json: an input named y.json stays.
    source = tmp_path / "y.json"
    source.write_bytes(played.read_bytes())
    result = sim("export", source, "--to", "csv", "--out", tmp_path / "y", "--overwrite")
    assert (result.exit_code, result.output.strip()) == (
        1,
        f"Error: {source}: the output would replace the input; choose another --out",
    )
    assert source.read_bytes() == played.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.json"]


@pytest.mark.parametrize("existing", ["deals.csv", "deals.csv.json"])
def test_existing_output_is_refused_without_overwrite(played, tmp_path, existing):
    (tmp_path / existing).write_text("mine")
    out = tmp_path / "deals.csv"
    result = sim("export", played, "--to", "csv", "--out", out)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {tmp_path / existing} exists; use --overwrite to replace it"
    )
    assert (tmp_path / existing).read_text() == "mine"
    assert sim("export", played, "--to", "csv", "--out", out, "--overwrite").exit_code == 0
    assert (tmp_path / "deals.csv").read_text().startswith('"seed","deal"')
    assert not list(tmp_path.glob(".*.tmp"))


def test_bad_inputs_export_nothing(tmp_path):
    for args, line in bad_inputs(tmp_path):
        if len(args) > 1 or args[0].is_dir():
            continue
        out = tmp_path / "out.csv"
        result = sim("export", args[0], "--to", "csv", "--out", out)
        assert result.exit_code == 1, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1
        if line is None:  # a file that cannot be read: named, with what is wrong
            assert result.output.startswith(f"Error: {args[0]}: ")
        else:
            assert result.output.strip() == line
        assert not out.exists() and not (tmp_path / "out.csv.json").exists()
        assert not list(tmp_path.glob(".*.tmp"))


def test_a_folder_exports_one_row_per_setting_and_deal(tmp_path):
    """Two runs of one setting that overlap, beside another setting: the export of the
    folder holds each (setting, seed, deal) once, as compare counts it."""
    folder = tmp_path / "results"
    for n in (120, 80):
        out = folder / f"greedy-{n}.parquet"
        assert sim("calc", "-n", n, "--seed", 4, "--workers", 1, "-q", "--out", out).exit_code == 0
    other = folder / "planner.parquet"
    assert sim("calc", "-p", "planner", "-n", 50, "--seed", 4, "--workers", 1, "-q",
               "--out", other).exit_code == 0  # fmt: skip
    out = tmp_path / "all.csv"
    result = sim("export", folder, "--to", "csv", "--out", out)
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(out, keep_default_na=False)
    assert rows.groupby("policy").size().to_dict() == {"greedy": 120, "planner": 50}
    assert not rows.duplicated(["setting", "seed", "deal"]).any()
    described = json.loads((tmp_path / "all.csv.json").read_text())
    assert sorted(d["policy"] for d in described["settings"].values()) == ["greedy", "planner"]


def test_csv_rows_are_plain_values_with_labels_and_lowercase_booleans(tmp_path):
    source = write_result(tmp_path / "s.parquet", "a", np.array([True, False]))
    out = tmp_path / "s.csv"
    assert sim("export", source, "--to", "csv", "--out", out).exit_code == 0
    header, row = out.read_text().splitlines()[:2]
    assert header == ('"seed","deal","setting","game","rules","policy","params","code",'
                      '"rule.wastes","outcome","won","score","moves"')  # fmt: skip
    assert row.split(",")[3:] == ['"calc"', '"wastes=4"', '"a"', '""', '""', "4", '"won"',
                                  "true", "52", "50"]  # fmt: skip


def test_an_old_file_is_exported_in_the_current_layout(tmp_path):
    """A file of the old layout (of the text columns only `policy`): its export gets its
    setting, game, rules, params, code and maps from its run description, described."""
    old = write_result(tmp_path / "old.parquet", "mc", [True, False, True], old=True,
                       params={"samples": 256, "c": 0.5}, rules={"wastes": 3})  # fmt: skip
    assert pq.read_schema(old).names == ["seed", "deal", "policy", "won", "score", "moves"]
    new = tmp_path / "upgraded" / "new.parquet"
    result = sim("export", old, "--to", "parquet", "--out", new)
    assert result.exit_code == 0, result.output
    schema = pq.read_schema(new)
    assert schema.names == ["seed", "deal", "setting", "game", "rules", "policy", "params",
                            "code", "param", "rule", "outcome", "won", "score", "moves",
                            "stats"]  # fmt: skip
    assert str(schema.field("rules").type) == "dictionary<values=string, indices=int32, ordered=0>"
    assert schema.field("params").metadata[b"description"].startswith(b"the policy's parameters")
    assert schema.field("score").metadata[b"description"] == b"cards on the foundations, 4..52"
    rows = pd.read_parquet(new)
    texts = rows[["game", "rules", "policy", "params"]].astype(str).drop_duplicates()
    assert texts.values.tolist() == [["calc", "wastes=3", "mc", "samples=256 c=0.5"]]
    assert rows["won"].tolist() == [True, False, True]
    assert meta(new) == meta(old)
    compared = sim("compare", old, new)  # one run: the two files pooled, no note for the new
    assert compared.exit_code == 0
    assert compared.stdout.splitlines()[0] == "calc · wastes=3 · 1 run, 2 files"
    assert compared.stderr.count("note: ") == 1
    csv = tmp_path / "old.csv"
    assert sim("export", old, "--to", "csv", "--out", csv).exit_code == 0
    header, row = csv.read_text().splitlines()[:2]
    assert header.split(",")[8:] == ['"param.samples"', '"param.c"', '"rule.wastes"',
                                     '"outcome"', '"won"', '"score"', '"moves"']  # fmt: skip
    assert row.split(",")[8:] == ["256", "0.5", "3", '"won"', "true", "52", "50"]


def test_a_folder_of_more_settings_than_a_small_code_holds_exports(tmp_path):
    """130 settings pooled: their text columns' codes outgrow 8 bits."""
    folder = tmp_path / "results"
    for i in range(130):
        write_result(folder / f"r{i}.parquet", "a", [i % 2 == 0, True], params={"c": i / 10})
    out = tmp_path / "all.parquet"
    result = sim("export", folder, "--to", "parquet", "--out", out)
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out, columns=["setting", "params"])
    assert (rows.num_rows, len(set(rows.column("setting").to_pylist()))) == (260, 130)


def test_a_pooled_export_pools_again(tmp_path):
    folder = tmp_path / "results"
    write_result(folder / "a.parquet", "a", [True, False, True])
    write_result(folder / "b.parquet", "b", [False, False])
    first = tmp_path / "back" / "pooled.parquet"
    assert sim("export", folder, "--to", "parquet", "--out", first).exit_code == 0
    write_result(tmp_path / "back" / "c.parquet", "c", [True])
    again = tmp_path / "again.parquet"
    assert (
        sim("export", tmp_path / "back", folder, "--to", "parquet", "--out", again).exit_code == 0
    )
    assert sorted(meta(again)["settings"][s]["policy"] for s in meta(again)["settings"]) == [
        "a", "b", "c"]  # fmt: skip
    compared = sim("compare", again, "--format", "csv")
    assert compared.exit_code == 0, compared.output
    deals = {line.split(",")[0]: line.split(",")[8] for line in compared.stdout.splitlines()[1:]}
    assert deals == {"a": "3", "b": "2", "c": "1"}


@pytest.mark.parametrize("command", [["export", "--to", "parquet"], ["compare"]])
def test_a_parquet_output_inside_an_input_folder_is_refused(tmp_path, command):
    folder = tmp_path / "results"
    write_result(folder / "a.parquet", "a", [True, False])
    out = folder / "calc" / "all.parquet"
    result = sim(command[0], folder, *command[1:], "--out", out)
    assert result.exit_code == 2
    what = "the export" if command[0] == "export" else "a Parquet table"
    assert result.output.strip().splitlines()[-1] == (
        f"Error: --out {out}: inside {folder}, an input; {what} would be read again by every "
        "scan of it: write it elsewhere"
    )
    assert not out.exists()
