"""Outputs of runs, compare, report and export: only regular files are replaced,
nothing else is ever removed, and each refusal is one error line."""

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import sim
from test_compare import known_pair

from sim.engine.analysis.output import write_together
from sim.engine.run.stop_signals import Stopped

NOT_REGULAR = "exists and is not a regular file; it is never replaced"


@pytest.fixture
def pair(tmp_path):
    (tmp_path / "in").mkdir()
    return known_pair(tmp_path / "in")


def commands(a, b, out):
    """Each analysis command writing to out."""
    return {
        "compare": ("compare", a, b, "--out", out, "--format", "csv"),
        "report": ("report", a, b, "--out", out),
        "export": ("export", a, "--to", "csv", "--out", out),
    }


@pytest.mark.parametrize("command", ["compare", "export"])
def test_dev_null_is_never_replaced_even_with_overwrite(pair, command):
    result = sim(*commands(*pair, "/dev/null")[command], "--overwrite")
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: /dev/null {NOT_REGULAR}"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("command", ["compare", "report", "export"])
def test_a_fifo_is_never_replaced_even_with_overwrite(pair, tmp_path, command):
    fifo = tmp_path / ("out.md" if command == "report" else "out.csv")
    os.mkfifo(fifo)
    result = sim(*commands(*pair, fifo)[command], "--overwrite")
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {fifo} {NOT_REGULAR}"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", fifo.name]


def test_a_symbolic_link_to_a_device_is_refused(pair, tmp_path):
    link = tmp_path / "out.csv"
    link.symlink_to("/dev/null")
    result = sim(*commands(*pair, link)["compare"], "--overwrite")
    assert result.output.strip() == (
        f"Error: {link} is a symbolic link; it is never replaced (name its target)"
    )
    assert link.is_symlink()


def test_a_fifo_where_a_plot_goes_is_refused_before_any_work(pair, tmp_path):
    (tmp_path / "r").mkdir()
    fifo = tmp_path / "r" / "scores.png"
    os.mkfifo(fifo)
    result = sim("report", *pair, "--out", tmp_path / "r.md", "--overwrite")
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {fifo} {NOT_REGULAR}"
    assert not (tmp_path / "r.md").exists()
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["scores.png"]


def test_a_folder_is_refused_as_an_output_file(pair, tmp_path):
    result = sim(*commands(*pair, tmp_path)["compare"], "--overwrite")
    assert result.output.strip() == f"Error: {tmp_path} is a folder; give a file name for --out"


def test_overwrite_replaces_a_regular_file(pair, tmp_path):
    out = tmp_path / "c.csv"
    out.write_text("old")
    assert sim(*commands(*pair, out)["compare"], "--overwrite").exit_code == 0
    assert out.read_text().startswith("run,")
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_folder_of_results_survives_a_markdown_report_named_after_it(pair, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    kept = [source.name for source in pair]
    for source in pair:
        (results / source.name).write_bytes(source.read_bytes())
    (results / "notes").mkdir()
    (results / "notes" / "todo.txt").write_text("keep me")
    out = tmp_path / "results.md"
    out.write_text("an older report")
    result = sim("report", *(results / name for name in kept), "--out", out, "--overwrite")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in results.iterdir()) == sorted(
        [*kept, "notes", "difference.png", "reach.png", "scores.png", "win_rate.png"]
    )
    for source in pair:
        assert (results / source.name).read_bytes() == source.read_bytes()
    assert (results / "notes" / "todo.txt").read_text() == "keep me"
    assert "](results/win_rate.png)" in out.read_text()


def test_a_plot_of_an_earlier_report_is_kept_without_overwrite(pair, tmp_path):
    (tmp_path / "r").mkdir()
    from sim.engine.analysis.report import PNG_MARK

    (tmp_path / "r" / "win_rate.png").write_bytes(b"an earlier plot " + PNG_MARK)
    result = sim("report", *pair, "--out", tmp_path / "r.md")
    plot = tmp_path / "r" / "win_rate.png"
    assert result.output.strip() == f"Error: {plot} exists; use --overwrite to replace it"
    assert plot.read_bytes().startswith(b"an earlier plot")
    assert not (tmp_path / "r.md").exists()


# Files written together (a CSV and its description, a report and its plots).


def _text(text):
    return lambda tmp: Path(tmp).write_text(text)


def test_a_stop_while_files_are_written_together_leaves_none_of_them(tmp_path):
    csv, plot = tmp_path / "a.csv", tmp_path / "plots" / "b.png"

    def stopped_midway(tmp):
        Path(tmp).write_text("half")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the stop comes first

    with pytest.raises(Stopped) as stop:
        write_together([(csv, _text("a")), (plot, stopped_midway)])
    assert (stop.value.signum, stop.value.unwritten) == (signal.SIGTERM, [csv, plot])
    assert list(tmp_path.iterdir()) == []  # no temporary file, no folder made for plots


def test_a_stop_while_files_are_moved_into_place_lets_every_move_end(tmp_path, monkeypatch):
    csv, description = tmp_path / "a.csv", tmp_path / "a.csv.json"
    replace = os.replace

    def replace_then_stop(source, target):
        replace(source, target)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(os, "replace", replace_then_stop)
    with pytest.raises(Stopped) as stop:
        write_together([(csv, _text("a")), (description, _text("{}"))])
    assert (stop.value.signum, stop.value.written) == (signal.SIGINT, [csv, description])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "a.csv.json"]
    assert stop.value.what_is_kept() == f"{csv}, {description} written in full"


# A name typed with a trailing slash names a folder: pathlib would drop the slash.


def folder_named(text):
    return f"Error: Invalid value for '--out': '{text}' names a folder, not a file"


@pytest.mark.parametrize("command", ["compare", "report", "export"])
def test_a_name_ending_in_a_slash_is_refused_as_a_file(pair, tmp_path, command):
    out = f"{tmp_path}/newdir/"
    result = sim(*commands(*pair, out)[command])
    assert result.exit_code == 2
    assert result.output.strip() == folder_named(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


@pytest.mark.parametrize("ending", ["/", "/.", "/.."])
def test_a_run_refuses_a_file_name_that_names_a_folder(tmp_path, ending):
    out = f"{tmp_path}/odir{ending}"
    result = sim("calc", "-n", 20, "--workers", 1, "--out", out)
    assert result.exit_code == 2
    assert result.output.strip() == folder_named(out)
    assert list(tmp_path.iterdir()) == []


def test_a_move_log_name_ending_in_a_slash_is_refused(tmp_path):
    logs = f"{tmp_path}/ldir/"
    result = sim("calc", "-n", 20, "--out", tmp_path / "r.parquet", "--log-moves", logs)
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"Error: Invalid value for '--log-moves': '{logs}' names a folder, not a file"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_takes_its_folder_with_a_trailing_slash(tmp_path):
    result = sim("calc", "-p", "greedy", "-p", "random", "-n", 5, "--workers", 1, "-q",
                 "--out", f"{tmp_path}/sweep/")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "sweep").iterdir()) == [
        "calc-greedy-wastes4-seed0-n5.parquet",
        "calc-random-wastes4-seed0-n5.parquet",
    ]


def test_an_existing_folder_is_still_refused_as_a_run_file(tmp_path):
    result = sim("calc", "-n", 20, "--out", tmp_path)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {tmp_path} is a folder; give a file name for --out"


# sim export writes the format --to names, under a name that says so.


@pytest.mark.parametrize(
    "target, name, message",
    [
        ("csv", "gg.parquet", "--to csv writes CSV; write {}gg.csv, or give --to parquet"),
        ("parquet", "gg.csv", "--to parquet writes Parquet; write {}gg.parquet, or give --to csv"),
        ("csv", "gg.json", "--to csv writes CSV; write {}gg.csv"),
        ("csv", "gg.csv.gz", "--to csv writes CSV, uncompressed; write {}gg.csv"),
    ],
)
def test_export_refuses_a_name_of_another_format(pair, tmp_path, target, name, message):
    out = tmp_path / name
    result = sim("export", pair[0], "--to", target, "--out", out)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: --out {out}: {message.format(f'{tmp_path}/')}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


@pytest.mark.parametrize("target, name", [("csv", "gg.CSV"), ("csv", "gg.dat"), ("parquet", "gg")])
def test_export_takes_a_name_of_its_format_or_of_none(pair, tmp_path, target, name):
    result = sim("export", pair[0], "--to", target, "--out", tmp_path / name)
    assert result.exit_code == 0, result.output
    assert (tmp_path / name).is_file()


LONG = "a" * 300  # one name beyond any file system's 255 bytes
DEEP = "/".join(["b" * 200] * 25)  # a path beyond PATH_MAX (4,096 bytes)


@pytest.mark.parametrize(
    "args, line",
    [
        (("calc", "-n", 10, "--out", f"{LONG}.parquet"),
         "Error: file name too long for this file system: " + "a" * 40 + "...; give --out a "
         "shorter one"),
        (("calc", "-n", 10, "--out", "x.parquet", "--log-moves", f"{LONG}.jsonl"),
         "Error: file name too long for this file system: " + "a" * 40 + "...; give "
         "--log-moves a shorter one"),
        (("calc", "-n", 10, "-p", "greedy", "-p", "random", "--out", LONG),
         f"Error: --out {'a' * 50}...{'a' * 50}: File name too long"),
        (("calc", "-n", 10, "--out", f"{DEEP}/x.parquet"),
         f"Error: cannot use {'b' * 50}...{'b' * 40}/x.parquet as --out: File name too long"),
        (("compare", f"{LONG}.parquet"),
         f"Error: file name too long: {'a' * 50}...{'a' * 42}.parquet"),
        (("export", f"{LONG}.parquet", "--to", "csv"),
         f"Error: file name too long: {'a' * 50}...{'a' * 42}.parquet"),
    ],
)  # fmt: skip
def test_a_name_too_long_for_the_file_system_is_one_error_line(tmp_path, monkeypatch, args, line):
    monkeypatch.chdir(tmp_path)
    result = sim(*args)
    assert (result.exit_code, result.output.splitlines()) == (1, [line])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["notes", "link", "fifo", "log-fifo"])
def test_what_lies_at_a_journals_name_is_never_removed_nor_read_if_a_run_did_not_write_it(
    tmp_path, kind
):
    # A run keeps its rows in .NAME.journal (and its moves in .LOG.journal) while it
    # plays. A file of the user's there is refused, never deleted; a link is not
    # followed; a pipe is not opened (a read of it would wait for ever).
    name = ".l.jsonl.journal" if kind == "log-fifo" else ".r.parquet.journal"
    there = tmp_path / name
    if kind == "notes":
        there.write_text("notes\n")
    elif kind == "link":
        (tmp_path / "target").write_text("mine\n")
        there.symlink_to(tmp_path / "target")
    else:
        os.mkfifo(there)
    args = ["calc", "-n", 100, "-q", "--out", "r.parquet", "--log-moves", "l.jsonl"]
    done = subprocess.run([sys.executable, "-m", "sim", *map(str, args)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    why = "it is not one" if kind == "notes" else "it is not a regular file"
    assert (done.returncode, done.stderr) == (
        1,
        f"Error: {name} is where this run keeps its journal, and {why}; move it away\n",
    )
    kept = {"notes": [name], "link": [name, "target"]}.get(kind, [name])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)
    if kind == "notes":
        assert there.read_text() == "notes\n"
    if kind == "link":
        assert there.is_symlink() and (tmp_path / "target").read_text() == "mine\n"


def test_the_start_of_a_journal_left_by_a_run_killed_as_it_began_is_cleared(tmp_path):
    (tmp_path / ".r.parquet.journal").write_bytes(b"SIM JOU")
    done = subprocess.run([sys.executable, "-m", "sim", "calc", "-n", "100", "-q", "--out",
                           "r.parquet"], cwd=tmp_path, capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]
