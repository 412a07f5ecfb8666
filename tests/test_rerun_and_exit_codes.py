"""The same command run again plays only what is missing, and every command follows one
output convention: results on stdout, all else on stderr; exit 0 on success, 2 for what
was typed wrong, 1 for work that failed (docs/guide/output.md: Output and exit codes)."""

import json

import pyarrow.parquet as pq
import pytest
from conftest import sim
from test_resume_checks import interrupted_copy

COMPLETE = "already holds this run, complete: nothing to play (--overwrite plays it again)"


def untouched(path):
    """What shows that a file was not written again: its bytes and its mtime."""
    return path.read_bytes(), path.stat().st_mtime_ns


def meta(path):
    return json.loads(pq.read_metadata(path).metadata[b"sim"])


def messages(stderr):
    """The lines of stderr but a first compile's notice, which depends on the cache."""
    return [line for line in stderr.splitlines() if not line.startswith("compiling ")]


# The same command twice.

RUNS = {
    "calc": ("calc", "-n", 2000),
    # outcomes besides won and lost: the summary has an `outcomes` line, whose order must
    # not depend on whether the rows were just played or read back from the file
    "montana-capped": ("montana", "-n", 300, "--max-moves", 100),
}


@pytest.mark.parametrize("name", RUNS)
def test_the_same_command_twice_plays_nothing_the_second_time_and_prints_the_same_summary(
    tmp_path, name
):
    out = tmp_path / "r.parquet"
    command = (*RUNS[name], "--workers", 1, "--out", out)
    first = sim(*command)
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith(f"{RUNS[name][0]} · greedy · ")
    before = untouched(out)

    second = sim(*command)
    assert second.exit_code == 0
    assert second.stderr == f"{out} {COMPLETE}\n"
    assert second.stdout == first.stdout
    assert untouched(out) == before


def test_a_complete_file_resumed_is_the_same_nothing_to_play(tmp_path):
    out = tmp_path / "r.parquet"
    first = sim("calc", "-n", 500, "--workers", 1, "--out", out)
    before = untouched(out)
    resumed = sim("calc", "-n", 500, "--workers", 1, "--out", out, "--resume")
    assert (resumed.exit_code, resumed.stderr) == (0, f"{out} {COMPLETE}\n")
    assert resumed.stdout == first.stdout
    assert untouched(out) == before


def test_a_quiet_rerun_says_nothing(tmp_path):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", 100, "--workers", 1, "--out", out, "-q").exit_code == 0
    again = sim("calc", "-n", 100, "--workers", 1, "--out", out, "-q")
    assert (again.exit_code, again.stdout, again.stderr) == (0, "", "")


def test_overwrite_plays_a_complete_run_again(tmp_path):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", 100, "--workers", 1, "--out", out, "-q").exit_code == 0
    first = out.stat().st_ino
    again = sim("calc", "-n", 100, "--workers", 1, "--out", out, "--overwrite")
    assert again.exit_code == 0
    assert COMPLETE not in again.stderr
    assert again.stdout.splitlines()[-1] == f"written     {out}"
    assert out.stat().st_ino != first  # written anew, then moved into place


def test_an_incomplete_file_still_asks_for_resume(tmp_path):
    source, out = tmp_path / "complete.parquet", tmp_path / "r.parquet"
    assert sim("calc", "-n", 50, "--out", source, "-q").exit_code == 0
    interrupted_copy(source, out, list(range(20)))
    before = untouched(out)
    again = sim("calc", "-n", 50, "--out", out)
    assert (again.exit_code, again.stdout) == (1, "")
    assert again.stderr == (
        f"Error: {out} exists; use --overwrite to replace it or --resume to complete it\n"
    )
    assert untouched(out) == before


@pytest.mark.parametrize(
    "other", [("--seed", 1), ("-p", "random")], ids=["other-seed", "other-policy"]
)
def test_a_file_of_another_run_is_still_refused(tmp_path, other):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", 50, "--out", out, "-q").exit_code == 0
    before = untouched(out)
    again = sim("calc", "-n", 50, *other, "--out", out)
    assert (again.exit_code, again.stdout) == (1, "")
    assert again.stderr == (
        f"Error: {out} exists; use --overwrite to replace it or --resume to complete it\n"
    )
    assert untouched(out) == before


def test_a_file_of_other_code_is_not_taken_for_this_run(tmp_path):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", 50, "--out", out, "-q").exit_code == 0
    table = pq.read_table(out)
    description = meta(out) | {"code": "0123456789ab"}
    pq.write_table(table.replace_schema_metadata({"sim": json.dumps(description)}), out)
    again = sim("calc", "-n", 50, "--out", out)
    assert again.exit_code == 1
    assert COMPLETE not in again.stderr


def test_a_sweep_run_again_plays_only_the_setting_whose_file_is_missing(tmp_path):
    folder = tmp_path / "sweep"
    command = ("calc", "-p", "planner", "-p", "greedy", "--param", "depth_weight=0,2",
               "-n", 300, "--workers", 1, "--out", folder)  # fmt: skip
    first = sim(*command)
    assert first.exit_code == 0, first.output
    files = {path.name: path for path in folder.glob("*.parquet")}
    greedy = folder / "calc-greedy-wastes4-seed0-n300.parquet"
    kept = {name: untouched(path) for name, path in files.items() if path != greedy}
    assert len(kept) == 2
    greedy.unlink()

    second = sim(*command)
    assert second.exit_code == 0, second.output
    assert messages(second.stderr) == [
        f"[1/3] planner depth_weight=0.0 king_pile=1: "
        f"{folder / 'calc-planner-depthweight0-wastes4-seed0-n300.parquet'} {COMPLETE}",
        f"[2/3] planner depth_weight=2.0 king_pile=1: "
        f"{folder / 'calc-planner-depthweight2-wastes4-seed0-n300.parquet'} {COMPLETE}",
        "[3/3] greedy",
    ]
    assert second.stdout == first.stdout  # the comparison, of the same rows
    assert {name: untouched(files[name]) for name in kept} == kept
    assert meta(greedy)["completed"] is True


def test_a_complete_sweep_run_again_plays_nothing(tmp_path):
    folder = tmp_path / "sweep"
    command = ("calc", "-p", "greedy", "-p", "random", "-n", 100, "--workers", 1,
               "--out", folder)  # fmt: skip
    first = sim(*command)
    before = {path: untouched(path) for path in folder.iterdir()}
    second = sim(*command)
    assert second.exit_code == 0
    assert [line.endswith(COMPLETE) for line in second.stderr.splitlines()] == [True, True]
    assert second.stdout == first.stdout
    assert {path: untouched(path) for path in folder.iterdir()} == before


# Exit codes, and which stream carries what.


USAGE_ERRORS = {
    "unknown option": (("calc", "--nope"), "No such option '--nope'."),
    "unknown policy": (
        ("calc", "-p", "best"),
        "unknown policy 'best' for calc (known: random, greedy, kings-bottom, planner, mc, "
        "rollout, oracle)",
    ),
    "unknown parameter": (
        ("calc", "-p", "planner", "--param", "depth=2"),
        "policy planner has no parameter 'depth' (valid: depth_weight, king_pile)",
    ),
    "bad rule value": (
        ("calc", "--wastes", "9"),
        "Invalid value for '--wastes': 9 is not in the range 1<=x<=8.",
    ),
    "options that exclude each other": (
        ("calc", "--resume", "--overwrite", "--out", "r.parquet"),
        "--resume and --overwrite exclude each other: --resume completes the rows a file "
        "holds, --overwrite replaces them",
    ),
    "output named as another format": (
        ("calc", "--out", "r.csv"),
        "--out r.csv: result files are Parquet; write r.parquet (convert it with "
        "`sim export r.parquet --to csv --out r.csv`)",
    ),
    "a sweep with a move log": (
        ("calc", "-p", "greedy", "-p", "random", "--log-moves", "m.jsonl"),
        "--log-moves logs one run; give a sweep's settings one at a time",
    ),
    "missing argument": (("compare",), "Missing argument 'PATH...'."),
    "option that needs another": (
        ("compare", "r.parquet", "--format", "parquet"),
        "--format parquet needs --out FILE",
    ),
    "show options that exclude each other": (
        ("show", "calc", "--step", "--final"),
        "--step shows the moves one by one, --final only the end: give one",
    ),
    "bench option that needs another": (
        ("bench", "calc", "--reference", "true"),
        "--reference needs --command: the two are timed in turn",
    ),
}


@pytest.mark.parametrize("name", USAGE_ERRORS)
def test_what_was_typed_wrong_is_one_error_line_and_exit_2(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    args, message = USAGE_ERRORS[name]
    result = sim(*args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {message}\n")
    assert list(tmp_path.iterdir()) == []


def test_an_unreadable_input_to_compare_is_a_failure_exit_1(tmp_path):
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not a parquet file")
    result = sim("compare", garbage)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(f"Error: {garbage}: ") and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args", [("replay",), ("show", "calc", "--layout")], ids=["replay", "show-layout"]
)
def test_a_missing_input_file_is_a_failure_exit_1(tmp_path, args):
    missing = tmp_path / "none.jsonl"
    result = sim(*args, missing)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: {missing}: no such file\n"


def test_a_run_puts_its_summary_on_stdout_and_nothing_of_it_on_stderr(tmp_path):
    out = tmp_path / "r.parquet"
    result = sim("calc", "-n", 100, "--workers", 1, "--out", out)
    assert result.exit_code == 0
    summary = result.stdout.splitlines()
    assert summary[0] == "calc · greedy · wastes=4 · seed 0"
    assert summary[-1] == f"written     {out}"
    assert not any(line in result.stderr for line in summary)


def test_a_sweep_puts_its_progress_on_stderr_and_its_comparison_on_stdout(tmp_path):
    folder = tmp_path / "sweep"
    result = sim("calc", "-p", "greedy", "-p", "random", "-n", 50, "--workers", 1,
                 "--out", folder)  # fmt: skip
    assert result.exit_code == 0
    assert messages(result.stderr) == ["[1/2] greedy", "[2/2] random"]
    assert result.stdout.startswith(
        f"2 settings in {folder}, best first, paired against the first:\n"
    )
