"""The example game of examples/pairs: its rules (P1-P5 of its README), and that it
plugs in through the `sim.games` entry point alone."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import INSTALLED, ROOT, sim

from sim.engine.cards import card_name

RULES = {"cells": 4}


def layout(row, stock_first):
    """A Pairs layout: `row`, then the stock starting with `stock_first`, then the rest."""
    used = set(row + stock_first)
    rest = [card_name(c) for c in range(52) if card_name(c) not in used]
    return {"row": row, "stock": stock_first + rest}


def test_P3_P4_a_pair_of_one_rank_is_taken_and_the_lower_cell_refilled_first():
    from sim_pairs import rules

    #  cells   1   2   3   4          stock: 9S QD ...
    #  before  7C  7H  2D  KS   take 1+2
    #  after   9S  QD  2D  KS
    state = rules.state_from_layout(layout(["7C", "7H", "2D", "KS"], ["9S", "QD"]), RULES)
    legal = np.empty(rules.N_ACTIONS, np.int16)
    assert rules.legal_actions_nb(state, legal) == 1
    rules.apply_action_nb(state, legal[0])
    row = [card_name(c) for c in state[rules.ROW : rules.ROW + 4]]
    assert row == ["9S", "QD", "2D", "KS"]
    assert state[rules.TAKEN] == 2


def test_P5_the_game_ends_when_no_two_cards_share_a_rank():
    from sim_pairs import rules

    #  cells   1   2   3   4
    #          7C  8H  2D  KS   no pair: the game is over
    state = rules.state_from_layout(layout(["7C", "8H", "2D", "KS"], []), RULES)
    assert rules.legal_actions_nb(state, np.empty(rules.N_ACTIONS, np.int16)) == 0


def test_P3_the_referee_refuses_a_pair_of_two_ranks():
    from sim.engine.referee import check_line

    line = {"game": "pairs", "cells": 4, "outcome": "lost", "score": 0, "moves": ["1+2"]}
    line["layout"] = layout(["7C", "8H", "2D", "KS"], [])
    verdict = check_line(line)
    assert str(verdict) == "move 1: 1+2: 7C and 8H differ in rank (P3)"


def test_the_example_game_plays_as_a_command(tmp_path):
    import pyarrow.parquet as pq

    result = sim("pairs", "-n", 2000, "--cells", 10, "--out", tmp_path / "p.parquet")
    assert result.exit_code == 0, result.output
    assert "pairs · first · cells=10 · seed 0" in result.output
    rows = pq.read_table(tmp_path / "p.parquet")
    assert rows.column_names == [
        *("seed", "deal", "setting", "game", "rules", "policy", "params", "code", "param"),
        *("rule", "outcome", "won", "score", "moves", "stats"),
    ]
    assert rows.column("rules").unique().to_pylist() == ["cells=10"]
    assert rows.column("rule")[0].as_py() == [("cells", 10)]
    assert "+" in rows.column("code")[0].as_py()  # a game from outside: its own code hashed
    assert set(rows.column("outcome").to_pylist()) == {"won", "lost"}


def sim_process(env_path):
    env = os.environ | {"PYTHONPATH": env_path}
    command = [sys.executable, "-m", "sim", "--help"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)


def test_a_game_exists_only_once_its_entry_point_is_installed():
    installed = os.pathsep.join([str(ROOT / "examples" / "pairs"), str(INSTALLED)])
    assert "pairs" in sim_process(installed).stdout
    assert "pairs" not in sim_process("").stdout


@pytest.mark.parametrize(
    "entry, problem",
    [
        (
            "no_such_module:GAME",
            "cannot load game plug-in 'broken' (no_such_module:GAME):"
            " ModuleNotFoundError: No module named 'no_such_module'",
        ),
        (
            "sim.engine.games:get_game",
            "game plug-in 'broken' (sim.engine.games:get_game) is not a sim.engine.game.Game",
        ),
        (
            "sim.engine.games:CALC",
            "game plug-in 'broken' (sim.engine.games:CALC) takes the name 'calc', already in use",
        ),
    ],
)
def test_a_broken_game_plug_in_is_left_out_with_one_warning(tmp_path, entry, problem):
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[sim.games]\nbroken = {entry}\n")
    done = sim_process(str(tmp_path))
    assert done.returncode == 0
    assert done.stderr == f"warning: {problem}; left out\n"
    assert "calc" in done.stdout


def test_a_plugged_in_game_whose_policy_module_is_missing_says_so(tmp_path):
    package = tmp_path / "ghost_game"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import dataclasses\nfrom sim.engine.games import CALC\n"
        "GHOST = dataclasses.replace(CALC, name='ghost', policy_modules=('nope_policies',))\n"
    )
    info = tmp_path / "ghost-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ghost\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[sim.games]\nghost = ghost_game:GHOST\n")
    env = os.environ | {"PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "-m", "sim", "ghost", "-n", "10"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == (
        "Error: cannot import 'nope_policies', a policy module of ghost:"
        " ModuleNotFoundError: No module named 'nope_policies'\n"
    )
