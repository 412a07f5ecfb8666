"""Runs on a Dask cluster give the rows of a local run, even when a worker dies."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, played, sim

from sim.engine.games import CALC
from sim.engine.run.runner import RunRequest, run
from sim.policies.registry import resolve

distributed = pytest.importorskip("distributed")


@pytest.mark.parametrize(
    "command",
    [
        ["calc", "-p", "planner", "-n", "20000", "--seed", "8"],
        # a search policy with its own plan in the state, redeals and a verdict per phase
        ["montana", "-p", "solver", "--param", "nodes=20000", "-n", "60", "--seed", "8"],
    ],
    ids=["calc-planner", "montana-solver"],
)
def test_a_local_cluster_run_equals_the_local_run(tmp_path, command):
    here, there = tmp_path / "here.parquet", tmp_path / "there.parquet"
    args = [*command, "--workers", "2", "-q"]
    assert sim(*args, "--out", str(here)).exit_code == 0
    assert sim(*args, "--scheduler", "local", "--out", str(there)).exit_code == 0
    assert pq.read_table(here).equals(pq.read_table(there))
    meta = pq.read_metadata(there).metadata[b"sim"]
    assert b'"executor": "dask local"' in meta and b'"completed": true' in meta


@pytest.fixture
def cluster(monkeypatch):
    # Worker processes import the test's plug-in policy from here.
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "tests" / "plugins"))
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None
        ) as local,
        distributed.Client(local) as client,
    ):
        yield local, client


def test_a_worker_that_dies_loses_no_deal_and_duplicates_none(tmp_path, cluster):
    local, client = cluster
    n = 4000
    request = RunRequest(
        game=CALC,
        policy=resolve("calc", "slow_greedy:py_greedy"),
        policy_spec="slow_greedy:py_greedy",
        params={"delay_ms": 2.0},
        rules={"wastes": 4},
        seed=21,
        start=0,
        n=n,
        workers=2,
        out=tmp_path / "r.parquet",
        scheduler=local.scheduler_address,
    )
    done = []
    killed = []

    def kill_a_worker_mid_run():
        deadline = time.time() + 60
        while sum(done) <= 256 and time.time() < deadline:  # the first cluster chunk is in
            time.sleep(0.02)
        pids = client.run(os.getpid)
        victim = sorted(pids.values())[0]
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)

    killer = threading.Thread(target=kill_a_worker_mid_run)
    killer.start()
    result = run(request, progress=done.append)
    killer.join()
    assert killed and sum(done) == n
    assert result.completed
    deals = pq.read_table(tmp_path / "r.parquet").column("deal").to_pylist()
    assert deals == list(range(n))  # every deal exactly once, in order
    local_rows = tmp_path / "local.parquet"
    assert sim("calc", "-n", str(n), "--seed", "21", "--out", str(local_rows), "-q").exit_code == 0
    ours = played(pq.read_table(tmp_path / "r.parquet"))
    assert ours.equals(played(pq.read_table(local_rows)))


def test_interrupting_a_cluster_run_keeps_its_deals_and_resume_completes_it(tmp_path):
    out = tmp_path / "r.parquet"
    command = [sys.executable, "-m", "sim", "calc", "-p", "slow_greedy:py_greedy"]
    command += ["--param", "delay_ms=1", "-n", "6000", "--seed", "12", "--scheduler", "local"]
    command += ["--workers", "2", "--out", str(out), "-q"]
    env = os.environ | {"PYTHONPATH": str(ROOT / "tests" / "plugins")}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not (tmp_path / ".r.parquet.journal").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(4.0)
    process.send_signal(signal.SIGINT)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 130, stderr
    kept = json.loads(pq.read_metadata(out).metadata[b"sim"])
    assert kept["completed"] is False and 0 < kept["n_done"] < 6000
    resumed = subprocess.run(command + ["--resume"], cwd=ROOT, env=env, capture_output=True)
    assert resumed.returncode == 0, resumed.stderr
    local_rows = tmp_path / "local.parquet"
    assert sim("calc", "-n", "6000", "--seed", "12", "--out", str(local_rows), "-q").exit_code == 0
    ours = played(pq.read_table(out))
    assert ours.equals(played(pq.read_table(local_rows)))


def test_ctrl_c_to_the_process_group_of_a_local_cluster_run_is_one_line(tmp_path):
    # A terminal's Ctrl-C reaches every process of its group, the cluster's workers too.
    out = tmp_path / "r.parquet"
    command = [sys.executable, "-m", "sim", "calc", "-p", "slow_greedy:py_greedy"]
    command += ["--param", "delay_ms=20", "-n", "2000", "--scheduler", "local"]
    command += ["--workers", "2", "--out", str(out), "-q"]
    env = os.environ | {"PYTHONPATH": str(ROOT / "tests" / "plugins")}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.time() + 60
    while not (tmp_path / ".r.parquet.journal").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(3.0)  # the cluster's workers are playing chunks
    os.killpg(process.pid, signal.SIGINT)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 130
    assert stderr.startswith("interrupted: ") and stderr.count("\n") == 1, stderr
    assert json.loads(pq.read_metadata(out).metadata[b"sim"])["n_done"] > 0


def _sim_subprocess(*args, timeout=180):
    env = os.environ | {"PYTHONPATH": str(ROOT / "tests" / "plugins"), "TQDM_DISABLE": "1"}
    command = [sys.executable, "-m", "sim", *map(str, args)]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


LOOPS = "took over 2 s on one deal (a loop, or a slow policy: --deal-timeout allows it more)"


# seed 1 first triggers the plug-in at deal 51, among the first deals, which one local
# worker plays to size the tasks; seed 8 at deal 472, inside a task
@pytest.mark.parametrize(
    "plugin, seed, deal, reason",
    [
        ("loops", 1, 51, LOOPS),
        ("loops", 8, 472, LOOPS),
        # in the sizing deals, as in any local run: held interpreter locks, ended
        # processes and a policy's own KeyboardInterrupt are the pool's to stop and name
        ("loops-compiled", 1, 51, LOOPS),
        ("dies", 1, 51, "ended its worker process, twice (exit code 9)"),
        ("interrupts", 1, 51, "raised KeyboardInterrupt"),
        # in a task: Dask gives up on a chunk that ends its workers, and it is played
        # here to find and name the deal; a KeyboardInterrupt in a task is the policy's
        ("dies", 8, 472, "ended its worker process, twice (exit code 9)"),
        ("interrupts", 8, 472, "raised KeyboardInterrupt"),
    ],
    ids=[
        "sizing-chunk",
        "task",
        "sizing-compiled",
        "sizing-dies",
        "sizing-interrupts",
        "task-dies",
        "task-interrupts",
    ],
)
def test_a_misbehaving_policy_stops_a_cluster_run_naming_the_deal(
    tmp_path, plugin, seed, deal, reason
):
    out, n = tmp_path / "r.parquet", 2000
    attribute = plugin.replace("-", "_") + ("_nb" if plugin.endswith("compiled") else "")
    result = _sim_subprocess(
        "calc", "-p", f"misbehaving:{attribute}", "-n", n, "--seed", seed, "--scheduler",
        "local", "--workers", 2, "--deal-timeout", 2, "--out", out, "-q",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"Error: policy {plugin} {reason} (seed {seed}, deal {deal}); {deal:,} of {n:,} "
        f"deals kept in {out} (marked incomplete; run the same command with --resume to "
        "finish)"
    )
    assert pq.read_table(out).column("deal").to_pylist() == list(range(deal))


def _chunk_threads():
    return [t.name for t in threading.enumerate() if t.name.startswith("sim-chunk-")]


def _stopped_run(tmp_path, local, plugin):
    return _sim_subprocess(
        "calc", "-p", f"misbehaving:{plugin}", "-n", 2000, "--seed", 8, "--deal-timeout", 2,
        "--scheduler", local.scheduler_address, "--out", tmp_path / "r.parquet", "-q",
    )  # fmt: skip


def test_a_policy_that_loops_is_stopped_on_the_worker_and_leaves_no_thread(tmp_path, cluster):
    local, client = cluster
    before = client.run(os.getpid)
    result = _stopped_run(tmp_path, local, "loops")
    assert result.returncode == 1 and "(seed 8, deal 472)" in result.stderr
    time.sleep(3)  # a cancelled chunk still in play ends within its own deal timeout
    assert client.run(os.getpid) == before  # no worker needed a restart
    assert all(names == [] for names in client.run(_chunk_threads).values())


def test_a_policy_stuck_in_one_call_gets_the_workers_of_the_run_restarted(tmp_path, cluster):
    local, client = cluster
    before = set(client.run(os.getpid).values())
    result = _stopped_run(tmp_path, local, "sleeps")
    assert result.returncode == 1 and "(seed 8, deal 472)" in result.stderr
    client.wait_for_workers(2, timeout=60)
    after = client.run(os.getpid)
    assert set(after.values()) != before  # the worker of deal 472, at least, is new
    assert all(names == [] for names in client.run(_chunk_threads).values())


def test_a_local_cluster_says_nothing_when_the_usual_dashboard_port_is_taken(tmp_path):
    # Dask's default dashboard port, 8787, may be held by another run or program.
    import contextlib
    import socket

    with contextlib.ExitStack() as stack:
        holder = stack.enter_context(socket.socket())
        with contextlib.suppress(OSError):  # held already by something else: as good
            holder.bind(("", 8787))
            holder.listen()
        result = _sim_subprocess(
            "calc", "-n", 500, "--scheduler", "local", "--workers", 1, "--out",
            tmp_path / "r.parquet", "-q",
        )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
