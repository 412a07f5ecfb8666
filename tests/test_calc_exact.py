"""The exact model (policies.calc_exact): its verdicts against exhaustive search, and
the oracle's last stage that settles the deals its searches leave undecided."""

import json

import numpy as np
import pandas as pd
from calc_helpers import position, random_short_deal, winnable_by_memo_search
from click.testing import CliRunner

from sim.cli.main import main as cli
from sim.engine import calc, rng
from sim.engine.kernel import OUTCOME_LOST, OUTCOME_UNKNOWN, OUTCOME_UNWINNABLE, OUTCOME_WON
from sim.policies import calc_exact
from sim.policies.registry import resolve

F1_NEEDS_TEN = [(10, 9), (0, 13), (0, 13), (0, 13)]  # F1 holds A..9, F2-F4 are complete
WORK = 60.0


def test_C5_model_proves_lost_what_two_piles_cannot_hold_and_wins_with_three():
    # F1 needs T; the stock turns J, Q, K, then T. With two piles one holds two of
    # J, Q, K, the upper one needed later: lost. With three each gets its own pile:
    #     w1: J    w2: Q    w3: K    then T, J, Q, K go up in turn
    stock = ["JC", "QC", "KC", "TC"]
    two = position(stock=stock, wastes=((), ()), foundations=F1_NEEDS_TEN)
    assert calc_exact.decide(two, WORK) == (OUTCOME_LOST, [])
    three = position(stock=stock, wastes=((), (), ()), foundations=F1_NEEDS_TEN)
    found, line = calc_exact.decide(three, WORK)
    assert found == OUTCOME_WON
    assert [calc.action_notation(a) for a in line] == [
        "s>w1",
        "s>w2",
        "s>w3",
        "s>f1",
        "w1>f1",
        "w2>f1",
        "w3>f1",
    ]


def test_C6_model_takes_pile_cards_from_the_top_only():
    # F1 needs T. The piles already hold, bottom to top, w1: Q J and w2: K; the stock
    # turns T. T goes up, then J (a top), then Q under it, then K: won. With the J
    # under the Q (w1: J Q) the J is buried below a card needed after it: lost.
    won = position(stock=["TC"], wastes=(("QC", "JC"), ("KC",)), foundations=F1_NEEDS_TEN)
    assert calc_exact.decide(won, WORK)[0] == OUTCOME_WON
    buried = position(stock=["TC"], wastes=(("JC", "QC"), ("KC",)), foundations=F1_NEEDS_TEN)
    assert calc_exact.decide(buried, WORK)[0] == OUTCOME_LOST


def test_C7_model_chooses_the_foundation_for_a_card_two_can_take():
    # F1 holds A..4 and F2 holds 2 4 6 8 T Q A 3: both need a 5. One empty pile. The
    # stock turns 5C, then F1's 6 .. K, then 5D and F2's 7 9 J K. 5C must go to F1:
    # on F2, it leaves 6C to wait on the pile for 5D, and 8C must then cover it
    # (F1 cannot take 8C before 6C, F2 takes 7 9 J K only).
    stock = ["5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "5D", "7D", "9D", "JD", "KD"]
    state = position(stock=stock, wastes=((),), foundations=[(5, 4), (5, 8), (0, 13), (0, 13)])
    found, line = calc_exact.decide(state, WORK)
    assert found == OUTCOME_WON and winnable_by_memo_search(state)
    assert calc.action_notation(line[0]) == "s>f1"
    on_f2 = state.copy()
    calc.apply_action_nb(on_f2, 1)  # s>f2
    assert calc_exact.decide(on_f2, WORK)[0] == OUTCOME_LOST
    assert not winnable_by_memo_search(on_f2)


def test_C4_C5_C6_C7_model_verdicts_match_exhaustive_search_on_short_deals():
    # Short deals (9 to 13 cards to turn, one to three piles, up to seven cards already
    # piled): the model must win exactly those an exhaustive search of the rules wins
    # (its line checked move by move) and prove the others lost.
    stream = rng.new_stream(31, 0, 9)
    counts = {OUTCOME_WON: 0, OUTCOME_LOST: 0}
    for i in range(120):
        state = random_short_deal(stream, 9 + i % 5, 1 + i % 3, (i * 7) % 8)
        found, _ = calc_exact.decide(state, WORK)
        assert found == (OUTCOME_WON if winnable_by_memo_search(state) else OUTCOME_LOST), i
        counts[found] += 1
    assert min(counts.values()) >= 20


def test_model_gives_one_line_for_one_deal():
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.deal_nb(0, 0, 4, state)
    first = calc_exact.decide(state, WORK)
    assert first[0] == OUTCOME_WON
    assert calc_exact.decide(state, WORK) == first


def test_settle_marks_a_proved_loss_unwinnable_and_gives_up_without_work():
    oracle = resolve("calc", "oracle")
    rules = np.array([1], np.int64)  # one waste pile: whole deals that cannot be won
    params = oracle.param_vector(oracle.settings())
    state = np.zeros(calc.STATE_SIZE, np.int16)
    calc.start_nb(0, 0, rules, state)
    assert calc_exact.settle(state, params) == (OUTCOME_UNWINNABLE, [])
    idle = oracle.param_vector(oracle.settings(["exact=0"]))
    assert calc_exact.settle(state, idle) == (OUTCOME_UNKNOWN, [])


def run_oracle(tmp_path, name, *options):
    out, log = tmp_path / f"{name}.parquet", tmp_path / f"{name}.jsonl"
    args = ["calc", "-p", "oracle", "--param", "nodes=1", "-n", "6", "-q", "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--log-moves", str(log), *options])
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out)
    figures = pd.DataFrame([dict(pairs) for pairs in rows.pop("stats")], index=rows.index)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return pd.concat([rows, figures], axis=1), lines


def test_oracle_settles_the_deals_its_searches_leave_undecided(tmp_path):
    # A budget of one position leaves most three-pile deals undecided; the model then
    # wins each of them, and the rows and logs are those of its lines played out.
    alone, _ = run_oracle(tmp_path, "alone", "--wastes", "3", "--param", "exact=0")
    assert (alone.outcome == "unknown").sum() >= 3
    rows, lines = run_oracle(tmp_path, "settled", "--wastes", "3", "--workers", "1")
    assert list(rows.outcome) == ["won"] * 6
    was_won = alone.outcome == "won"
    play = ["deal", "won", "score", "moves", "last_foundation_turn", "max_waste_height"]
    pd.testing.assert_frame_equal(rows[was_won][play], alone[was_won][play])
    assert [line["outcome"] for line in lines] == ["won"] * 6
    replay = CliRunner().invoke(cli, ["replay", str(tmp_path / "settled.jsonl")])
    assert "6 valid, 0 invalid" in replay.stdout, replay.output
    twice, _ = run_oracle(tmp_path, "two", "--wastes", "3", "--workers", "2")
    pd.testing.assert_frame_equal(rows, twice)


def test_show_of_a_logged_line_settles_it_as_the_run_did(tmp_path):
    # `sim show --layout LINE` plays the line's layout with its parameters; where the
    # searches give up the exact model must settle it there too, or the play shown is
    # not the play logged (an `unknown` where the log says `won`).
    _, lines = run_oracle(tmp_path, "logged", "--wastes", "3", "--param", "exact=60")
    alone, _ = run_oracle(tmp_path, "alone", "--wastes", "3", "--param", "exact=0")
    settled = next(i for i, outcome in enumerate(alone.outcome) if outcome == "unknown")
    line = tmp_path / "line.json"
    line.write_text(json.dumps(lines[settled]))
    args = ["show", "calc", "--layout", str(line), "--no-color"]
    shown = CliRunner().invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    moves = [row.split(". ", 1)[1] for row in shown.stdout.splitlines() if ". " in row[:6]]
    assert f"outcome: won · score 52 · {len(lines[settled]['moves'])} moves" in shown.stdout
    assert moves == lines[settled]["moves"]


def test_oracle_marks_the_deals_the_model_proves_lost_unwinnable(tmp_path):
    rows, lines = run_oracle(tmp_path, "one", "--wastes", "1")
    assert list(rows.outcome) == ["unwinnable"] * 6
    assert [line["outcome"] for line in lines] == ["unwinnable"] * 6


def test_model_and_searches_agree_on_every_position_both_decide():
    # Positions of whole deals after greedy's first 15 to 39 moves, three piles (cards
    # piled, foundations under way, wins and losses both common): where the searches
    # decide (a win is a line of the rules, a loss a full search), the model agrees.
    from sim.policies import calc_oracle

    greedy = resolve("calc", "greedy")
    params, stream = greedy.param_vector(greedy.settings()), rng.new_stream(0, 0, 1)
    state = np.zeros(calc.STATE_SIZE, np.int16)
    board = np.empty(calc.STATE_SIZE, np.int16)
    legal = np.empty(calc.N_ACTIONS, np.int16)
    winning = np.empty(calc_oracle.MAX_DEPTH, np.int16)
    counts = {OUTCOME_WON: 0, OUTCOME_LOST: 0}
    for deal in range(60):
        calc.deal_nb(5, deal, 3, state)
        for _ in range(15 + deal % 25):
            if (n := calc.legal_actions_nb(state, legal)) == 0:
                break
            calc.apply_action_nb(state, legal[greedy.choose(state, legal, n, params, stream)])
        calc_oracle.board_from_state_nb(state, board)
        keys, stamps = calc_oracle.new_stamped_table_nb(calc_oracle.TABLE_BITS)
        found, _, _ = calc_oracle.oracle_search_nb(board, 20000, keys, stamps, 1, winning)
        if found != calc.OUTCOME_UNKNOWN:
            assert calc_exact.decide(state, WORK)[0] == found, deal
            counts[found] += 1
    assert min(counts.values()) >= 5, counts


# A search that runs for seconds: forty numbers, all different, no one right after the
# one before it, the largest weighted sum wanted. It prints `solving` as it starts.
# The child takes Ctrl-C as a terminal's foreground process does, whatever it inherits:
# started with SIGINT ignored (as it sometimes is under a loaded test runner), it would
# search on to its time limit and print its status, as if the interrupt had been lost.
LONG_SEARCH = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
from ortools.sat.python import cp_model
from sim.policies import calc_exact
model = cp_model.CpModel()
xs = [model.NewIntVar(0, 40, f"x{i}") for i in range(40)]
model.AddAllDifferent(xs)
for a, b in zip(xs, xs[1:]):
    model.Add(a != b + 1)
model.Maximize(sum(x * (i % 7) for i, x in enumerate(xs)))
solver = cp_model.CpSolver()
solver.parameters.num_workers = 1
solver.parameters.max_time_in_seconds = 30
print("solving", flush=True)
print("status", calc_exact._solved(solver, model), flush=True)
"""


def test_a_ctrl_c_during_the_exact_search_is_raised_not_taken_for_its_end():
    # CP-SAT would catch SIGINT and answer as if its work limit had run out: a row of
    # `unknown` for a deal never searched in full. The interrupt must reach the caller.
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen(
        [sys.executable, "-c", LONG_SEARCH],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "solving"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    clock = time.monotonic()
    out, err = child.communicate(timeout=60)
    assert "status" not in out
    assert "KeyboardInterrupt" in err
    assert time.monotonic() - clock < 10  # the search was stopped, not waited out
