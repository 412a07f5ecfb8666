"""`sim calc` as a user runs it: options, errors, files, determinism, interruption."""

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, played, sim

from sim.cli.main import speed_text
from sim.policies.registry import builtin_policies


def rows(path):
    return pq.read_table(path)


def meta(path):
    return json.loads(pq.read_metadata(path).metadata[b"sim"])


@pytest.mark.parametrize(
    ("speed", "text"),
    [(0.2536, "0.25"), (3.44, "3.4"), (9.4, "9.4"), (10.4, "10"), (186_512.3, "186,512")],
)
def test_the_summary_gives_a_slow_policy_s_speed_in_two_figures_not_zero(speed, text):
    assert speed_text(speed) == text


def test_summary_names_wins_interval_speed_and_file(tmp_path):
    out = tmp_path / "r.parquet"
    result = sim("calc", "-n", "2000", "--out", str(out))
    assert result.exit_code == 0
    assert "deals       2,000" in result.output
    assert "95% CI" in result.output and "deals/s" in result.output
    assert f"written     {out}" in result.output
    table = rows(out)
    assert table.num_rows == 2000
    assert table.column("deal").to_pylist() == list(range(2000))
    description = meta(out)
    assert description["completed"] is True and description["n_done"] == 2000
    assert description["game"] == "calc" and description["rules"] == {"wastes": 4}
    assert {"sim_version", "started_at", "wall_time", "seed", "start", "params"} <= set(description)


def test_default_file_goes_under_results_in_a_folder_per_game_named_for_the_run(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = sim("calc", "-n", "1_000", "--seed", "3", "--wastes", "3", "-q")
    assert result.exit_code == 0 and result.output == ""
    assert (tmp_path / "results" / "calc" / "calc-greedy-wastes3-seed3-n1000.parquet").exists()


@pytest.mark.parametrize(
    "text, count", [("1000", 1000), ("1e3", 1000), ("2.5e3", 2500), ("1_500", 1500)]
)
def test_n_accepts_the_ways_people_write_counts(tmp_path, text, count):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", text, "--out", str(out), "-q").exit_code == 0
    assert rows(out).num_rows == count


@pytest.mark.parametrize(
    "text, message",
    [
        ("0", "Error: Invalid value for '-n' / '--deals': '0' is below 1"),
        ("-5", "Error: Invalid value for '-n' / '--deals': '-5' is below 1"),
        ("1.5", "Error: Invalid value for '-n' / '--deals': '1.5' is not a whole number of deals"),
        ("abc", "Error: Invalid value for '-n' / '--deals': 'abc' is not a whole number of deals"),
    ],
)
def test_bad_deal_counts_are_refused_in_one_line(tmp_path, text, message):
    result = sim("calc", "-n", text, "--out", str(tmp_path / "r.parquet"))
    assert result.exit_code == 2
    assert result.output.strip() == message
    assert not any(tmp_path.iterdir())


def test_unknown_policy_lists_the_known_ones(tmp_path):
    result = sim("calc", "--policy", "best", "--out", str(tmp_path / "r.parquet"))
    assert result.exit_code == 2
    known = ", ".join(p.name for p in builtin_policies("calc"))
    assert result.output.strip() == f"Error: unknown policy 'best' for calc (known: {known})"
    assert known.startswith("random, greedy, kings-bottom, planner")


@pytest.mark.parametrize(
    "param, message",
    [
        (
            "depth=2",
            "Error: policy planner has no parameter 'depth' (valid: depth_weight, king_pile)",
        ),
        ("king_pile=yes", "Error: parameter king_pile must be an integer, not 'yes'"),
        ("king_pile=3", "Error: parameter king_pile must be in 0..1"),
        ("depth_weight", "Error: --param takes key=value, not 'depth_weight'"),
    ],
)
def test_bad_policy_parameters_are_refused_naming_the_valid_ones(tmp_path, param, message):
    result = sim("calc", "-p", "planner", "--param", param, "--out", str(tmp_path / "r.parquet"))
    assert result.exit_code == 2
    assert result.output.strip() == message


def test_existing_file_is_kept_unless_overwrite(tmp_path):
    out = tmp_path / "r.parquet"
    out.write_bytes(b"precious")
    result = sim("calc", "-n", "100", "--out", str(out))
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {out} exists; use --overwrite to replace it or --resume to complete it"
    )
    assert out.read_bytes() == b"precious"
    assert sim("calc", "-n", "100", "--out", str(out), "--overwrite", "-q").exit_code == 0
    assert rows(out).num_rows == 100


def test_missing_folder_is_created_and_unusable_one_is_refused(tmp_path):
    out = tmp_path / "deep" / "er" / "r.parquet"
    assert sim("calc", "-n", "10", "--out", str(out), "-q").exit_code == 0
    assert out.exists()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = sim("calc", "-n", "10", "--out", str(blocker / "r.parquet"))
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot use {blocker / 'r.parquet'} as --out: Not a directory"
    )


def test_rule_option_out_of_range_is_refused(tmp_path):
    result = sim("calc", "--wastes", "9", "--out", str(tmp_path / "r.parquet"))
    assert result.exit_code == 2
    assert result.output.strip() == (
        "Error: Invalid value for '--wastes': 9 is not in the range 1<=x<=8."
    )


def test_one_and_two_workers_write_identical_rows(tmp_path):
    one, two = tmp_path / "1.parquet", tmp_path / "2.parquet"
    args = ["calc", "-p", "planner", "-n", "30000", "--seed", "42", "--start", "1000", "-q"]
    assert sim(*args, "--workers", "1", "--out", str(one)).exit_code == 0
    assert sim(*args, "--workers", "2", "--out", str(two)).exit_code == 0
    assert rows(one).equals(rows(two))
    assert rows(one).column("deal")[0].as_py() == 1000


def test_a_deal_depends_only_on_seed_and_index(tmp_path):
    whole, part = tmp_path / "whole.parquet", tmp_path / "part.parquet"
    assert sim("calc", "-n", "500", "--seed", "9", "--out", str(whole), "-q").exit_code == 0
    assert (
        sim(
            "calc", "-n", "100", "--seed", "9", "--start", "250", "--out", str(part), "-q"
        ).exit_code
        == 0
    )
    assert rows(whole).slice(250, 100).equals(rows(part))


def test_python_policy_from_a_module_plays_like_the_compiled_one(tmp_path):
    compiled, python = tmp_path / "c.parquet", tmp_path / "p.parquet"
    assert sim("calc", "-n", "300", "--out", str(compiled), "-q").exit_code == 0
    result = sim("calc", "-p", "slow_greedy:py_greedy", "-n", "300", "--out", str(python), "-q")
    assert result.exit_code == 0
    ours, theirs = rows(compiled), rows(python)
    assert played(ours).equals(played(theirs))
    assert theirs.column("policy")[0].as_py() == "py-greedy"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("slow_greedy:nothing", "Error: module 'slow_greedy' has no policy 'nothing'"),
        (
            "slow_greedy:py-greedy",  # the policy's name, not the attribute holding it
            "Error: module 'slow_greedy' has no policy 'py-greedy' (the policy named so is "
            "its attribute py_greedy: give slow_greedy:py_greedy)",
        ),
        (
            "slow_greedy:not_a_policy",
            "Error: slow_greedy:not_a_policy is not a policy"
            " (wrap it with sim.policies.registry.policy)",
        ),
        (
            "no_such_module:x",
            "Error: cannot import policy module 'no_such_module': No module named 'no_such_module'",
        ),
    ],
)
def test_bad_plugin_specs_are_refused(tmp_path, spec, message):
    result = sim("calc", "-p", spec, "--out", str(tmp_path / "r.parquet"))
    assert result.exit_code == 2
    assert result.output.strip() == message


def test_move_log_lines_follow_the_rule_book(tmp_path):
    log = tmp_path / "moves.jsonl"
    out = tmp_path / "r.parquet"
    assert (
        sim(
            "calc", "-n", "20", "--wastes", "3", "--log-moves", str(log), "--out", str(out), "-q"
        ).exit_code
        == 0
    )
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["deal"] for line in lines] == list(range(20))
    first = lines[0]
    assert first["game"] == "calc" and first["wastes"] == 3 and first["policy"] == "greedy"
    assert len(first["layout"]["bases"]) == 4 and len(first["layout"]["stock"]) == 48
    assert first["score"] == rows(out).column("score")[0].as_py()


def test_compiled_and_pure_python_paths_agree():
    code = (
        "import numpy as np, sys\n"
        "from sim.engine import calc\n"
        "from sim.policies.registry import builtin_policies\n"
        "for p in builtin_policies('calc')[:4]:  # the heuristics\n"
        "    for w in (4, 3):\n"
        "        rows = np.zeros((200, len(calc.COLUMNS)), np.int32)\n"
        "        calc.play_chunk_nb(p.choose, 13, 0, np.array([w], np.int64),"
        " p.param_vector(p.settings()), rows, np.zeros((200, 0), np.int16))\n"
        "        sys.stdout.write(p.name + str(w) + ':' + rows.tobytes().hex() + '\\n')\n"
    )
    outputs = []
    for disable in ("0", "1"):
        env = os.environ | {"NUMBA_DISABLE_JIT": disable}
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", code],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 8


# SIGTERM to the whole process group, in CI too: tests/test_faults.py.
@pytest.mark.parametrize(
    "stop", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)]
)
def test_interrupt_keeps_finished_deals_and_resume_completes_them(tmp_path, stop):
    out = tmp_path / "r.parquet"
    command = [
        sys.executable,
        "-m",
        "sim",
        "calc",
        "-p",
        "slow_greedy:py_greedy",
        "--param",
        "delay_ms=1",  # at least 4 s for the 8,000 deals on two workers, on any machine
        "-n",
        "8000",
    ]
    command += ["--seed", "4", "--out", str(out), "-q"]
    env = os.environ | {"PYTHONPATH": str(ROOT / "tests" / "plugins")}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not (tmp_path / ".r.parquet.journal").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(2.0)
    process.send_signal(stop)
    stderr = process.communicate(timeout=30)[1]
    assert process.returncode == 128 + stop, stderr
    kept = meta(out)
    assert kept["completed"] is False and 0 < kept["n_done"] < 8000
    assert f"interrupted: {kept['n_done']:,} of 8,000 deals kept in {out}" in stderr
    assert rows(out).num_rows == kept["n_done"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]

    resumed = subprocess.run(
        command + ["--resume"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    fresh = tmp_path / "fresh.parquet"
    assert sim("calc", "-n", "8000", "--seed", "4", "--out", str(fresh), "-q").exit_code == 0
    assert played(rows(out)).equals(played(rows(fresh)))
    assert meta(out)["completed"] is True


def test_resume_refuses_a_different_run_and_finds_nothing_to_play_in_a_complete_file(tmp_path):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", "100", "--out", str(out), "-q").exit_code == 0
    result = sim("calc", "-n", "100", "--out", str(out), "--resume")
    assert result.exit_code == 0
    assert result.stderr == (
        f"{out} already holds this run, complete: nothing to play (--overwrite plays it again)\n"
    )
    result = sim("calc", "-n", "100", "--seed", "1", "--out", str(out), "--resume")
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: cannot resume {out}: its seed is 0, this run's is 1"
    result = sim("calc", "-n", "100", "--out", str(tmp_path / "none.parquet"), "--resume")
    assert result.exit_code == 1
    assert (
        result.output.strip()
        == f"Error: nothing to resume: {tmp_path / 'none.parquet'} does not exist"
    )


def test_policies_lists_every_policy_with_its_parameters():
    result = sim("policies", "calc")
    assert result.exit_code == 0
    for name in ("random", "greedy", "kings-bottom", "planner"):
        assert f"  {name}" in result.output
    assert "--param depth_weight=1 (float)" in result.output


def earliest_layout(table):
    """Rows as the first result files held them: of the text columns only `policy`, the
    game's figures as columns of their own, `score` int8 and `moves` int16."""
    stats = table.column("stats").to_pylist()
    figures = {name: [dict(row)[name] for row in stats] for name, _ in stats[0]}
    table = table.select(["seed", "deal", "policy", "won", "score", "moves", "outcome"])
    table = table.set_column(4, "score", table.column("score").cast(pa.int8()))
    table = table.set_column(5, "moves", table.column("moves").cast(pa.int16()))
    for name, values in figures.items():
        table = table.add_column(table.num_columns - 1, name, pa.array(values, pa.int8()))
    return table


def test_resume_brings_a_file_from_before_rows_said_what_made_them_up_to_date(tmp_path):

    old, fresh = tmp_path / "old.parquet", tmp_path / "fresh.parquet"
    assert sim("calc", "-n", 600, "--seed", 8, "--out", fresh, "-q").exit_code == 0
    description = meta(fresh) | {"completed": False, "n_done": 250}
    rows_then = earliest_layout(pq.read_table(fresh).slice(0, 250))
    pq.write_table(rows_then.replace_schema_metadata({"sim": json.dumps(description)}), old)
    assert sim("calc", "-n", 600, "--seed", 8, "--out", old, "--resume", "-q").exit_code == 0
    assert pq.read_table(old).equals(pq.read_table(fresh))


def test_a_local_run_imports_nothing_it_does_not_use(tmp_path):
    # Each of these costs tens of milliseconds of every run that imports it.
    unused = ["pandas", "scipy.linalg", "asyncio", "sim.engine.run.cluster"]
    unused += ["sim.policies.calc_strong"]  # the searching policies: greedy never calls them
    code = (
        "import sys\n"
        "from sim.cli.main import main\n"
        "try:\n"
        f"    main(['calc', '-n', '300', '-q', '--out', {str(tmp_path / 'r.parquet')!r}])\n"
        "except SystemExit as done:\n"
        "    assert not done.code, done.code\n"
        f"print(sorted(name for name in {unused!r} if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
