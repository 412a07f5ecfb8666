"""The game contract, checked for every registered game alike (the built-ins and the
example game plugged in through its entry point): rows independent of workers, the
compiled and the interpreted paths agreeing, move logs that the game's independent
referee accepts, and show and compare working from the Game record alone."""

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, sim

from sim.engine.games import get_game, registered_games

GAMES = sorted(registered_games())
# A cheap policy of each built-in game; any other game plays its first policy.
CHEAP = {"calc": "planner", "montana": "greedy", "jokers": "greedy"}


def cheap_policy(game):
    from sim.policies.registry import builtin_policies

    return CHEAP.get(game) or builtin_policies(game)[0].name


def test_the_example_game_is_registered_through_its_entry_point():
    assert "pairs" in GAMES
    assert get_game("pairs").module_name == "sim_pairs.rules"


@pytest.mark.parametrize("game", GAMES)
def test_one_and_two_workers_write_identical_rows(tmp_path, game):
    one, two = tmp_path / "1.parquet", tmp_path / "2.parquet"
    args = [game, "-p", cheap_policy(game), "-n", "6000", "--seed", "77", "--start", "500", "-q"]
    assert sim(*args, "--workers", "1", "--out", str(one)).exit_code == 0
    assert sim(*args, "--workers", "2", "--out", str(two)).exit_code == 0
    assert pq.read_table(one).equals(pq.read_table(two))


@pytest.mark.parametrize("game", GAMES)
def test_every_logged_deal_passes_the_independent_referee(tmp_path, game):
    log = tmp_path / "moves.jsonl"
    args = [game, "-p", cheap_policy(game), "-n", "200", "--seed", "3", "-q"]
    assert sim(*args, "--out", str(tmp_path / "r.parquet"), "--log-moves", str(log)).exit_code == 0
    result = sim("replay", str(log))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"checked 200 deals in {log}: 200 valid, 0 invalid"


PURE_PYTHON = """
import json, sys
import numpy as np
from sim.engine.games import get_game
from sim.policies.registry import resolve
game = get_game(sys.argv[1])
policy = resolve(game.name, sys.argv[2])
rows = np.zeros((40, len(game.columns)), np.int32)
logs = np.zeros((40, 0), np.int16)
rules = game.rules_vector(game.default_rules())
params = policy.param_vector(policy.settings())
game.module.play_chunk_nb(policy.choose, 5, 100, rules, params, rows, logs)
print(json.dumps(rows.tolist()))
"""


@pytest.mark.parametrize("game", GAMES)
def test_compiled_and_pure_python_paths_agree(game):
    outputs = []
    for disable in ("0", "1"):
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", PURE_PYTHON, game, cheap_policy(game)],
            env=os.environ | {"NUMBA_DISABLE_JIT": disable},
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]


def builtin_policy_cases():
    from sim.policies.registry import builtin_policies

    return [(g, p.name) for g in GAMES for p in builtin_policies(g)]


@pytest.mark.parametrize("game, name", builtin_policy_cases())
def test_builtin_policies_never_write_into_the_rules_part_of_the_state(game, name):
    """Built-ins run unguarded for speed; here the plug-in guard watches each of them."""
    import numpy as np

    from sim.engine import kernel
    from sim.engine.run.job import guarded, play_deal_python
    from sim.policies.registry import resolve

    spec, policy = get_game(game), resolve(game, name)
    module = spec.module
    watched = guarded(policy.choose, module.POLICY_SCRATCH, compiled=False)
    rules = spec.rules_vector(spec.default_rules())
    params = policy.param_vector(policy.settings())
    state = np.zeros(module.STATE_SIZE, np.int16)
    for deal in range(2):
        log = np.zeros(0, np.int16)
        fault = play_deal_python(module, 1, deal, rules, watched, params, state, log)
        assert fault == kernel.FAULT_NONE, f"{name} on deal {deal}"


@pytest.mark.parametrize("game", GAMES)
def test_show_draws_every_game_from_its_record(game):
    result = sim("show", game, "-p", cheap_policy(game), "--deal", 2, "--final", "--no-color")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{game} · seed 0 · deal 2 · policy {cheap_policy(game)}")
    assert "\noutcome: " in result.output


@pytest.mark.parametrize("game", GAMES)
def test_compare_pairs_two_policies_of_every_game(tmp_path, game):
    from sim.policies.registry import builtin_policies

    names = [p.name for p in builtin_policies(game)][:2]
    for name in names:
        args = [
            game,
            "-p",
            name,
            "-n",
            300,
            "--seed",
            4,
            "-q",
            "--out",
            tmp_path / f"{name}.parquet",
        ]
        assert sim(*args).exit_code == 0
    result = sim("compare", *(tmp_path / f"{name}.parquet" for name in names))
    assert result.exit_code == 0, result.output
    assert all(name in result.output for name in names)


@pytest.mark.parametrize("game", GAMES)
def test_every_row_a_policy_plays_keeps_the_games_invariants_and_a_broken_one_is_named(game):
    from sim.engine.run.job import make_job, play_job
    from sim.policies.registry import resolve

    record = get_game(game)
    policy = resolve(game, cheap_policy(game))
    rules = record.default_rules()
    rows = play_job(make_job(record, policy, 5, rules, policy.settings(()), False), 0, 500).rows
    assert record.first_impossible_row(rows, rules) is None
    broken = rows.copy()
    broken[123] = -1  # -1 throughout: no game's row is
    index, why = record.first_impossible_row(broken, rules)
    assert index == 123 and "=-1" in why
    if game == "calc":
        broken = rows.copy()
        broken[7] = 0  # a row nobody wrote: score 0, no move
        assert record.first_impossible_row(broken, rules) == (
            7,
            "score is 4..52; the row has score=0",
        )
