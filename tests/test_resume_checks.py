"""--resume goes on only with the very run a file holds, and only from rows that are the
deals its description says are done."""

import errno
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from conftest import sim

from sim.engine.run.results import META_KEY


def interrupted_copy(source, out, rows, **changes):
    """Write `out`: the rows of the complete file `source` chosen by `rows`, described
    as a run interrupted after `len(rows)` deals (with `changes` to its description)."""
    table = pq.read_table(source)
    meta = json.loads(table.schema.metadata[META_KEY])
    meta |= {"completed": False, "n_done": len(rows)} | changes
    kept = table.take(pa.array(rows)).replace_schema_metadata({META_KEY: json.dumps(meta)})
    pq.write_table(kept, out)


def complete_run(tmp_path, n=50):
    source = tmp_path / "complete.parquet"
    assert sim("calc", "-n", n, "--out", source, "-q").exit_code == 0
    return source


def test_resume_completes_an_interrupted_copy_into_the_same_rows(tmp_path):
    source, out = complete_run(tmp_path), tmp_path / "r.parquet"
    interrupted_copy(source, out, list(range(20)))
    assert sim("calc", "-n", 50, "--out", out, "--resume", "-q").exit_code == 0
    assert pq.read_table(out).equals(pq.read_table(source))


def test_resume_refuses_a_file_with_fewer_rows_than_deals_done(tmp_path):
    source, out = complete_run(tmp_path), tmp_path / "r.parquet"
    interrupted_copy(source, out, list(range(8)), n_done=11)
    result = sim("calc", "-n", 50, "--out", out, "--resume")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot resume {out}: it should hold deals 0 to 10 of seed 0 in order, "
        "and holds 8 rows"
    )


def test_resume_refuses_a_file_whose_rows_are_other_deals(tmp_path):
    source, out = complete_run(tmp_path), tmp_path / "r.parquet"
    interrupted_copy(source, out, [0, 1, 2, 4, 4, 5])
    result = sim("calc", "-n", 50, "--out", out, "--resume")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot resume {out}: its rows are not deals 0 to 5 of seed 0 in order"
    )


def test_resume_refuses_rows_of_another_seed_or_another_policy(tmp_path):
    source, out = complete_run(tmp_path), tmp_path / "r.parquet"
    interrupted_copy(source, out, list(range(20)))
    table = pq.read_table(out)
    seeds = pa.array([0] * 19 + [1], pa.int64())
    pq.write_table(table.set_column(table.column_names.index("seed"), "seed", seeds), out)
    result = sim("calc", "-n", 50, "--out", out, "--resume")
    assert result.output.strip() == (
        f"Error: cannot resume {out}: its rows are not deals 0 to 19 of seed 0 in order"
    )
    policies = pa.array(["greedy"] * 10 + ["random"] * 10).dictionary_encode()
    at = table.column_names.index("policy")
    pq.write_table(table.set_column(at, "policy", policies), out)
    result = sim("calc", "-n", 50, "--out", out, "--resume")
    assert result.output.strip() == (
        f"Error: cannot resume {out}: its policy column is not 'greedy' throughout"
    )


def test_resume_refuses_a_policy_of_the_same_name_from_elsewhere(tmp_path):
    source, out = complete_run(tmp_path), tmp_path / "r.parquet"
    interrupted_copy(source, out, list(range(20)), policy_spec="mine.py:greedy")
    result = sim("calc", "-n", 50, "--out", out, "--resume")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot resume {out}: its policy_spec is 'mine.py:greedy', this run's is 'greedy'"
    )


def test_resume_refuses_a_file_begun_by_other_code_of_the_rules_or_policies(tmp_path):
    source, out = complete_run(tmp_path), tmp_path / "r.parquet"
    code = json.loads(pq.read_table(source).schema.metadata[META_KEY])["code"]
    assert len(code) == 12
    interrupted_copy(source, out, list(range(20)), code="0123456789ab")
    result = sim("calc", "-n", 50, "--out", out, "--resume")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot resume {out}: its deals were played by other code of the rules and "
        f"policies (code 0123456789ab, this sim's {code}): run it again whole"
    )
    interrupted_copy(source, out, list(range(20)))  # the same code: it resumes
    assert sim("calc", "-n", 50, "--out", out, "--resume", "-q").exit_code == 0
    assert pq.read_table(out).equals(pq.read_table(source))


def test_resume_refuses_other_parameters_naming_both(tmp_path):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-p", "planner", "-n", 10, "--out", out, "-q").exit_code == 0
    result = sim("calc", "-p", "planner", "--param", "depth_weight=2", "-n", 10, "--out", out,
                 "--resume")  # fmt: skip
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot resume {out}: its params are {{'depth_weight': 1.0, 'king_pile': 1}}, "
        "this run's are {'depth_weight': 2.0, 'king_pile': 1}"
    )


def test_resume_and_overwrite_together_are_refused_in_a_sweep_too(tmp_path):
    args = ["calc", "--param", "depth_weight=1,2", "-p", "planner", "-n", 10]
    result = sim(*args, "--out", tmp_path, "--resume", "--overwrite")
    assert result.exit_code == 2
    assert result.output.strip() == (
        "Error: --resume and --overwrite exclude each other: --resume completes the rows "
        "a file holds, --overwrite replaces them"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_result_file_that_cannot_be_put_in_place_is_named_and_its_deals_kept(
    tmp_path, monkeypatch
):
    out = tmp_path / "r.parquet"
    replace = os.replace

    def refuse_the_result_file(source, target):
        if Path(target) == out:
            raise PermissionError(errno.EPERM, "Operation not permitted", source, target)
        replace(source, target)

    monkeypatch.setattr(os, "replace", refuse_the_result_file)
    result = sim("calc", "-n", 50, "--out", out)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith(
        f"Error: cannot write {out}: Operation not permitted"
    )


PLUGIN = """
from sim.policies.registry import policy


@policy("calc", name="mine")
def mine(state, legal, n_legal, params, stream):
    return {choice}
"""


def test_a_plugin_file_resumes_from_any_folder_and_only_itself(tmp_path, monkeypatch):
    here, there = tmp_path / "here", tmp_path / "there"
    for folder, choice in ((here, "0"), (there, "n_legal - 1")):
        folder.mkdir()
        (folder / "mine.py").write_text(PLUGIN.format(choice=choice))
    complete, out = tmp_path / "complete.parquet", tmp_path / "r.parquet"
    monkeypatch.chdir(here)
    assert sim("calc", "-p", "./mine.py:mine", "-n", 30, "--out", complete, "-q").exit_code == 0
    interrupted_copy(complete, out, list(range(10)))

    monkeypatch.chdir(there)
    result = sim("calc", "-p", "./mine.py:mine", "-n", 30, "--out", out, "--resume")
    assert result.output.strip() == (
        f"Error: cannot resume {out}: its policy_spec is '{here / 'mine.py'}:mine', "
        f"this run's is '{there / 'mine.py'}:mine'"
    )
    resumed = sim("calc", "-p", "../here/mine.py:mine", "-n", 30, "--out", out, "--resume", "-q")
    assert resumed.exit_code == 0, resumed.output
    assert pq.read_table(out).equals(pq.read_table(complete))


def test_resume_after_a_full_disk_completes_the_file_and_exits_0(tmp_path, monkeypatch):
    source, out = complete_run(tmp_path), tmp_path / "r.parquet"
    replace = os.replace

    def full_disk(source, target):
        if Path(target) == out:
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        replace(source, target)

    monkeypatch.setattr(os, "replace", full_disk)
    failed = sim("calc", "-n", 50, "--out", out, "-q")
    assert failed.exit_code == 1
    assert failed.output.strip().startswith(f"Error: cannot write {out}: no space left")
    monkeypatch.setattr(os, "replace", replace)
    resumed = sim("calc", "-n", 50, "--out", out, "--resume", "-q")
    assert resumed.exit_code == 0, resumed.output
    assert resumed.output.splitlines() == [
        f"note: recovered 50 finished deals of a killed run into {out}: every deal of the "
        "run, so the file is complete"
    ]
    assert json.loads(pq.read_table(out).schema.metadata[META_KEY])["completed"] is True
    assert pq.read_table(out).equals(pq.read_table(source))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["complete.parquet", "r.parquet"]
