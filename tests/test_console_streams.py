"""Standard output as the console script meets it: closed, on a full device, or read by a
reader that goes away. Each is one line on stderr, never a traceback."""

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

ENV = os.environ | {"TQDM_DISABLE": "1"}
CLOSED = "Error: cannot write to the standard output: it is closed\n"
FULL = "Error: cannot write to the standard output: no space left on the device\n"


def command(*args):
    return [sys.executable, "-m", "sim", *map(str, args)]


def with_stdout_closed(folder, *args):
    """`sim ARGS >&-`."""
    shell = ["sh", "-c", 'exec "$@" >&-', "sh", *command(*args)]
    return subprocess.run(shell, cwd=folder, env=ENV, stderr=subprocess.PIPE, text=True,
                          timeout=180)  # fmt: skip


def with_stdout_full(folder, *args):
    """`sim ARGS >/dev/full`."""
    with open("/dev/full", "w") as full:
        return subprocess.run(command(*args), cwd=folder, env=ENV, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=180)  # fmt: skip


def completed(path):
    return json.loads(pq.read_metadata(path).metadata[b"sim"])["completed"]


COMMANDS = {
    "run": ("calc", "-n", 10, "--workers", 1, "--out", "r.parquet"),
    "show": ("show", "calc", "--final"),
    "help": ("--help",),
    "bare": (),
    "policies": ("policies",),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_closed_standard_output_is_one_error_line(tmp_path, name):
    done = with_stdout_closed(tmp_path, *COMMANDS[name])
    assert (done.returncode, done.stderr) == (1, CLOSED)
    if name == "run":  # the run itself ended well: its file stays
        assert completed(tmp_path / "r.parquet") is True


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("name", COMMANDS)
def test_a_full_standard_output_is_one_error_line(tmp_path, name):
    done = with_stdout_full(tmp_path, *COMMANDS[name])
    assert (done.returncode, done.stderr) == (1, FULL)
    if name == "run":
        assert completed(tmp_path / "r.parquet") is True


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_compare_into_a_full_standard_output_names_it(tmp_path):
    assert with_stdout_full(tmp_path, *COMMANDS["run"]).returncode == 1
    done = with_stdout_full(tmp_path, "compare", "r.parquet")
    assert (done.returncode, done.stderr) == (1, FULL)


def test_a_quiet_run_needs_no_standard_output(tmp_path):
    done = with_stdout_closed(tmp_path, *COMMANDS["run"], "-q")
    assert (done.returncode, done.stderr) == (0, "")
    assert completed(tmp_path / "r.parquet") is True


def test_a_reader_that_goes_away_still_ends_show_quietly(tmp_path):
    process = subprocess.Popen(command("show", "calc"), cwd=tmp_path, env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    process.stdout.close()  # as `sim show calc | head -0` leaves it, before any write
    _, stderr = process.communicate(timeout=180)
    assert (process.returncode, stderr) == (1, b"")


def test_a_run_whose_reader_goes_away_still_ends_well_and_quietly(tmp_path):
    process = subprocess.Popen(command(*COMMANDS["run"]), cwd=tmp_path, env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    process.stdout.close()
    _, stderr = process.communicate(timeout=180)
    assert (process.returncode, stderr) == (0, b"")
    assert completed(tmp_path / "r.parquet") is True


@pytest.mark.parametrize("closed, args", [
    ("2>&-", ("calc", "-n", 100, "--workers", 2, "--out", "r.parquet")),
    (">&- 2>&-", ("montana", "-n", 50, "-q", "--out", "r.parquet", "--log-moves", "r.jsonl")),
])  # fmt: skip
def test_a_run_whose_error_stream_is_closed_still_writes_its_files(tmp_path, closed, args):
    # `sim ... 2>&-`, as cron or a daemon may start it: Python then has no sys.stderr at
    # all, so no bar or notice can show, and the run still ends well with its files.
    env = {name: value for name, value in os.environ.items() if name != "TQDM_DISABLE"}
    shell = ["sh", "-c", f'exec "$@" {closed}', "sh", *command(*args)]
    done = subprocess.run(shell, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True,
                          timeout=180)  # fmt: skip
    assert done.returncode == 0
    assert ("written" in done.stdout) == (closed == "2>&-")
    assert completed(tmp_path / "r.parquet") is True
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["r.parquet"] + (["r.jsonl"] if "--log-moves" in args else [])
    )
