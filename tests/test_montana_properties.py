"""Properties of Montana on many random deals, for every built-in policy."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from montana_helpers import POLICIES, column, play_deals

from sim.engine import montana
from sim.engine.games import GAMES
from sim.engine.referee.montana import check
from sim.engine.run.job import LOG_END, play_chunk_python

# The search policy with a small budget, so that the properties run on many deals.
SETTINGS = {"random": (), "first": (), "greedy": (), "search": ("nodes=300",)}


def referee_run(state):
    """Kept-run length of each row, from the grid alone (M5)."""
    runs = []
    for row in range(4):
        cells = [int(c) for c in state[13 * row : 13 * row + 13]]
        length = 0
        while length < 12 and cells[length] == 4 + cells[0] % 4 + 4 * length:
            length += 1
        runs.append(length if 4 <= cells[0] < 8 else 0)
    return runs


@pytest.mark.parametrize("name", SETTINGS)
def test_every_logged_move_and_redeal_is_legal_for_an_independent_referee(name):
    n = 40 if name == "search" else 300
    rows, logs = play_deals(POLICIES[name], seed=2024, n=n, params=SETTINGS[name])
    rules = GAMES["montana"].default_rules()
    for deal, (row, log) in enumerate(zip(rows, logs, strict=True)):
        line = montana.move_log(2024, deal, rules, [int(a) for a in log if a != LOG_END])
        verdict = check(line | {"game": "montana"})
        assert verdict.ok, (name, deal, str(verdict))
        assert line["score"] == row[column("score")]
        assert line["outcome"] == montana.OUTCOMES[row[column("outcome")]]
        redeals = sum(m.startswith("redeal:") for m in line["moves"])
        assert redeals == row[column("redeals")]
        assert len(line["moves"]) - redeals == row[column("moves")]


@pytest.mark.parametrize("name", SETTINGS)
def test_cards_gaps_and_runs_stay_consistent_after_every_move(name):
    choose = POLICIES[name].choose
    seen = []

    def watching(state, legal, n_legal, params, stream):
        grid = [int(c) for c in state[: montana.CELLS]]
        assert sorted(c for c in grid if c != montana.GAP) == list(range(4, 52))
        gaps = [cell for cell, c in enumerate(grid) if c == montana.GAP]
        assert list(state[montana.GAPS : montana.GAPS + 4]) == gaps
        assert all(state[montana.WHERE + c] == cell for cell, c in enumerate(grid) if c >= 0)
        assert list(state[montana.RUN : montana.RUN + 4]) == referee_run(state)
        seen.append(n_legal)
        return choose(state, legal, n_legal, params, stream)

    policy = POLICIES[name]
    params = policy.param_vector(policy.settings(SETTINGS[name]))
    rules = np.array([2, 5000], np.int64)
    rows = np.zeros((15, len(montana.COLUMNS)), np.int32)
    play_chunk_python(montana, watching, 7, 0, rules, params, rows, np.zeros((15, 0), np.int16))
    assert len(seen) > 15 * 30
    assert (rows[:, column("outcome")] != montana.OUTCOME_CAPPED).all()


@pytest.mark.parametrize("name", ["random", "first", "greedy"])
def test_built_in_heuristics_are_never_capped(name):
    rows, _ = play_deals(POLICIES[name], seed=31, n=20000, log_width=0)
    assert (rows[:, column("outcome")] != montana.OUTCOME_CAPPED).all()
    # a deal takes a few hundred moves at most, far below the cap
    assert rows[:, column("moves")].max() < 1000


def test_deal_scores_are_recorded_for_the_deals_reached_only():
    rows, _ = play_deals(POLICIES["greedy"], seed=12, n=3000, log_width=0)
    redeals = rows[:, column("redeals")]
    scores = rows[:, [column(f"score_deal{k}") for k in (1, 2, 3)]]
    for k in range(3):
        assert ((scores[:, k] == -1) == (redeals < k)).all()
    last = scores[np.arange(len(rows)), redeals]
    assert (last == rows[:, column("score")]).all()
    # greedy never takes a card out of a kept run, and redeals keep the runs
    assert (np.diff(np.where(scores < 0, 99, scores), axis=1)[redeals == 2] >= 0).all()


PURE_PYTHON = """
import json, sys
import numpy as np
from sim.engine import montana
from sim.policies.registry import builtin_policies
settings = json.loads(sys.argv[1])
out = {}
for policy in builtin_policies("montana"):
    if policy.name not in settings:
        continue
    n, params = settings[policy.name]
    rows = np.zeros((n, len(montana.COLUMNS)), np.int32)
    logs = np.zeros((n, 0), np.int16)
    vector = policy.param_vector(policy.settings(params))
    rules = np.array([2, 5000], np.int64)
    montana.play_chunk_nb(policy.choose, 77, 0, rules, vector, rows, logs)
    out[policy.name] = rows.tolist()
print(json.dumps(out))
"""


def test_compiled_and_pure_python_paths_agree():
    settings = {name: (150, list(params)) for name, params in SETTINGS.items()}
    settings["search"] = (4, ["nodes=300"])
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", PURE_PYTHON, json.dumps(settings)],
        capture_output=True,
        text=True,
        env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        check=True,
    )
    pure = json.loads(done.stdout)
    for name, (n, params) in settings.items():
        policy = POLICIES[name]
        vector = policy.param_vector(policy.settings(params))
        rows = np.zeros((n, len(montana.COLUMNS)), np.int32)
        rules = np.array([2, 5000], np.int64)
        montana.play_chunk_nb(policy.choose, 77, 0, rules, vector, rows, np.zeros((n, 0), np.int16))
        assert rows.tolist() == pure[name], name


def test_a_huge_move_cap_logs_the_same_moves_as_the_default(tmp_path):
    # M7: the cap only ends a deal; its room in the log buffers must not change the lines.
    import json

    from click.testing import CliRunner

    from sim.cli.main import main as cli

    def logged(max_moves):
        log = tmp_path / f"m{max_moves}.jsonl"
        args = ["montana", "-p", "greedy", "-n", "40", "--workers", "1", "--max-moves"]
        args += [str(max_moves), "--log-moves", str(log), "--out", str(tmp_path / f"m{max_moves}")]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        return [json.loads(line) for line in log.read_text().splitlines()]

    default, huge = logged(5000), logged(1_000_000)
    assert [d["moves"] for d in default] == [h["moves"] for h in huge]
    assert [d["outcome"] for d in default] == [h["outcome"] for h in huge]
    assert huge[0]["max_moves"] == 1_000_000
