"""`sim replay` checks a line's rule values against its game's declaration: a value of
the wrong type, or one the rules do not allow, is a line that describes no legal game."""

import json

import pytest
from conftest import sim

from sim.engine.games import registered_games
from sim.engine.referee import check_line

RULES = [(game, option) for game in registered_games().values() for option in game.rules]


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """One logged deal of every game, played under its default rules."""
    folder, lines = tmp_path_factory.mktemp("logs"), {}
    for name in registered_games():
        log = folder / f"{name}.jsonl"
        args = [name, "-n", 1, "--out", folder / f"{name}.parquet", "--log-moves", log, "-q"]
        assert sim(*args).exit_code == 0
        lines[name] = json.loads(log.read_text())
    return lines


def impossible_values(option):
    return [option.low - 1, option.high + 1, True, str(option.default), None]


@pytest.mark.parametrize("game, option", RULES, ids=[f"{g.name}-{o.name}" for g, o in RULES])
def test_every_rule_value_the_declaration_does_not_allow_makes_the_line_invalid(
    logged, game, option
):
    line = logged[game.name]
    assert check_line(line | {option.name: option.default}).ok
    for value in [*impossible_values(option), float(option.default), [option.default]]:
        verdict = check_line(line | {option.name: value})
        allowed = f"an integer in {option.low}..{option.high}"
        assert not verdict.ok
        assert verdict.reason == (
            f"the line has {option.name}={json.dumps(value)}, not a valid value ({allowed})"
        )


@pytest.mark.parametrize("wastes", [99, 9, 0, True, "4", None, 4.0, [4]])
def test_replay_names_an_impossible_number_of_wastes(tmp_path, logged, wastes):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(logged["calc"] | {"wastes": wastes}) + "\n")
    result = sim("replay", log)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"line 1 (calc seed 0 deal 0): the line has wastes={json.dumps(wastes)}, not a valid "
        "value (an integer in 1..8)",
        f"checked 1 deal in {log}: 0 valid, 1 invalid",
    ]


def test_replay_shortens_a_long_impossible_value(tmp_path, logged):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(logged["montana"] | {"redeals": "x" * 100}) + "\n")
    first = sim("replay", log).output.splitlines()[0]
    assert first == (
        f'line 1 (montana seed 0 deal 0): the line has redeals="{"x" * 36}..., not a valid '
        "value (an integer in 0..10)"
    )


NOT_DEALS = ["x", None, float("nan"), 4.5, 4.0, True, [4], 2**70, 2**63, {"a": 1}]
LOWEST = {"seed": ("-2**63", -(2**63) - 1), "deal": ("0", -1)}  # seeds below 0 mark sources


@pytest.mark.parametrize("name", ["seed", "deal"])
@pytest.mark.parametrize("value", [*NOT_DEALS, "below"], ids=repr)
def test_a_seed_or_deal_that_names_no_deal_makes_the_line_invalid(logged, name, value):
    lowest, below = LOWEST[name]
    value = below if value == "below" else value
    for game in registered_games():
        verdict = check_line(logged[game] | {name: value})
        assert not verdict.ok
        assert verdict.reason == (
            f"the line has {name}={json.dumps(value)}, not a valid value "
            f"(an integer in {lowest}..2**63-1)"
        )


def test_a_negative_seed_marks_a_deal_sim_did_not_shuffle_and_is_valid(logged):
    reason = check_line(logged["calc"] | {"seed": -1}).reason
    assert "not a valid value" not in reason


def test_the_largest_seed_is_a_valid_value(logged):
    reason = check_line(logged["calc"] | {"seed": 2**63 - 1}).reason
    assert "not a valid value" not in reason  # the moves of seed 0 fail, the seed does not


def test_replay_names_a_seed_that_is_not_a_number(tmp_path, logged):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(logged["calc"] | {"seed": "x"}) + "\n")
    result = sim("replay", log)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        'line 1 (calc seed "x" deal 0): the line has seed="x", not a valid value '
        "(an integer in -2**63..2**63-1)",
        f"checked 1 deal in {log}: 0 valid, 1 invalid",
    ]


def test_a_line_with_a_number_too_long_for_a_deal_is_malformed_and_replay_goes_on(tmp_path):
    log = tmp_path / "log.jsonl"
    other = json.dumps({"game": "calc", "seed": 0, "deal": 0, "moves": []})
    huge = '{"game": "calc", "seed": 0, "deal": 1, "score": 1' + "0" * 5000 + "}"
    log.write_text("\n".join([other, huge, other]) + "\n")
    result = sim("replay", log)
    assert result.exit_code == 1
    assert result.output.splitlines()[1:] == [
        "line 2: a number of 5,001 digits: not a deal",
        'line 3 (calc seed 0 deal 0): malformed line: no "layout"',
        f"checked 2 deals in {log}: 0 valid, 2 invalid, 1 malformed line",
    ]


@pytest.mark.parametrize("score", ["28", 28.0, True, None], ids=repr)
def test_a_score_that_is_not_a_whole_number_makes_the_line_invalid(logged, score):
    # "28" would otherwise be reported as `claims lost 28, the moves give lost 28`
    for game in registered_games():
        verdict = check_line(logged[game] | {"score": score})
        assert not verdict.ok
        assert verdict.reason == f'"score" must be a whole number, not {json.dumps(score)}'
    assert check_line(logged["calc"]).ok
