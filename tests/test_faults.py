"""Runs under real faults: killed workers, signals to the process group, a killed parent,
misbehaving plug-ins, two runs at once. Each test looks at the files and the process
table afterwards: no deal lost or duplicated, no orphan, no litter, one-line errors."""

import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, played

from sim.engine import calc
from sim.engine.run import journal, pool

PLUGINS = ROOT / "tests" / "plugins"
ENV = os.environ | {"PYTHONPATH": str(PLUGINS), "TQDM_DISABLE": "1"}
SLOW = ["-p", "slow_greedy:py_greedy", "--param", "delay_ms=2"]


def command(*args):
    return [sys.executable, "-m", "sim", "calc", *map(str, args)]


def sim(*args, timeout=180):
    return subprocess.run(
        command(*args), cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout
    )


def start(*args, env=ENV):
    return subprocess.Popen(
        command(*args),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a batch scheduler makes
    )


def wait_for_rows(out, rows=1, timeout=90):
    """Wait until the run's journal holds at least `rows` finished deals."""
    path = journal.journal_path(out)
    deadline = time.time() + timeout
    while time.time() < deadline:
        with contextlib.suppress(OSError, journal.JournalError):
            if len(journal.read(path)[2]) >= rows:
                return
        time.sleep(0.02)
    raise AssertionError(f"no finished deal reached {path}")


def children(pid):
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: it only waits to be reaped
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def group_is_gone(pgid, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def kill_outright_after(args, out, rows):
    """Start `sim calc ARGS` and kill its whole process group once `rows` deals of it
    reached the journal of `out`."""
    process = start(*args)
    wait_for_rows(out, rows)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)


def table(path):
    return played(pq.read_table(path))


def meta(path):
    return json.loads(pq.read_metadata(path).metadata[b"sim"])


def clean_run(tmp_path, n, seed):
    """The rows of an uninterrupted run of the compiled greedy (py-greedy plays alike)."""
    out = tmp_path / "clean.parquet"
    done = sim("-n", n, "--seed", seed, "--out", out, "-q")
    assert done.returncode == 0, done.stderr
    return table(out)


def litter(folder, keep):
    return sorted(p.name for p in Path(folder).iterdir() if p.name not in keep)


def test_a_worker_killed_from_outside_is_replaced_and_no_deal_is_lost(tmp_path):
    out = tmp_path / "r.parquet"
    process = start(*SLOW, "-n", 3000, "--seed", 5, "--workers", 2, "--out", out, "-q")
    wait_for_rows(out, 50)
    workers = children(process.pid)
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert meta(out)["completed"] is True
    assert table(out).equals(clean_run(tmp_path, 3000, 5))
    assert not any(alive(pid) for pid in workers)
    assert litter(tmp_path, {"r.parquet", "clean.parquet"}) == []


@pytest.mark.parametrize(
    "after",
    [pytest.param(0.3, marks=pytest.mark.slow), 1.0, pytest.param(2.0, marks=pytest.mark.slow)],
)
def test_sigterm_to_the_process_group_keeps_finished_deals_and_resume_completes(tmp_path, after):
    out = tmp_path / "r.parquet"
    args = [*SLOW, "-n", 3000, "--seed", 6, "--workers", 2, "--out", out, "-q"]
    process = start(*args)
    wait_for_rows(out)
    time.sleep(after)
    os.killpg(process.pid, signal.SIGTERM)
    clock = time.time()
    _, stderr = process.communicate(timeout=30)
    assert time.time() - clock < 10
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert group_is_gone(process.pid)
    kept = meta(out)
    assert kept["completed"] is False and 0 < kept["n_done"] < 3000
    assert pq.read_table(out).num_rows == kept["n_done"]
    assert stderr.strip().splitlines()[-1] == (
        f"interrupted: {kept['n_done']:,} of 3,000 deals kept in {out} (marked incomplete; "
        "run the same command with --resume to finish)"
    )
    assert litter(tmp_path, {"r.parquet"}) == []
    resumed = sim(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert table(out).equals(clean_run(tmp_path, 3000, 6))


def test_a_killed_parent_leaves_no_orphan_and_its_finished_deals_are_recovered(tmp_path):
    out = tmp_path / "r.parquet"
    args = [*SLOW, "-n", 3000, "--seed", 7, "--workers", 2, "--out", out, "-q"]
    process = start(*args)
    wait_for_rows(out, 100)
    workers = children(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    deadline = time.time() + 10
    while any(alive(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert workers and not any(alive(pid) for pid in workers)

    again = sim(*args)
    assert again.returncode == 1
    line = again.stderr.strip()
    kept = meta(out)["n_done"]
    assert kept >= 100 and meta(out)["completed"] is False
    assert line == (
        f"Error: recovered {kept:,} finished deals of a killed run into {out}; "
        "run the same command with --resume to finish it"
    )
    assert pq.read_table(out).column("deal").to_pylist() == list(range(kept))
    resumed = sim(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert table(out).equals(clean_run(tmp_path, 3000, 7))
    assert litter(tmp_path, {"r.parquet", "clean.parquet"}) == []


def test_a_second_run_of_the_same_output_is_refused_while_the_first_writes(tmp_path):
    out = tmp_path / "r.parquet"
    # 4,000 deals of 2 ms: the first run is still writing however slow the second starts
    first = start(*SLOW, "-n", 4000, "--seed", 8, "--workers", 1, "--out", out, "-q")
    wait_for_rows(out)
    second = sim("-n", 100, "--seed", 8, "--out", out, "--overwrite", "-q")
    assert second.returncode == 1
    assert second.stderr.strip() == (
        f"Error: {out} is being written by another sim run (process {first.pid}); "
        "wait for it to finish or choose another --out"
    )
    _, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    assert meta(out)["n"] == 4000 and pq.read_table(out).num_rows == 4000


def first_trigger_deal(seed, trigger=5):
    state = np.zeros(calc.STATE_SIZE, np.int16)
    for deal in range(10_000):
        calc.deal_nb(seed, deal, 4, state)
        if state[calc.STOCK] == trigger:
            return deal
    raise AssertionError("no trigger deal")


@pytest.mark.parametrize(
    "name, reason",
    [
        ("loops", "took over 2 s on one deal (a loop, or a slow policy: "
                  "--deal-timeout allows it more)"),
        ("exits", "called sys.exit(3)"),
        ("raises", "raised ZeroDivisionError: integer division or modulo by zero"),
        ("bad-index", "returned an index outside the legal list"),
        ("cheats", "wrote into the game state it was given (it may only read it)"),
        ("cheats-compiled", "wrote into the game state it was given (it may only read it)"),
        ("loops-compiled", "took over 2 s on one deal (a loop, or a slow policy: "
         "--deal-timeout allows it more)"),
        ("interrupts", "raised KeyboardInterrupt"),
        ("writes-legal", "wrote into the legal list it was given (it may only read it)"),
        ("returns-float", "returned something other than an integer index"),
    ],
)  # fmt: skip
def test_a_misbehaving_plugin_stops_the_run_naming_the_deal_and_keeps_the_deals_before(
    tmp_path, name, reason
):
    seed, n = 3, 2000
    deal = first_trigger_deal(seed)
    assert 0 < deal < n
    out = tmp_path / "r.parquet"
    attribute = name.replace("-", "_") + ("_nb" if name.endswith("compiled") else "")
    result = sim(
        "-p", f"misbehaving:{attribute}", "-n", n, "--seed", seed, "--workers", 2,
        "--out", out, "--deal-timeout", 2, "-q",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"Error: policy {name} {reason} (seed {seed}, deal {deal}); {deal:,} of {n:,} deals "
        f"kept in {out} (marked incomplete; run the same command with --resume to finish)"
    )
    assert pq.read_table(out).column("deal").to_pylist() == list(range(deal))
    assert meta(out)["completed"] is False
    assert litter(tmp_path, {"r.parquet"}) == []


def test_a_plugin_that_kills_its_worker_twice_on_one_deal_stops_the_run(tmp_path):
    seed, n = 3, 2000
    deal = first_trigger_deal(seed)
    out = tmp_path / "r.parquet"
    result = sim("-p", "misbehaving:dies", "-n", n, "--seed", seed, "--out", out, "-q")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"Error: policy dies ended its worker process, twice (exit code 9) (seed {seed}, "
        f"deal {deal}); {deal:,} of {n:,} deals kept in {out} (marked incomplete; run the "
        "same command with --resume to finish)"
    )
    assert pq.read_table(out).num_rows == deal


def test_output_that_is_not_a_regular_file_is_never_replaced(tmp_path):
    result = sim("-n", 10, "--out", "/dev/null", "--overwrite")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Error: /dev/null exists and is not a regular file; it is never replaced"
    )
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for option in ("--out", "--log-moves"):
        other = [] if option == "--out" else ["--out", tmp_path / "r.parquet"]
        result = sim("-n", 10, option, fifo, *other, "--overwrite")
        assert result.stderr.strip() == (
            f"Error: {fifo} exists and is not a regular file; it is never replaced"
        )
    assert Path("/dev/null").is_char_device()


def test_a_move_log_and_a_result_file_may_not_be_one_file(tmp_path):
    # (a result file named without .parquet: a log under a .parquet name is refused
    # before, for its name alone)
    out = tmp_path / "a" / "results"
    assert sim("-n", 10, "--out", out, "-q").returncode == 0
    before = out.read_bytes()
    spelled = tmp_path / "a" / ".." / "a" / "results"
    result = sim("-n", 10, "--out", out, "--log-moves", spelled, "--overwrite")
    assert result.returncode == 2  # two options that name one file: a usage error
    assert result.stderr.strip() == f"Error: --log-moves and --out name the same file: {spelled}"
    assert out.read_bytes() == before


def test_a_move_log_in_a_missing_folder_is_created_and_one_onto_a_folder_refused(tmp_path):
    log = tmp_path / "logs" / "deep" / "moves.jsonl"
    result = sim("-n", 20, "--out", tmp_path / "r.parquet", "--log-moves", log, "-q")
    assert result.returncode == 0, result.stderr
    assert len(log.read_text().splitlines()) == 20
    clock = time.time()
    result = sim("-n", 10**6, "--out", tmp_path / "s.parquet", "--log-moves", tmp_path)
    assert result.returncode == 1 and time.time() - clock < 30
    assert (
        result.stderr.strip() == f"Error: {tmp_path} is a folder; give a file name for --log-moves"
    )
    assert not (tmp_path / "s.parquet").exists()


def interrupt_a_logged_run(out, log):
    """Start a slow logged run, Ctrl-C it once some deals are kept: (its args, deals kept)."""
    args = [*SLOW, "-n", 1500, "--seed", 9, "--out", out, "--log-moves", log, "-q"]
    process = start(*args)
    wait_for_rows(out, 30)
    os.killpg(process.pid, signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 130
    return args, meta(out)["n_done"]


def test_move_log_and_rows_agree_after_an_interrupt_and_resume(tmp_path):
    out, log = tmp_path / "r.parquet", tmp_path / "moves.jsonl"
    args, kept = interrupt_a_logged_run(out, log)
    assert len(log.read_text().splitlines()) == kept

    other = tmp_path / "other.jsonl"
    refused = sim(*args[:-2], other, "-q", "--resume")
    assert refused.stderr.strip() == (
        f"Error: {out} logs its moves to {log}: resume it with --log-moves {log}"
    )
    without = [a for a in args if a not in ("--log-moves", log)]
    refused = sim(*without, "--resume")
    assert refused.stderr.strip() == (
        f"Error: {out} logs its moves to {log}: resume it with --log-moves {log}"
    )
    resumed = sim(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["deal"] for line in lines] == list(range(1500))
    replay = subprocess.run(
        [sys.executable, "-m", "sim", "replay", str(log), "-q"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stdout
    assert replay.stdout.strip() == f"checked 1,500 deals in {log}: 1,500 valid, 0 invalid"


def test_a_logged_run_resumes_after_its_folder_is_moved(tmp_path):
    # The file records its log's absolute path; moved with its folder, the log of that
    # name beside it is taken when it holds the deals done, and recorded anew.
    first = tmp_path / "first"
    first.mkdir()
    args, kept = interrupt_a_logged_run(first / "r.parquet", first / "moves.jsonl")
    moved = tmp_path / "moved"
    first.rename(moved)
    out, log = moved / "r.parquet", moved / "moves.jsonl"
    moved_args = [out if a == first / "r.parquet" else log if a == first / "moves.jsonl" else a
                  for a in args]  # fmt: skip
    other = moved / "elsewhere" / "moves.jsonl"  # the same name, but no deals in it
    other.parent.mkdir()
    other.write_text("")
    refused = sim(*[other if a == log else a for a in moved_args], "--resume")
    assert refused.stderr.strip() == (
        f"Error: cannot resume with {other}: it does not hold the move logs of the "
        f"{kept:,} deals done"
    )
    resumed = sim(*moved_args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert meta(out)["log_moves"] == str(log) and meta(out)["completed"] is True
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["deal"] for line in lines] == list(range(1500))


def test_a_killed_logged_run_is_recovered_after_its_folder_is_moved(tmp_path):
    # Killed outright, the run leaves its journals beside its files; moved with them,
    # the log journal is found beside the log of the recorded name given now.
    first = tmp_path / "first"
    first.mkdir()
    args = [*SLOW, "-n", 1500, "--seed", 9, "--out", "r.parquet", "--log-moves", "moves.jsonl"]
    process = subprocess.Popen(command(*args, "-q"), cwd=first, env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    wait_for_rows(first / "r.parquet", 30)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    moved = tmp_path / "moved"
    first.rename(moved)
    resumed = subprocess.run(command(*args, "-q", "--resume"), cwd=moved, env=ENV,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    out, log = moved / "r.parquet", moved / "moves.jsonl"
    assert meta(out)["completed"] is True and meta(out)["log_moves"] == str(log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["deal"] for line in lines] == list(range(1500))
    assert sorted(p.name for p in moved.iterdir()) == ["moves.jsonl", "r.parquet"]


def test_resume_refuses_a_move_log_that_does_not_hold_the_deals_done(tmp_path):
    out, log = tmp_path / "r.parquet", tmp_path / "moves.jsonl"
    args, kept = interrupt_a_logged_run(out, log)
    log.write_text("".join(log.read_text().splitlines(keepends=True)[: kept - 5]))
    refused = sim(*args, "--resume")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"Error: cannot resume with {log}: it does not hold the move logs of the "
        f"{kept:,} deals done"
    )


def test_a_stop_signal_during_start_up_ends_in_one_line(tmp_path):
    out = tmp_path / "r.parquet"
    process = start("-n", 10**6, "--out", out)
    time.sleep(0.6)  # importing, resolving, loading the kernel: no deal played yet
    os.killpg(process.pid, signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM
    if not out.exists():  # a very fast machine may have kept some deals already
        assert stderr == "interrupted: no deal finished; nothing written\n"
        assert litter(tmp_path, set()) == []


@pytest.mark.parametrize("into_the_compile", [0.2, 1.0, 2.5])
def test_a_stop_signal_during_a_first_compile_ends_in_one_line(tmp_path, into_the_compile):
    # A signal raised into numba or LLVM mid-compile could be swallowed by a callback
    # (the run then blamed the policy) or leave half-built objects that print tracebacks.
    folder, out = tmp_path / "out", tmp_path / "out" / "r.parquet"
    folder.mkdir()
    cold = ENV | {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    # mc: a compile of about 40 s, so that even the last signal comes while it runs
    process = start("-p", "mc", "-n", 10**6, "--out", out, env=cold)
    notice = process.stderr.readline()
    assert notice.startswith("compiling the Calculation rules and policy mc")
    time.sleep(into_the_compile)
    os.killpg(process.pid, signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert (process.returncode, stderr) == (
        128 + signal.SIGTERM,
        "interrupted: no deal finished; nothing written\n",
    )
    assert litter(folder, set()) == []


def test_a_chunk_sent_to_a_worker_that_just_died_is_kept_to_be_played_again():
    # A stop signal to the whole process group can end a worker before the parent
    # hands it a chunk: the pipe is broken, and the run must still stop in one line.
    class DeadPipe:
        def send(self, chunk):
            raise BrokenPipeError(32, "Broken pipe")

    worker = pool._Worker.__new__(pool._Worker)
    worker.conn, worker.tasks = DeadPipe(), collections.deque()
    worker.send((0, 5))
    assert list(worker.tasks) == [(0, 5)]


def test_a_symbolic_link_is_never_replaced(tmp_path):
    target = tmp_path / "target.parquet"
    target.write_text("mine")
    link = tmp_path / "link.parquet"
    link.symlink_to(target)
    result = sim("-n", 10, "--out", link, "--overwrite")
    assert result.stderr.strip() == (
        f"Error: {link} is a symbolic link; it is never replaced (name its target)"
    )
    assert link.is_symlink() and target.read_text() == "mine"


def test_compare_never_writes_over_one_of_its_inputs(tmp_path):
    out = tmp_path / "r.parquet"
    assert sim("-n", 50, "--out", out, "-q").returncode == 0
    before = out.read_bytes()
    compare = subprocess.run(
        [sys.executable, "-m", "sim", "compare", str(out), "--out", str(out), "--overwrite"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert compare.returncode == 1
    assert compare.stderr.strip() == f"Error: {out} is one of the inputs; choose another --out"
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    "logged, edited",
    [('"deal": 10', '"deal": 11'), ('"seed": 9', '"seed": 8'), ('"delay_ms": 2', '"delay_ms": 3')],
)
def test_resume_refuses_a_move_log_edited_since_the_interrupt(tmp_path, logged, edited):
    out, log = tmp_path / "r.parquet", tmp_path / "moves.jsonl"
    args, kept = interrupt_a_logged_run(out, log)
    lines = log.read_text().splitlines(keepends=True)
    assert logged in lines[10]
    lines[10] = lines[10].replace(logged, edited)
    log.write_text("".join(lines))
    refused = sim(*args, "--resume")
    assert refused.stderr.strip() == (
        f"Error: cannot resume with {log}: it does not hold the move logs of the "
        f"{kept:,} deals done"
    )


def test_a_markdown_report_never_replaces_a_picture_it_did_not_write(tmp_path):
    from sim.engine.analysis.report import plot_paths

    results = tmp_path / "results"
    assert sim("-n", 50, "--out", results / "a.parquet", "-q").returncode == 0
    out = tmp_path / "results.md"
    theirs = plot_paths(out)[0]
    theirs.write_bytes(b"a picture of the user's own")
    report = subprocess.run(
        [sys.executable, "-m", "sim", "report", str(results / "a.parquet"),
         "--out", str(out), "--overwrite"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert report.returncode == 1
    assert report.stderr.strip() == (
        f"Error: {theirs} was not written by sim report; it is never replaced "
        "(name the report otherwise)"
    )
    assert theirs.read_bytes() == b"a picture of the user's own"


def test_a_stop_signal_during_an_export_removes_its_temporary_file(tmp_path):
    source, csv = tmp_path / "r.parquet", tmp_path / "r.csv"
    assert sim("-n", 10**6, "--out", source, "-q").returncode == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "sim", "export", str(source), "--to", "csv", "--out", str(csv)],
        cwd=ROOT, env=ENV, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.time() + 60
    while not any(p.suffix == ".tmp" for p in tmp_path.iterdir()):
        if process.poll() is not None or time.time() > deadline:
            process.communicate()
            pytest.skip("the export ended before its temporary file was seen")
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert (process.returncode, stderr) == (
        128 + signal.SIGTERM,
        f"interrupted: {csv}, {csv}.json not written\n",
    )
    assert litter(tmp_path, {source.name}) == []


def signal_once_a_temporary_file_appears(process, folder, signum=signal.SIGTERM):
    """Signal the process group the moment a `.NAME.PID.tmp` appears in folder (the
    result file being written); False if the process ended first."""
    deadline = time.time() + 120
    while not any(p.name.endswith(".tmp") for p in folder.iterdir()):
        if process.poll() is not None or time.time() > deadline:
            return False
        time.sleep(0.002)
    os.killpg(process.pid, signum)
    return True


def test_a_stop_signal_while_a_sweep_writes_a_setting_ends_the_sweep_there(tmp_path):
    folder = tmp_path / "sweep"
    folder.mkdir()
    process = start("-p", "greedy", "-p", "random", "-n", 10**6, "--out", folder, "-q")
    if not signal_once_a_temporary_file_appears(process, folder):
        pytest.skip("the first setting was written before its temporary file was seen")
    _, stderr = process.communicate(timeout=60)
    first = folder / "calc-greedy-wastes4-seed0-n1000000.parquet"
    assert (process.returncode, stderr) == (
        128 + signal.SIGTERM,
        f"interrupted: all 1,000,000 deals kept in {first} (complete; sweep stopped at "
        "setting 1 of 2; run the same command with --resume to go on)\n",
    )
    assert litter(folder, set()) == [first.name]  # the second setting never began
    assert meta(first)["completed"] is True


def test_a_run_whose_reader_has_gone_still_ends_as_its_run_does(tmp_path):
    out = tmp_path / "r.parquet"
    finished = start("-n", 1000, "--out", out)
    finished.stdout.close()  # as `sim calc ... | true` leaves it
    assert (finished.wait(timeout=60), finished.stderr.read()) == (0, "")
    assert meta(out)["completed"] is True

    stopped = start(*SLOW, "-n", 3000, "--out", out, "--overwrite")
    stopped.stdout.close()
    wait_for_rows(out, 30)
    os.killpg(stopped.pid, signal.SIGTERM)
    _, stderr = stopped.communicate(timeout=30)
    assert stopped.returncode == 128 + signal.SIGTERM
    assert stderr.startswith("interrupted: ") and "deals kept in" in stderr


def test_a_killed_run_found_by_another_command_is_named_with_the_command_that_ends_it(
    tmp_path,
):
    out = tmp_path / "r.parquet"
    args = [*SLOW, "-n", 3000, "--seed", 9, "--workers", 1, "--out", out, "-q"]
    kill_outright_after(args, out, rows=50)

    other = sim("-n", 3000, "--seed", 9, "--out", out, "-q")  # the compiled greedy
    assert other.returncode == 1
    kept = meta(out)["n_done"]
    resume = (
        f"sim calc --policy slow_greedy:py_greedy --param delay_ms=2.0 --wastes 4 --seed 9 "
        f"-n 3000 --out {out} --resume"
    )
    assert other.stderr.strip() == (
        f"Error: recovered {kept:,} finished deals of a killed run into {out}; "
        f"`{resume}` finishes it"
    )
    resumed = sim(*resume.split()[2:], "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert table(out).equals(clean_run(tmp_path, 3000, 9))


def test_a_killed_run_of_other_code_is_recovered_with_no_advice_to_resume_it(tmp_path):
    # The recovered rows are what that code played; --resume would refuse to finish
    # them with this code, so the note must not send the user there.
    out = tmp_path / "r.parquet"
    args = [*SLOW, "-n", 3000, "--seed", 11, "--workers", 1, "--out", out, "-q"]
    kill_outright_after(args, out, rows=50)
    path = journal.journal_path(out)
    code = journal.read(path)[0]["code"]
    other = "0123456789ab" + code[12:]  # of the same length: the journal's header keeps its size
    path.write_bytes(path.read_bytes().replace(f'"{code}"'.encode(), f'"{other}"'.encode(), 1))

    again = sim(*args)
    assert again.returncode == 1
    kept = meta(out)["n_done"]
    assert kept >= 50 and meta(out)["completed"] is False
    assert again.stderr.strip() == (
        f"Error: recovered {kept:,} finished deals of a killed run into {out}; its deals "
        f"were played by other code of the rules and policies (code {other}, this "
        f"sim's {code}), so --resume cannot finish it: run it again whole"
    )
    assert sim(*args, "--resume").returncode == 1
    assert sim(*args, "--overwrite").returncode == 0
    assert table(out).equals(clean_run(tmp_path, 3000, 11))


def test_resume_with_overwrite_is_refused_before_any_file_is_touched(tmp_path):
    out = tmp_path / "r.parquet"
    args = [*SLOW, "-n", 3000, "--seed", 10, "--workers", 1, "--out", out, "-q"]
    kill_outright_after(args, out, rows=50)
    left = journal.journal_path(out).read_bytes()

    both = sim(*args, "--resume", "--overwrite")
    assert both.returncode == 2
    assert both.stderr.strip() == (
        "Error: --resume and --overwrite exclude each other: --resume completes the rows "
        "a file holds, --overwrite replaces them"
    )
    assert journal.journal_path(out).read_bytes() == left and not out.exists()
    assert sim(*args, "--resume").returncode == 0
    assert table(out).equals(clean_run(tmp_path, 3000, 10))


def test_journal_lines_are_streamed_whole_lines_only(tmp_path):
    # A run's move log is merged from its journal line by line, never held whole: the
    # lines come lazily, at most `count`, and a last line cut short by a kill is left out.
    import gzip
    import types

    from sim.engine.run import journal

    plain, packed = tmp_path / "log.jsonl", tmp_path / "log.jsonl.gz"
    plain.write_text("a\nb\nc\npartial")
    packed.write_bytes(gzip.compress(b"a\nb\nc\npartial"))
    for path in (plain, packed):
        lines = journal.iter_lines(path, 10)
        assert isinstance(lines, types.GeneratorType)
        assert list(lines) == ["a\n", "b\n", "c\n"]
        assert list(journal.iter_lines(path, 2)) == ["a\n", "b\n"]
    assert list(journal.iter_lines(tmp_path / "none.jsonl", 5)) == []


def test_a_recovery_note_counts_one_deal_in_the_singular():
    from sim.engine.run import salvage

    assert salvage._deals(1, "finished ") == "1 finished deal"
    assert salvage._deals(1_234, "finished ") == "1,234 finished deals"
    assert salvage._deals(0) == "0 deals"
