"""Workers whose plug-in forks them, writes over their rows or into their pipe, starts
processes of its own, or stalls: only rows a worker finished correctly are kept, the run
ends in one line, and no process it started, nor any of theirs, is left behind."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, played
from test_faults import first_trigger_deal

from sim.engine.games import get_game
from sim.engine.run import journal, pool
from sim.engine.run.job import job_spec
from sim.engine.run.runner import RunRequest
from sim.policies.registry import resolve

PLUGINS = ROOT / "tests" / "plugins"
ENV = os.environ | {"PYTHONPATH": str(PLUGINS), "TQDM_DISABLE": "1"}
PLUGIN = "misbehaving.py"
TRIGGER = 5  # misbehaving.TRIGGER: the card that leads the stock of the deals it acts on


def run_in_own_session(tmp_path, *args, env=ENV):
    """`sim calc ARGS` as the leader of a session of its own: (the finished process,
    its stderr, the processes of its session still alive once it has ended)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sim", "calc", *map(str, args)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    _, stderr = process.communicate(timeout=120)
    return process, stderr, alive_in_session(process.pid)


def alive_in_session(session, timeout=5):
    """The processes of a session that are not dead (zombies are), once those that are
    being killed have had `timeout` seconds to go."""
    deadline = time.time() + timeout
    while True:
        left = [pid for pid in _live_processes() if _session_of(pid) == session]
        if not left or time.time() > deadline:
            return left
        time.sleep(0.05)


def _live_processes():
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _state_of(int(entry.name)) not in (None, "Z"):
            yield int(entry.name)


def _stat_fields(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _state_of(pid):
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def _session_of(pid):
    fields = _stat_fields(pid)
    return int(fields[3]) if fields else None


def clean_rows(tmp_path, n):
    """The rows of the compiled greedy, which every misbehaving plug-in plays like."""
    out = tmp_path / "clean.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "sim", "calc", "-n", str(n), "--out", str(out), "-q"],
        cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return played(pq.read_table(out))


def assert_rows_are_those_of_a_clean_run(tmp_path, out, n):
    """Every row kept is the row a clean run gives for its deal, and in order."""
    if not out.exists():
        return 0
    kept = played(pq.read_table(out))
    assert kept.equals(clean_rows(tmp_path, n).slice(0, kept.num_rows))
    return kept.num_rows


def assert_one_error_line(stderr, pattern):
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert re.fullmatch(pattern, lines[0]), lines[0]


def kept_text(out, n):
    return rf"(; \d[\d,]* of {n:,} deals kept in {re.escape(str(out))} \(marked incomplete; .*\))?"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_plugin_that_forks_its_worker_stops_the_run_at_that_deal_leaving_no_process(
    tmp_path, workers
):
    out = tmp_path / "r.parquet"
    args = ["-p", f"{PLUGINS / PLUGIN}:forkrun", "-n", 200, "--workers", workers, "--out", out]
    process, stderr, left = run_in_own_session(tmp_path, *args)
    assert process.returncode == 1
    assert_one_error_line(
        stderr,
        r"Error: policy forkrun forked its worker process, and the copy \(process \d+\) "
        r"played on \(seed 0, deal 0\)",
    )
    assert left == []
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no row of deal 0 is proven


@pytest.mark.parametrize("workers", [1, 2])
def test_the_rows_before_a_fork_are_kept_as_a_clean_run_plays_them(tmp_path, workers):
    out, n = tmp_path / "r.parquet", 400
    plugin = f"{PLUGINS / PLUGIN}:forkrun"
    args = ["-p", plugin, "--param", "fork_at=3000", "-n", n, "--workers", workers, "--out", out]
    process, stderr, left = run_in_own_session(tmp_path, *args, "-q")
    assert process.returncode == 1
    assert_one_error_line(
        stderr,
        r"Error: policy forkrun forked its worker process, and the copy \(process \d+\) "
        rf"played on \(seed 0, deal (\d+)\){kept_text(out, n)}",
    )
    deal = int(re.search(r"deal (\d+)\)", stderr).group(1))
    assert deal > 0
    assert assert_rows_are_those_of_a_clean_run(tmp_path, out, n) == deal
    assert left == []


@pytest.mark.parametrize("workers", [1, 2])
def test_rows_a_forked_copy_wrote_over_are_never_kept(tmp_path, workers):
    out, n = tmp_path / "r.parquet", 3000
    args = ["-p", f"{PLUGINS / PLUGIN}:fork_scribbles", "-n", n, "--workers", workers]
    process, stderr, left = run_in_own_session(tmp_path, *args, "--out", out, "-q")
    assert process.returncode == 1
    assert_one_error_line(
        stderr,
        r"Error: policy fork-scribbles gave a result row that no play of Calculation gives "
        rf"\([a-z_]+ is .*; the row has .*=-1.*\) \(seed 0, deal \d+\){kept_text(out, n)}",
    )
    assert_rows_are_those_of_a_clean_run(tmp_path, out, n)
    assert left == []


@pytest.mark.parametrize(
    "forge, disturbance",
    [
        (0, r"a message from process \d+, not its worker \d+ \(a forked copy of it\?\)"),
        (1, r"message 0 came when \d+ was due \(out of order\)"),
    ],
)
def test_a_message_a_forked_copy_writes_into_the_pipe_stops_the_run(tmp_path, forge, disturbance):
    out, n = tmp_path / "r.parquet", 4000
    plugin = f"{PLUGINS / PLUGIN}:fork_writes"
    args = ["-p", plugin, "--param", f"forge={forge}", "-n", n, "--workers", 2, "--out", out]
    process, stderr, left = run_in_own_session(tmp_path, *args, "-q")
    assert process.returncode == 1
    assert_one_error_line(
        stderr,
        rf"Error: policy fork-writes disturbed its worker's pipe: {disturbance} "
        rf"\(seed 0, deal \d+\){kept_text(out, n)}",
    )
    assert_rows_are_those_of_a_clean_run(tmp_path, out, n)
    assert left == []


def test_a_child_process_a_plugin_started_is_gone_after_a_complete_run(tmp_path):
    started = tmp_path / "children.txt"
    env = ENV | {"SIM_TEST_CHILD_PID_FILE": str(started)}
    out = tmp_path / "r.parquet"
    args = ["-p", f"{PLUGINS / PLUGIN}:spawns", "-n", 300, "--workers", 2, "--out", out, "-q"]
    process, stderr, left = run_in_own_session(tmp_path, *args, env=env)
    assert (process.returncode, stderr) == (0, "")
    children = [int(pid) for pid in started.read_text().split()]
    assert len(children) == 2  # one a worker
    assert left == []
    assert all(_state_of(pid) in (None, "Z") for pid in children)


def naps_spec():
    calc = get_game("calc")
    naps = resolve("calc", "misbehaving:naps")
    request = RunRequest(
        game=calc, policy=naps, policy_spec="misbehaving:naps", params={},
        rules=calc.default_rules(), seed=3, start=0, n=2000, workers=1, out=None,
    )  # fmt: skip
    return job_spec(request)


def seconds_to_stop_a_stalled_deal(spec, deal_timeout, asleep, kills):
    """From the moment the policy fell asleep on a deal to the kill of its worker, which
    the run's fault then names. Play starts at that deal: nothing before it is played."""
    first = first_trigger_deal(3, TRIGGER)
    planner = pool.ChunkPlanner(first, first + 10, 1)
    kills.clear()
    for result in pool.play(spec, planner, 1, lambda: False, deal_timeout):
        if result.fault is not None:
            assert result.fault.startswith(f"took over {deal_timeout:g} s on one deal")
            return kills[0] - float(asleep.read_text())
    raise AssertionError("the stalled deal was never stopped")


def test_a_deal_timeout_shorter_than_the_poll_is_kept_to_50_ms(tmp_path, monkeypatch):
    asleep, kills = tmp_path / "asleep.txt", []
    monkeypatch.setenv("SIM_TEST_NAP_FILE", str(asleep))
    kill = pool._Worker.kill

    def timed_kill(worker):
        kills.append(time.monotonic())
        kill(worker)

    monkeypatch.setattr(pool._Worker, "kill", timed_kill)
    spec = naps_spec()
    # The least of three: a machine busy with other work can delay any one of them.
    # (The deal began a moment before the policy noted the time: a hair under 0.1 s.)
    took = min(seconds_to_stop_a_stalled_deal(spec, 0.1, asleep, kills) for _ in range(3))
    assert abs(took - 0.1) <= 0.05


SLOW = ["-p", "slow_greedy:py_greedy", "--param", "delay_ms=2"]


def start_in_own_session(tmp_path, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "sim", "calc", *map(str, args)],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def wait_for(condition, timeout=60):
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, "waited in vain"
        time.sleep(0.02)


def test_a_worker_killed_from_outside_and_replaced_is_noted_in_one_line(tmp_path):
    out = tmp_path / "r.parquet"
    process = start_in_own_session(tmp_path, *SLOW, "-n", 1500, "--workers", 2, "--out", out, "-q")
    wait_for(lambda: journal.journal_path(out).exists() and len(_children(process.pid)) == 2)
    os.kill(_children(process.pid)[0], signal.SIGKILL)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert_one_error_line(
        stderr,
        r"note: a worker process was killed by signal 9( during deal \d+)? and was replaced; "
        r"its deals were played again \(rows unchanged\)",
    )
    assert assert_rows_are_those_of_a_clean_run(tmp_path, out, 1500) == 1500


def _children(pid):
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def interrupt_a_logged_run(tmp_path):
    """A slow logged run, Ctrl-C'd once some deals are kept: (its args, deals kept)."""
    out, log = tmp_path / "r.parquet", tmp_path / "moves.jsonl"
    args = [*SLOW, "-n", 1500, "--seed", 9, "--out", out, "--log-moves", log, "-q"]
    process = start_in_own_session(tmp_path, *args)

    def rows_kept():
        with contextlib.suppress(OSError, journal.JournalError):
            return len(journal.read(journal.journal_path(out))[2]) >= 30
        return False

    wait_for(rows_kept)
    os.killpg(process.pid, signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 130
    return args, json.loads(pq.read_metadata(out).metadata[b"sim"])["n_done"]


@pytest.mark.parametrize("edit", ["moves reversed", "outcome won"])
def test_resume_refuses_a_kept_move_log_line_edited_by_hand(tmp_path, edit):
    # Its header keys are as the run wrote them: only the digest of the lines, recorded
    # as the run ended, tells the edit.
    args, kept = interrupt_a_logged_run(tmp_path)
    log = tmp_path / "moves.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    line = json.loads(lines[10])
    if edit == "moves reversed":
        line["moves"].reverse()
    else:
        line["outcome"] = "won"
    lines[10] = json.dumps(line) + "\n"
    log.write_text("".join(lines))
    refused = start_in_own_session(tmp_path, *args, "--resume")
    _, stderr = refused.communicate(timeout=120)
    assert refused.returncode == 1
    assert stderr.strip() == (
        f"Error: cannot resume with {log}: its first {kept:,} lines are not the move logs "
        "the run wrote (edited since?)"
    )
    assert len(log.read_text().splitlines()) == kept
