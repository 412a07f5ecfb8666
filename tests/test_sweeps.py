"""Sweeps: policies over a grid of parameter values, on the same deals, into one folder."""

import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
from conftest import ROOT, sim

from sim.engine.run.sweep import settings
from sim.policies.registry import resolve


def test_the_grid_takes_each_policy_over_the_parameters_it_declares_first_slowest():
    planner, greedy = resolve("calc", "planner"), resolve("calc", "greedy")
    grid = settings([planner, greedy], ["depth_weight=0,2", "king_pile=0,1"])
    assert [(s.policy.name, s.params) for s in grid] == [
        ("planner", {"depth_weight": 0.0, "king_pile": 0}),
        ("planner", {"depth_weight": 0.0, "king_pile": 1}),
        ("planner", {"depth_weight": 2.0, "king_pile": 0}),
        ("planner", {"depth_weight": 2.0, "king_pile": 1}),
        ("greedy", {}),
    ]


def test_a_sweep_writes_one_file_per_setting_equal_to_single_runs_and_compares(tmp_path):
    folder = tmp_path / "sweep"
    args = ["calc", "-n", 3000, "--seed", 5, "--workers", 1]
    result = sim(
        *args, "-p", "planner", "-p", "greedy", "--param", "depth_weight=0,2", "--out", folder
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:3] == [
        "[1/3] planner depth_weight=0.0 king_pile=1",
        "[2/3] planner depth_weight=2.0 king_pile=1",
        "[3/3] greedy",
    ]
    assert "paired with planner depth_weight=0.0 king_pile=1" in result.output
    assert len(list(folder.glob("*.parquet"))) == 3
    single = tmp_path / "single.parquet"
    assert (
        sim(*args, "-p", "planner", "--param", "depth_weight=2", "--out", single, "-q").exit_code
        == 0
    )
    swept = folder / "calc-planner-depthweight2-wastes4-seed5-n3000.parquet"
    assert pq.read_table(swept).equals(pq.read_table(single))


def test_a_sweep_refuses_one_move_log_and_one_result_file(tmp_path):
    grid = ["calc", "-p", "planner", "--param", "depth_weight=0,1", "-n", 10]
    result = sim(*grid, "--log-moves", tmp_path / "m.jsonl")
    assert result.output == (
        "Error: --log-moves logs one run; give a sweep's settings one at a time\n"
    )
    result = sim(*grid, "--out", tmp_path / "x.parquet")
    assert result.output == (
        f"Error: --out {tmp_path / 'x.parquet'}: a sweep writes a folder of result files,"
        " not one file\n"
    )
    result = sim(*grid, "--param", "samples=1,2")
    assert result.output == "Error: no policy among planner has a parameter 'samples'\n"
    assert not list(tmp_path.iterdir())


def test_an_interrupted_sweep_resumes_where_it_stopped(tmp_path):
    folder = tmp_path / "sweep"
    command = [sys.executable, "-m", "sim", "calc", "-p", "planner", "--param"]
    command += ["depth_weight=0,1,2", "-n", "200000", "--workers", "1", "--out", str(folder)]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    second = folder / ".calc-planner-wastes4-seed0-n200000.parquet.journal"
    deadline = time.time() + 120
    while not second.exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 128 + signal.SIGINT, stderr
    assert "sweep stopped at setting 2 of 3; run the same command with --resume" in stderr

    resumed = subprocess.run(command + ["--resume"], cwd=ROOT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    first = folder / "calc-planner-depthweight0-wastes4-seed0-n200000.parquet"
    assert (
        f"[1/3] planner depth_weight=0.0 king_pile=1: {first} already holds this run, "
        "complete: nothing to play (--overwrite plays it again)"
    ) in resumed.stderr.splitlines()
    files = sorted(folder.glob("*.parquet"))
    assert len(files) == 3 and all(pq.read_table(f).num_rows == 200000 for f in files)
    assert not [p for p in os.listdir(folder) if p.startswith(".")]


def test_a_sweep_is_refused_before_any_play_when_another_runs_file_or_nothing_is_there(
    tmp_path,
):
    grid = ["calc", "-p", "planner", "--param", "depth_weight=0,1", "-n", 100, "-q"]
    folder = tmp_path / "sweep"
    assert sim(*grid, "--out", folder).exit_code == 0
    first = folder / "calc-planner-depthweight0-wastes4-seed0-n100.parquet"
    second = folder / "calc-planner-wastes4-seed0-n100.parquet"  # depth_weight=1, the default
    first.write_bytes(second.read_bytes())  # another setting's run under the first's name
    before = second.stat().st_mtime_ns
    result = sim(*grid, "--out", folder)
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {first} exists; use --overwrite to replace the sweep's files,"
        " or --resume to go on with them\n"
    )
    assert second.stat().st_mtime_ns == before
    result = sim(*grid, "--out", tmp_path / "none", "--resume")
    assert result.exit_code == 1
    assert (
        result.output == f"Error: nothing to resume: no file of this sweep in {tmp_path / 'none'}\n"
    )


def test_a_parameter_given_twice_is_refused():
    result = sim("calc", "-p", "planner", "--param", "depth_weight=1", "--param", "depth_weight=2")
    assert result.output == (
        "Error: --param depth_weight is given twice; list its values as depth_weight=A,B\n"
    )


def test_two_sweeps_of_different_grids_get_different_default_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for grid in ("depth_weight=0,1", "king_pile=0,1"):
        assert sim("calc", "-p", "planner", "--param", grid, "-n", 50, "-q").exit_code == 0
    assert sorted(p.name for p in (tmp_path / "results" / "calc").iterdir()) == [
        "sweep-planner-depthweight0,1-wastes4-seed0-n50",
        "sweep-planner-kingpile0,1-wastes4-seed0-n50",
    ]


def test_a_resumed_sweep_keeps_a_complete_file_only_if_it_is_that_settings_run(tmp_path):
    args = ["calc", "-p", "greedy", "-p", "random", "-n", 50, "--out", tmp_path, "-q"]
    assert sim(*args).exit_code == 0
    greedy, random = (
        tmp_path / f"calc-{name}-wastes4-seed0-n50.parquet" for name in ("greedy", "random")
    )
    assert sim(*args, "--resume").exit_code == 0  # every setting done: kept
    random.write_bytes(greedy.read_bytes())
    result = sim(*args, "--resume")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot resume {random}: its policy is 'greedy', this run's is 'random'"
    )
    assert random.read_bytes() == greedy.read_bytes()


def test_a_policy_given_twice_is_refused_not_swept(tmp_path):
    result = sim("calc", "-p", "greedy", "-p", "random", "-p", "greedy", "-n", 10,
                 "--out", tmp_path / "s")  # fmt: skip
    assert (result.exit_code, result.output) == (2, "Error: -p greedy is given twice\n")
    assert not any(tmp_path.iterdir())
