"""Output names agree with what is written in them: a name that promises another format
or a compression is refused in one line, and a compressed move log says in its header
the name it is restored under. The "written" notice never fails a command."""

import gzip
import os
import subprocess
import sys

import pytest
from conftest import sim
from test_compare import known_pair

ENV = os.environ | {"TQDM_DISABLE": "1"}


@pytest.mark.parametrize(
    "args, line",
    [
        (
            ("--format", "csv", "--out", "c.parquet"),
            "Error: --out {folder}/c.parquet: --format csv writes CSV; write {folder}/c.csv, "
            "or give --format parquet",
        ),
        (
            ("--format", "markdown", "--out", "c.pq"),
            "Error: --out {folder}/c.pq: --format markdown writes Markdown; write "
            "{folder}/c.md, or give --format parquet",
        ),
        (
            ("--out", "c.csv.gz"),
            "Error: --out {folder}/c.csv.gz: compare writes CSV, uncompressed; write "
            "{folder}/c.csv",
        ),
        (
            ("--out", "c.json.bz2"),
            "Error: --out {folder}/c.json.bz2: compare writes JSON, uncompressed; write "
            "{folder}/c.json",
        ),
        (
            ("--out", "c.html"),
            "Error: --out {folder}/c.html: compare writes a text table; write {folder}/c.txt",
        ),
    ],
)
def test_compare_refuses_a_name_of_another_format(tmp_path, args, line):
    a, _ = known_pair(tmp_path)
    args = [tmp_path / arg if arg.startswith("c.") else arg for arg in args]
    result = sim("compare", a, *args)
    assert result.exit_code == 2
    assert result.output.strip() == line.format(folder=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet", "b.parquet"]


def test_compare_writes_parquet_under_a_pq_name(tmp_path):
    import pyarrow.parquet as pq

    a, b = known_pair(tmp_path)
    out = tmp_path / "c.pq"
    assert sim("compare", a, b, "--out", out).exit_code == 0
    assert pq.read_table(out).num_rows == 2


@pytest.mark.parametrize("name", ["r.html.gz", "r.md.xz"])
def test_report_refuses_a_compressed_name(tmp_path, name):
    a, _ = known_pair(tmp_path)
    out = tmp_path / name
    result = sim("report", a, "--out", out)
    assert result.exit_code == 2
    plain = out.with_suffix("")
    assert result.output.strip() == (
        f"Error: --out {out}: a report is written uncompressed; write {plain}"
    )
    assert not out.exists() and not plain.exists()


def test_a_move_log_of_a_compression_sim_does_not_write_is_refused(tmp_path):
    log, out = tmp_path / "x.jsonl.bz2", tmp_path / "r.parquet"
    result = sim("calc", "-n", 5, "--workers", 1, "--out", out, "--log-moves", log)
    assert result.exit_code == 2
    plain = tmp_path / "x.jsonl"
    assert result.output.strip() == (
        f"Error: --log-moves {log}: move logs are written plain or compressed as .gz or "
        f".zst; write {plain}.gz, {plain}.zst or {plain}"
    )
    assert not log.exists() and not out.exists()


@pytest.mark.parametrize(
    "name, fitting",
    [("moves.parquet", "moves.jsonl"), ("moves.CSV", "moves.jsonl"),
     ("moves.json.gz", "moves.jsonl.gz")],
)  # fmt: skip
def test_a_move_log_named_as_another_format_is_refused(tmp_path, name, fitting):
    # JSON lines under a .parquet name would sit in a results folder as a broken result
    # file (and, with --overwrite, replace a real one).
    (tmp_path / "moves.parquet").write_bytes(b"PAR1")
    log, out = tmp_path / name, tmp_path / "r.parquet"
    args = ("calc", "-n", 5, "--workers", 1, "--out", out, "--log-moves", log, "--overwrite")
    result = sim(*args)
    plain = log.with_suffix("") if name.endswith(".gz") else log
    assert (result.exit_code, result.output.strip()) == (
        2,
        f"Error: --log-moves {log}: a move log is JSON lines, not {plain.suffix}; "
        f"write {tmp_path / fitting}",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["moves.parquet"]
    assert (tmp_path / "moves.parquet").read_bytes() == b"PAR1"


def test_a_gzipped_move_log_names_its_own_file_not_a_temporary_one(tmp_path):
    log, out = tmp_path / "x.jsonl.gz", tmp_path / "r.parquet"
    result = sim("calc", "-n", 5, "--workers", 1, "--out", out, "--log-moves", log)
    assert result.exit_code == 0, result.output
    data = log.read_bytes()
    assert data[3] & 0x08  # FNAME: the name gzip -dN restores
    assert data[10:].split(b"\0", 1)[0] == b"x.jsonl"
    with gzip.open(log, "rt") as file:
        assert len(file.readlines()) == 5


def _with_stderr(folder, how, *args):
    """`sim ARGS 2>&-` (how="closed") or `sim ARGS 2>/dev/full` (how="full")."""
    command = [sys.executable, "-m", "sim", *map(str, args)]
    if how == "closed":
        shell = ["sh", "-c", 'exec "$@" 2>&-', "sh", *command]
        return subprocess.run(shell, cwd=folder, env=ENV, stdout=subprocess.DEVNULL,
                              timeout=180)  # fmt: skip
    with open("/dev/full", "w") as full:
        return subprocess.run(command, cwd=folder, env=ENV, stdout=subprocess.DEVNULL,
                              stderr=full, timeout=180)  # fmt: skip


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("how", ["closed", "full"])
def test_an_unwritable_standard_error_does_not_fail_a_written_output(tmp_path, how):
    known_pair(tmp_path)
    commands = {
        "d2.csv": ("export", "a.parquet", "--to", "csv", "--out", "d2.csv"),
        "d3.csv": ("compare", "a.parquet", "b.parquet", "--out", "d3.csv"),
        "d4.html": ("report", "a.parquet", "--out", "d4.html"),
    }
    for written, args in commands.items():
        done = _with_stderr(tmp_path, how, *args)
        assert done.returncode == 0, args
        assert (tmp_path / written).is_file()


def test_a_result_file_name_of_a_compression_is_refused(tmp_path):
    out = tmp_path / "r.parquet.gz"
    result = sim("calc", "-n", 5, "--out", out)
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"Error: --out {out}: result files are Parquet, compressed inside; "
        f"write {tmp_path / 'r.parquet'}"
    )
    assert list(tmp_path.iterdir()) == []


def test_bench_refuses_a_game_named_that_none_of_its_policies_plays():
    result = sim("bench", "calc", "montana", "-p", "first", "-n", 10, "--repeat", 1)
    assert result.exit_code == 2
    assert result.output.strip() == "Error: calc has no policy among first: name its own"
