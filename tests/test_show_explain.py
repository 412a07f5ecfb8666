"""`sim show --explain`: the first move after which the deal could no longer be won.

Every claim of the command is checked here with the solvers called apart (fresh tables,
each position from scratch) and the winning lines replayed by the referees, which
share no code with the engine.
"""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from calc_helpers import ACTIONS as CALC_ACTIONS
from conftest import ROOT, sim
from montana_helpers import action as montana_action

from sim.engine import calc, montana
from sim.engine.analysis.explain import explain_line
from sim.engine.games import get_game
from sim.engine.kernel import OUTCOME_LOST, OUTCOME_WON
from sim.engine.referee import calc as calc_referee
from sim.engine.referee import jokers as jokers_referee
from sim.engine.referee import montana as montana_referee
from sim.engine.run.one_deal import play_one
from sim.policies import calc_exact, calc_oracle, montana_solver
from sim.policies.registry import resolve

MARK = re.compile(r"^(\d+)\. (\S+)   ◀ lost the deal: (\S+) still wins$", re.MULTILINE)


def played(game_name, policy, seed, deal, **rules):
    game = get_game(game_name)
    chosen = resolve(game_name, policy)
    return play_one(game, chosen, chosen.settings(()), game.default_rules() | rules, seed, deal)


def shown(*args):
    result = sim("show", *args, "--explain", "--no-color")
    assert result.exit_code == 0, result.output
    return result.output


def oracle_verdict(state, budget=200_000):
    """The oracle's verdict on a Calculation position, searched from scratch."""
    board = np.empty(calc.STATE_SIZE, np.int16)
    calc_oracle.board_from_state_nb(state, board)
    keys, stamps = calc_oracle.new_stamped_table_nb(16)
    winning = np.empty(calc_oracle.MAX_DEPTH, np.int16)
    return calc_oracle.oracle_search_nb(board, budget, keys, stamps, 1, winning)[0]


def calc_positions(line):
    """The engine's position before each move and after the last one."""
    state = calc.state_from_layout(line["layout"], {"wastes": line.get("wastes", 4)})
    positions = [state.copy()]
    for move in line["moves"]:
        assert calc.is_legal_nb(state, CALC_ACTIONS[move]), move
        calc.apply_action_nb(state, CALC_ACTIONS[move])
        positions.append(state.copy())
    return positions


def won_by_referee(check, line, moves):
    """The referee's verdict on the line's deal played by `moves`, claimed won."""
    won = {
        **line,
        "moves": moves,
        "outcome": "won",
        "score": 48 if line["game"] == "montana" else 52,
    }
    return check(won).ok


def test_explain_marks_the_first_move_after_which_the_oracle_proves_calc_lost():
    # greedy loses deal 1 of seed 0, which the oracle wins from the deal as dealt.
    line = played("calc", "greedy", 0, 1)
    output = shown("calc", "--seed", "0", "--deal", "1")
    (mark,) = MARK.findall(output)
    number, move, alternative = int(mark[0]), mark[1], mark[2]
    assert move == line["moves"][number - 1]
    assert f"explain: move {number} {move} lost the deal" in output

    positions = calc_positions(line)
    before, after = positions[number - 1], positions[number]
    assert oracle_verdict(after) == OUTCOME_LOST
    # The first such move: every position up to the one before it can still be won.
    assert all(oracle_verdict(p) == OUTCOME_WON for p in positions[:number])

    # The alternative is a legal move there, and wins.
    assert calc.is_legal_nb(before, CALC_ACTIONS[alternative])
    trial = before.copy()
    calc.apply_action_nb(trial, CALC_ACTIONS[alternative])
    assert oracle_verdict(trial) == OUTCOME_WON

    # The whole winning line, as the summary begins it, wins by the referee's count.
    explanation = explain_line(line)
    assert explanation.move == number and explanation.alternative[0] == alternative
    shown_line = " ".join(explanation.alternative[1:16])
    assert f"winning alternative at move {number}: {alternative}, then {shown_line}" in output
    moves = line["moves"][: number - 1] + list(explanation.alternative)
    assert won_by_referee(calc_referee.check, line, moves)


def test_explain_says_nothing_was_lost_when_the_policy_won():
    line = played("calc", "oracle", 0, 3)
    assert line["outcome"] == "won"
    output = shown("calc", "--seed", "0", "--deal", "3", "--policy", "oracle", "--final")
    assert output.rstrip().splitlines()[-1] == "explain: the deal was won: nothing was lost"
    assert "◀" not in output


def test_explain_blames_no_move_when_the_deal_could_not_be_won_at_all():
    # With a single waste pile deal 2 of seed 0 is lost as dealt.
    line = played("calc", "greedy", 0, 2, wastes=1)
    assert oracle_verdict(calc_positions(line)[0]) == OUTCOME_LOST
    output = shown("calc", "--seed", "0", "--deal", "2", "--wastes", "1")
    assert "explain: the deal could not be won at all" in output
    assert "◀" not in output


def test_explain_blames_no_move_it_cannot_prove(monkeypatch):
    # Allowed a single position a judgement, and without the exact model, the oracle
    # decides only positions whose first playout wins or whose every move it prunes as
    # lost: not the moves around greedy's mistake on deal 7.
    monkeypatch.setattr(calc_exact, "DEFAULT_WORK", 0.0)
    line = played("calc", "greedy", 0, 7)
    explanation = explain_line(line, nodes=1)
    assert explanation.verdict == "undecided" and explanation.move is None
    assert explanation.undecided
    positions = calc_positions(line)
    assert oracle_verdict(positions[explanation.won_until]) == OUTCOME_WON
    assert oracle_verdict(positions[explanation.lost_from]) == OUTCOME_LOST
    output = shown("calc", "--seed", "0", "--deal", "7", "--explain-nodes", "1", "--final")
    assert "◀" not in output
    assert "explain: undecided within 1 position at the position" in output
    assert "no move is proved to lose the deal (--explain-nodes allows the oracle more" in output
    assert (
        f"one of moves {explanation.won_until + 1} to {explanation.lost_from} lost the deal"
        in output
    )


def test_explain_hands_what_the_searches_leave_to_the_exact_model():
    # The same judgements with the exact model on: it decides every position the
    # searches leave, so the move that lost deal 7 is pinned down after all, and the
    # positions either side of it agree with the searches at a full budget.
    line = played("calc", "greedy", 0, 7)
    explanation = explain_line(line, nodes=1)
    assert explanation.verdict == "lost" and explanation.exact > 0
    positions = calc_positions(line)
    before, after = positions[explanation.move - 1], positions[explanation.move]
    assert calc_exact.decide(before, 60)[0] == OUTCOME_WON
    assert calc_exact.decide(after, 60)[0] == OUTCOME_LOST
    moves = line["moves"][: explanation.move - 1] + list(explanation.alternative)
    assert won_by_referee(calc_referee.check, line, moves)
    output = shown("calc", "--seed", "0", "--deal", "7", "--explain-nodes", "1", "--final")
    assert "of them decided by its exact model" in output


def test_explain_montana_without_redeals_marks_the_move_the_solver_proves_lost():
    line = played("montana", "greedy", 99, 5, redeals=0)
    output = shown("montana", "--seed", "99", "--deal", "5", "--redeals", "0")
    (mark,) = MARK.findall(output)
    number, alternative = int(mark[0]), mark[2]
    state = montana.state_from_layout(line["layout"], {"redeals": 0})
    for move in line["moves"][: number - 1]:
        montana.apply_action_nb(state, montana_action(move))
    after = state.copy()
    montana.apply_action_nb(after, montana_action(line["moves"][number - 1]))
    route = np.empty(montana_solver.DEPTH_CAP + 1, np.int16)
    assert montana_solver.solve_nb(after, 10**6, 0, route)[0] == OUTCOME_LOST
    assert montana.is_legal_nb(state, montana_action(alternative))
    explanation = explain_line(line)
    assert explanation.alternative[0] == alternative
    moves = line["moves"][: number - 1] + list(explanation.alternative)
    assert won_by_referee(montana_referee.check, line, moves)


def test_explain_montana_with_redeals_judges_only_the_last_phase():
    line = played("montana", "greedy", 99, 0)
    last_redeal = max(i for i, move in enumerate(line["moves"], 1) if move.startswith("redeal:"))
    output = shown("montana", "--seed", "99", "--deal", "0", "--final")
    assert (
        f"explain: only the last phase is judged, from the grid redeal 2 dealt (move {last_redeal})"
        in output
    )
    explanation = explain_line(line)
    assert explanation.first == last_redeal and explanation.move > last_redeal
    moves = line["moves"][: explanation.move - 1] + list(explanation.alternative)
    assert won_by_referee(montana_referee.check, line, moves)


def test_explain_judges_no_montana_phase_when_play_stopped_with_redeals_left():
    output = shown("montana", "--seed", "99", "--deal", "0", "--max-moves", "10", "--final")
    assert output.rstrip().splitlines()[-1] == (
        "explain: play stopped with 2 of 2 redeals left (the move cap): a phase that cannot "
        "be won may still lead to a winning redeal, so no position is judged"
    )


def test_explain_gives_the_win_a_resigning_policy_left_on_the_table():
    # greedy resigns deal 1 of seed 0 where the solver still finds a win.
    line = played("jokers", "greedy", 0, 1)
    explanation = explain_line(line)
    assert explanation.verdict == "not lost" and explanation.move is None
    moves = line["moves"] + list(explanation.alternative)
    assert won_by_referee(jokers_referee.check, line, moves)
    output = shown("jokers", "--deal", "1", "--final")
    assert f"explain: play stopped after move {len(line['moves'])} while the deal" in output


def test_explain_jokers_names_a_winning_alternative():
    line = played("jokers", "greedy", 0, 2)
    explanation = explain_line(line)
    assert explanation.verdict == "lost"
    moves = line["moves"][: explanation.move - 1] + list(explanation.alternative)
    assert won_by_referee(jokers_referee.check, line, moves)
    output = shown("jokers", "--deal", "2", "--final")
    assert f"explain: move {explanation.move} {explanation.played} lost the deal" in output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("calc", "--explain-nodes", "1000"), 2, "Error: --explain-nodes needs --explain"),
        (
            ("pairs", "--explain"),
            2,
            "Error: --explain is not available for Pairs: it has no exact solver",
        ),
        (
            ("calc", "--explain", "--explain-nodes", "0"),
            2,
            "Error: Invalid value for '--explain-nodes': '0' is below 1",
        ),
    ],
)
def test_explain_refuses_a_bad_combination_in_one_line(args, code, message):
    result = sim("show", *args)
    assert result.exit_code == code
    assert result.output.strip() == message


def test_show_refuses_step_with_final_in_one_line():
    result = sim("show", "calc", "--step", "--final")
    assert result.exit_code == 2
    assert result.output.strip() == (
        "Error: --step shows the moves one by one, --final only the end: give one"
    )


@pytest.mark.parametrize("args", [["show", "--help"], ["show", "calc", "--help"]])
def test_show_help_loads_no_solver_and_no_compiled_code(args):
    code = (
        "import sys\n"
        "from sim.cli.main import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('numba', 'numpy', 'sim.engine.analysis.explain') "
        "if m in sys.modules)\n"
        "print('loaded:', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "--explain" in done.stdout
    assert done.stdout.splitlines()[-1] == "loaded: []"


def test_ctrl_c_ends_a_long_explanation_at_once():
    """A compiled search returns to Python only when it ends: Ctrl-C must not wait."""
    assert sim("show", "calc", "--deal", "1", "--explain").exit_code == 0  # compiled now
    command = [sys.executable, "-m", "sim", "show", "calc", "--deal", "0", "--explain"]
    endless = subprocess.Popen(
        [*command, "--explain-nodes", "1e9"], cwd=ROOT, stdout=subprocess.DEVNULL
    )
    try:
        searching = _cpu_seconds(endless.pid) + 4
        while _cpu_seconds(endless.pid) < searching:  # loaded, and deep in the search
            time.sleep(0.2)
        endless.send_signal(signal.SIGINT)
        assert endless.wait(timeout=10) == -signal.SIGINT
    finally:
        endless.kill()
        endless.wait()


def _cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
