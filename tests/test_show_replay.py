"""`sim show` draws one deal; `sim replay` checks move logs with an independent referee."""

import json
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import ROOT, sim

from sim.cli.main import main

GOLDEN = ROOT / "tests" / "golden"


def test_show_calc_matches_the_golden_text():
    result = sim("show", "calc", "--seed", "0", "--deal", "3", "--no-color")
    assert result.exit_code == 0
    assert result.stdout == (GOLDEN / "show_calc_seed0_deal3.txt").read_text()  # no notice


def test_show_is_the_deal_of_the_result_row(tmp_path):
    out, log = tmp_path / "r.parquet", tmp_path / "m.jsonl"
    assert (
        sim(
            "calc", "-n", "8", "--seed", "5", "--out", str(out), "--log-moves", str(log), "-q"
        ).exit_code
        == 0
    )
    line = json.loads(log.read_text().splitlines()[6])
    shown = sim("show", "calc", "--seed", "5", "--deal", "6", "--final", "--no-color").output
    assert (
        f"outcome: {line['outcome']} · score {line['score']} · {len(line['moves'])} moves" in shown
    )


def test_show_final_gives_only_the_end():
    full = sim("show", "calc", "--deal", "3", "--no-color").output
    final = sim("show", "calc", "--deal", "3", "--final", "--no-color").output
    assert "dealt:" in full and "dealt:" not in final
    assert full.splitlines()[-1] == final.splitlines()[-1]
    assert len(final.splitlines()) < 12


def test_show_step_waits_after_each_move_and_q_stops_it():
    full = sim("show", "calc", "--deal", "3", "--no-color").output
    stepped = sim("show", "calc", "--deal", "3", "--no-color", "--step", input="\n\nq\n")
    assert stepped.exit_code == 0
    assert stepped.output == full.split("\n\n4. ")[0] + "\n"  # up to move 3, the third wait
    assert sim("show", "calc", "--deal", "3", "--no-color", "--step").output == full  # no tty


def test_a_stop_signal_while_show_waits_at_step_ends_it_at_once():
    waiting = subprocess.Popen(
        [sys.executable, "-m", "sim", "show", "calc", "--deal", "3", "--step"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert waiting.stdout.readline().startswith(b"calc")  # drawn, and waiting for Enter
        waiting.send_signal(signal.SIGTERM)
        assert waiting.wait(timeout=10) == -signal.SIGTERM  # no message: nothing to keep
        assert b"interrupted" not in waiting.stderr.read()
    finally:
        waiting.kill()
        waiting.wait()


def test_show_colours_red_suits_unless_told_not_to():
    coloured = CliRunner().invoke(main, ["show", "calc", "--final"], color=True).output
    plain = CliRunner().invoke(main, ["show", "calc", "--final", "--no-color"], color=True).output
    assert "\x1b[31m" in coloured and "\x1b[" not in plain
    assert "♥" in plain or "♦" in plain


def test_show_plays_a_layout_given_by_the_user(tmp_path):
    log = tmp_path / "m.jsonl"
    sim("calc", "-n", "4", "--out", str(tmp_path / "r.parquet"), "--log-moves", str(log), "-q")
    line = json.loads(log.read_text().splitlines()[3])
    layout = tmp_path / "layout.json"
    layout.write_text(json.dumps(line["layout"]))
    shown = sim("show", "calc", "--layout", str(layout), "--final", "--no-color").stdout
    assert shown.startswith("calc · layout layout.json · policy greedy")
    assert f"score {line['score']} · {len(line['moves'])} moves" in shown


def test_show_refuses_a_bad_layout_in_one_line(tmp_path):
    layout = tmp_path / "layout.json"
    layout.write_text(json.dumps({"bases": ["AC", "2C", "3C", "4C"], "stock": ["5C"] * 48}))
    result = sim("show", "calc", "--layout", str(layout))
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: a Calculation layout holds the 52 cards once each: 5C 48 times; "
        "AD, AH, AS, 2D, 2H, 2S and 41 more missing"
    )


def test_show_given_a_whole_move_log_asks_for_one_line_of_it(tmp_path):
    log = tmp_path / "three.jsonl"
    assert sim("calc", "-n", 3, "--log-moves", log, "--out", tmp_path / "r", "-q").exit_code == 0
    result = sim("show", "calc", "--layout", str(log))
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {log}: 3 lines of JSON, a move log: give one line of it "
        "(sed -n 5p LOG.jsonl > line.json)"
    )


@pytest.fixture(scope="module")
def calc_log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    log = folder / "calc.jsonl"
    args = ["calc", "-n", "30", "--out", str(folder / "r.parquet"), "--log-moves", str(log), "-q"]
    assert sim(*args).exit_code == 0
    return [json.loads(line) for line in log.read_text().splitlines()]


def replay(tmp_path, lines):
    log = tmp_path / "log.jsonl"
    log.write_text("".join((t if isinstance(t, str) else json.dumps(t)) + "\n" for t in lines))
    return sim("replay", str(log)), log


def test_replay_accepts_the_simulators_own_logs(tmp_path, calc_log):
    result, log = replay(tmp_path, calc_log)
    assert result.exit_code == 0
    assert result.output.strip() == f"checked 30 deals in {log}: 30 valid, 0 invalid"


def first_index(moves, prefix):
    return next(i for i, m in enumerate(moves) if m.startswith(prefix))


def corrupt_calc(line, how):
    line = json.loads(json.dumps(line))
    moves = line["moves"]
    if how == "swapped":  # a foundation move played one turn before its card comes up
        i = first_index(moves, "s>f")
        moves[i - 1], moves[i] = moves[i], moves[i - 1]
    elif how == "target":
        moves[0] = "s>w9"
    elif how == "outcome":
        line["outcome"], line["score"] = "won", 52
    elif how == "duplicate":
        line["layout"]["stock"][1] = line["layout"]["stock"][0]
    return line


@pytest.mark.parametrize(
    "how, reason",
    [
        ("swapped", "does not fit F"),
        ("target", "move 1: s>w9: there is no waste pile 9"),
        ("outcome", "claims won 52, the moves give lost"),
        ("duplicate", "layout: "),
    ],
)
def test_replay_rejects_a_corrupted_calc_log_with_the_reason(tmp_path, calc_log, how, reason):
    good = calc_log[0]
    result, log = replay(tmp_path, [good, corrupt_calc(good, how)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("line 2 (calc seed 0 deal 0): ") and reason in lines[0]
    assert lines[-1] == f"checked 2 deals in {log}: 1 valid, 1 invalid"


def test_replay_reports_a_malformed_line_by_number(tmp_path, calc_log):
    result, log = replay(tmp_path, [calc_log[0], '{"game": "calc", oops'])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "line 2: not valid JSON (Expecting property name enclosed in double quotes)"
    )
    assert result.output.splitlines()[-1].endswith("1 valid, 0 invalid, 1 malformed line")


def test_replay_of_a_missing_file_is_one_line(tmp_path):
    result = sim("replay", str(tmp_path / "none.jsonl"))
    assert result.exit_code == 1  # a file that cannot be read: a failure, as for compare
    assert result.output.strip() == f"Error: {tmp_path / 'none.jsonl'}: no such file"


@pytest.fixture(scope="module")
def jokers_log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jokers")
    log = folder / "jokers.jsonl"
    args = ["jokers", "-p", "random", "-n", "60", "--out", str(folder / "r.parquet")]
    assert sim(*args, "--log-moves", str(log), "-q").exit_code == 0
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_replay_accepts_jokers_logs(tmp_path, jokers_log):
    result, log = replay(tmp_path, jokers_log)
    assert result.exit_code == 0
    assert result.output.strip() == f"checked 60 deals in {log}: 60 valid, 0 invalid"


def test_replay_rejects_a_wrong_joker_bridge(tmp_path, jokers_log):
    line = next(line for line in jokers_log if any("+1" in m for m in line["moves"]))
    bad = json.loads(json.dumps(line))
    i = next(i for i, m in enumerate(bad["moves"]) if "+1" in m)
    bad["moves"][i] = bad["moves"][i].replace("+1", "+2")
    result, _ = replay(tmp_path, [bad])
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert f"move {i + 1}: {bad['moves'][i]}: " in first
    assert "(J7)" in first


def test_show_draws_jokers_with_the_reserve():
    shown = sim("show", "jokers", "--deal", "2", "--final", "--no-color").stdout
    assert shown.startswith("jokers · seed 0 · deal 2 · policy greedy")
    assert "reserve:" in shown and "c10" in shown


def test_replay_rejects_a_premature_redeal(tmp_path):
    folder = tmp_path / "montana"
    log = folder / "m.jsonl"
    args = ["montana", "-p", "greedy", "-n", "20", "--out", str(folder / "r.parquet")]
    assert sim(*args, "--log-moves", str(log), "-q").exit_code == 0
    lines = [json.loads(text) for text in log.read_text().splitlines()]
    line = next(line for line in lines if "redeal:" in " ".join(line["moves"][1:]))
    moves = line["moves"]
    i = next(i for i, m in enumerate(moves) if i > 0 and m.startswith("redeal:"))
    moves[i - 1], moves[i] = moves[i], moves[i - 1]  # redeal while a move was still possible
    result, _ = replay(tmp_path, [line])
    assert result.exit_code == 1
    assert f"move {i}: redeal" in result.output
    assert "a redeal is allowed only when no move is possible (M5)" in result.output


def test_show_draws_the_montana_grid_and_its_redeals():
    shown = sim("show", "montana", "--deal", "1", "--no-color").stdout
    assert shown.startswith("montana · seed 0 · deal 1 · policy greedy")
    assert "  r4 " in shown and "redeals used" in shown


@pytest.mark.parametrize(
    "damage, reason",
    [
        ("truncated", "Compressed file ended before the end-of-stream marker was reached"),
        ("plain", "Not a gzipped file (b'{\"')"),
    ],
)
def test_replay_reads_a_damaged_compressed_log_up_to_the_damage(tmp_path, damage, reason):
    log = tmp_path / "moves.jsonl.gz"
    args = ["calc", "-n", 400, "-q", "--out", tmp_path / "r.parquet", "--log-moves", log]
    assert sim(*args).exit_code == 0
    if damage == "truncated":
        log.write_bytes(log.read_bytes()[: log.stat().st_size // 2])
    else:
        import gzip

        log.write_bytes(gzip.decompress(log.read_bytes()))
    result = sim("replay", log)
    assert result.exit_code == 1
    problem, summary = result.output.splitlines()[-2:]
    assert problem.endswith(f": cannot read on: {reason}")
    assert summary.startswith("checked ") and summary.endswith("invalid, 1 malformed line")


def logged_line(tmp_path, *args):
    """One line of a move log made by `sim calc ARGS` (3 deals): deal 1's, and its object."""
    log = tmp_path / "moves.jsonl"
    done = sim("calc", *args, "-n", 3, "-q", "--out", tmp_path / "r.parquet", "--log-moves", log)
    assert done.exit_code == 0, done.output
    line = tmp_path / "line.json"
    line.write_text(log.read_text().splitlines()[1])
    return line, json.loads(line.read_text())


def shown_moves(output):
    return [m.split(". ", 1)[1] for m in output.splitlines() if m[:1].isdigit()]


def test_show_plays_a_whole_log_line_as_it_was_logged(tmp_path):
    line, recorded = logged_line(tmp_path, "-p", "random", "--seed", 5, "--wastes", 2)
    shown = ["show", "calc", "--layout", line, "--no-color"]
    result = sim(*shown)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith("· policy random · wastes=2")
    # the line's policy drew from the line's seed and deal, under its rules
    assert shown_moves(result.output) == recorded["moves"]
    for option, says in [("--wastes", 3), ("--wastes", 4), ("--seed", 0), ("--deal", 2)]:
        result = sim(*shown, option, says)
        name = option[2:]
        refusal = f"the layout's line has {name}={recorded[name]}; {option} says {says}"
        assert result.output == f"Error: {refusal}\n"
    result = sim(*shown, "-p", "greedy")
    assert result.output == 'Error: the layout\'s line has policy="random"; --policy says greedy\n'
    assert sim(*shown, "--seed", 5, "--deal", 1, "-p", "random", "--wastes", 2).exit_code == 0
    result = sim("show", "montana", "--layout", line)
    assert result.output == 'Error: the layout\'s line has game="calc", not montana\n'


def test_a_log_line_of_a_plugged_in_policy_is_shown_with_that_policy_named_its_way(tmp_path):
    line, recorded = logged_line(tmp_path, "-p", "slow_greedy:py_greedy")
    assert recorded["policy"] == "py-greedy"  # its name, not how the command named it
    result = sim("show", "calc", "--layout", line, "-p", "slow_greedy:py_greedy")
    assert result.exit_code == 0, result.output
    assert shown_moves(result.output) == recorded["moves"]


def test_a_log_line_of_default_rules_refuses_other_rules(tmp_path):
    line, recorded = logged_line(tmp_path, "-p", "random")
    assert "wastes" not in recorded  # a log writes the rules that differ from the defaults
    assert shown_moves(sim("show", "calc", "--layout", line).output) == recorded["moves"]
    result = sim("show", "calc", "--layout", line, "--wastes", 3)
    assert result.output == "Error: the layout's line has wastes=4; --wastes says 3\n"


def test_a_log_line_records_the_policy_parameters_and_show_plays_with_them(tmp_path):
    line, recorded = logged_line(tmp_path, "-p", "planner", "--param", "king_pile=0")
    # every parameter, defaults too: a default may change, the logged play may not
    assert recorded["params"] == {"depth_weight": 1.0, "king_pile": 0}
    default_play = shown_moves(sim("show", "calc", "--deal", 1, "-p", "planner").output)
    assert default_play != recorded["moves"]  # so the parameter is what the test checks
    shown = ["show", "calc", "--layout", line]
    assert shown_moves(sim(*shown).output) == recorded["moves"]
    assert shown_moves(sim(*shown, "--param", "king_pile=0").output) == recorded["moves"]
    result = sim(*shown, "--param", "king_pile=1")
    assert (
        result.output
        == "Error: the layout's line has params.king_pile=0; --param says king_pile=1\n"
    )
    result = sim(*shown, "--param", "depth_weight=1.0000001")  # said back as given
    refusal = "params.depth_weight=1.0; --param says depth_weight=1.0000001"
    assert result.output == f"Error: the layout's line has {refusal}\n"
    recorded["params"] = {"king_pile": 2}
    line.write_text(json.dumps(recorded))
    result = sim(*shown)
    assert result.output == "Error: the layout's line: parameter king_pile must be in 0..1\n"
    recorded["params"] = {" king_pile": 0}  # a name is the name, not one like it
    line.write_text(json.dumps(recorded))
    result = sim(*shown, "--param", "king_pile=1")
    no_such = "policy planner has no parameter ' king_pile' (valid: depth_weight, king_pile)"
    assert result.output == f"Error: the layout's line: {no_such}\n"


@pytest.mark.parametrize("params", [[1, 0], "king_pile=0", None])
def test_a_log_line_whose_params_are_not_an_object_is_refused(tmp_path, params):
    line, recorded = logged_line(tmp_path, "-p", "planner")
    recorded["params"] = params
    line.write_text(json.dumps(recorded))
    result = sim("show", "calc", "--layout", line)
    refusal = f"the layout's line has params={json.dumps(params)}, not an object"
    assert result.output == f"Error: {refusal}\n"


def test_a_log_line_of_a_policy_without_parameters_has_none(tmp_path):
    line, recorded = logged_line(tmp_path, "-p", "greedy")
    assert "params" not in recorded


@pytest.mark.parametrize(
    "name, value", [("wastes", True), ("deal", -1), ("deal", "1"), ("seed", 1.5), ("policy", 7)]
)
def test_a_log_line_with_a_setting_of_the_wrong_kind_is_refused(tmp_path, name, value):
    line, recorded = logged_line(tmp_path, "--wastes", 2)
    recorded[name] = value  # JSON's true is not the number 1
    line.write_text(json.dumps(recorded))
    result = sim("show", "calc", "--layout", line, "--final")
    assert result.exit_code == 1
    refusal = f"the layout's line has {name}={json.dumps(value)}, not a valid value"
    assert result.output == f"Error: {refusal}\n"
