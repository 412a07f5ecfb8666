"""Deals typed in: a layout in the text notation of RULES.md (or JSON, or a move-log
line) shown by `sim show --layout`, a file of them played by a run (`--layout-file`),
and a layout that is no deal refused in one line that names what is wrong."""

import json

import pyarrow.parquet as pq
import pytest
from conftest import sim

from sim.engine.layouts import layouts_seed

# PySolFC's Calculation game 123456 (tests/test_pysol_numbers.py), as text.
CALC = (
    "AD 2H 3H 4D / 3D 2D 2C 9C AC 6H 4C KC 6C TC 8S 8C 9D TH 2S JS AS 4H AH QH 7H 8H 3S "
    "9H TS JD KD 3C 6D QS 6S 4S QC TD KH 5D KS 7D 5H 7S 8D 5S 9S JH JC 5C 7C QD"
)
MONTANA = (
    "3D 2D 2C 9C .. 6H 4C KC 6C TC 8S 8C 9D/TH 2S JS .. 4H .. QH 7H 8H 3S 9H TS JD/"
    "KD 3C 6D QS 6S 4S QC TD KH 5D KS 7D 5H/7S 8D 2H 5S 9S JH JC 3H .. 4D 5C 7C QD"
)
JOKERS = " / ".join(
    [
        "2C 3C 4C 5C 6C",
        "7C 8C 9C TC JC",
        "QC KC 2D 3D 4D",
        "5D 6D 7D 8D 9D",
        "TD JD QD KD 2H",
        "3H 4H 5H 6H 7H",
        "8H 9H TH JH QH",
        "KH 2S 3S 4S 5S",
        "6S 7S 8S 9S TS",
        "JS QS KS JK JK",
    ]
)
TYPED = {"calc": CALC, "montana": MONTANA, "jokers": JOKERS}


def shown(game, layout, *more):
    result = sim("show", game, "--layout", layout, "--final", "--no-color", *more)
    assert result.exit_code == 0, result.output
    return result.stdout  # a first compile's notice goes to stderr


@pytest.mark.parametrize(
    "game, policies",
    [("calc", ["greedy", "random", "planner", "kings-bottom", "rollout"]),
     ("montana", ["greedy", "random", "first"]),
     ("jokers", ["greedy", "random"])],
)  # fmt: skip
def test_a_layout_typed_in_is_played_by_each_policy(game, policies):
    for policy in policies:
        lines = shown(game, TYPED[game], "-p", policy).splitlines()
        assert lines[0].startswith(f"{game} · layout typed in · policy {policy}")
        assert lines[-1].startswith("outcome: ")


def test_a_typed_layout_plays_as_its_pysol_number_does():
    typed = shown("calc", CALC).splitlines()
    numbered = sim("show", "calc", "--pysol", "123456", "--final", "--no-color").stdout
    assert numbered.splitlines()[0] == "calc · PySolFC game 123456 · policy greedy"
    assert numbered.splitlines()[1:] == typed[1:]


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["mc", "oracle"])
def test_a_layout_typed_in_is_played_by_the_searching_policies(policy):
    assert shown("calc", CALC, "-p", policy).splitlines()[-1].startswith("outcome: ")


@pytest.mark.parametrize(
    "game, layout, message",
    [
        ("calc", CALC.replace("2D", "3D"),
         "a Calculation layout holds the 52 cards once each: 3D twice; 2D missing"),
        ("calc", CALC.replace(" QD", ""),
         "a Calculation layout has 4 bases and 48 stock cards, not 4 and 47"),
        ("calc", CALC.replace(" QD", " QD QD"),
         "a Calculation layout has 4 bases and 48 stock cards, not 4 and 49"),
        ("calc", CALC.replace(" / ", " "),
         "a Calculation layout is written as its 4 bases, `/`, then its 48 stock cards"),
        ("calc", CALC.replace("9C", "9X"), "not a card: '9X'"),
        ("calc", "2H AD 3H 4D / " + CALC.split(" / ")[1],
         "the bases must be an A, a 2, a 3 and a 4, in that order"),
        ("montana", MONTANA.replace("/KD", " KD"),
         "a grid has 4 rows of 13 cells, not 3 of 13, 26, 13"),
        ("montana", MONTANA.replace("2D", "3D"),
         "a Montana layout holds the 48 cards from 2 to K once each: 3D twice; 2D missing"),
        ("montana", MONTANA.replace("3D", "AS", 1),
         "a Montana layout holds the 48 cards from 2 to K once each: 3D missing; AS not in "
         "this game"),
        ("jokers", JOKERS.rsplit(" / ", 1)[0], "a Jokers layout has 10 columns, not 9"),
        ("jokers", JOKERS.replace("JK JK", "JK KS"),
         "a Jokers layout holds the 48 cards without aces, and 2 JK, once each: KS twice; "
         "1 JK, not 2"),
        ("jokers", JOKERS.replace("2C 3C 4C 5C 6C / 7C", "2C 3C 4C 5C 6C 7C /"),
         "a Jokers layout has 5 cards in each column (J1)"),
    ],
)  # fmt: skip
def test_a_layout_that_is_no_deal_is_refused_in_one_line_naming_what_is_wrong(
    game, layout, message
):
    result = sim("show", game, "--layout", layout)
    assert result.exit_code == 1
    assert result.output == f"Error: {message}\n"


def layout_file(tmp_path, lines):
    path = tmp_path / "deals.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_run_plays_the_layouts_of_a_file_as_deals_of_their_own_seed(tmp_path):
    json_layout = json.dumps({"bases": CALC[:11].split(), "stock": CALC[14:].split()})
    line = json.dumps({"game": "calc", "seed": 3, "deal": 9, "layout": json.loads(json_layout)})
    lines = ["# three ways to write one deal", CALC, "", json_layout, line]
    path = layout_file(tmp_path, lines)
    out, log = tmp_path / "r.parquet", tmp_path / "m.jsonl"
    result = sim("calc", "-p", "planner", "--layout-file", path, "--out", out, "--log-moves", log)
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out).to_pydict()
    layout = json.loads(json_layout)
    assert rows["deal"] == [0, 1, 2]
    assert rows["seed"] == [layouts_seed([layout] * 3)] * 3
    assert len(set(rows["score"])) == 1  # one deal, played alike
    meta = json.loads(pq.read_schema(out).metadata[b"sim"])
    assert meta["deals"] == {"source": "layouts", "path": str(path), "seed": rows["seed"][0]}
    assert sim("replay", log).exit_code == 0
    shown_deal = sim("show", "calc", "-p", "planner", "--layout-file", path, "--deal", 2)
    logged = json.loads(log.read_text().splitlines()[2])
    assert shown_deal.stdout.splitlines()[0] == "calc · layout 2 of deals.txt · policy " + (
        "planner depth_weight=1.0 king_pile=1"
    )
    assert shown_deal.stdout.splitlines()[-1] == (
        f"outcome: {logged['outcome']} · score {logged['score']} · {len(logged['moves'])} moves"
    )


def test_a_random_policy_draws_the_same_stream_in_show_and_in_the_run(tmp_path):
    path = layout_file(tmp_path, [MONTANA, MONTANA.replace("3D 2D", "2D 3D")])
    log = tmp_path / "m.jsonl"
    args = ["montana", "-p", "random", "--layout-file", path, "--out", tmp_path / "r.parquet"]
    assert sim(*args, "--log-moves", log, "-q").exit_code == 0
    logged = json.loads(log.read_text().splitlines()[1])
    shown_deal = sim("show", "montana", "-p", "random", "--layout-file", path, "--deal", 1)
    moves = [m.split(". ", 1)[1] for m in shown_deal.stdout.splitlines() if ". " in m[:7]]
    assert moves == [m if not m.startswith("redeal:") else "redeal" for m in logged["moves"]]


@pytest.mark.parametrize(
    "lines, message",
    [
        (["# nothing but a comment"], "{path}: no layout in it (one a line; # starts a comment)"),
        ([CALC, CALC.replace("2D", "3D")],
         "{path} line 2: a Calculation layout holds the 52 cards once each: 3D twice; "
         "2D missing"),
        ([CALC, '{"bases": ["AD"'], "{path} line 2: not valid JSON (Expecting ',' delimiter)"),
        (['{"game": "montana", "layout": {"grid": ""}}'],
         '{path} line 1: a move-log line of "montana", not calc'),
    ],
)  # fmt: skip
def test_a_layout_file_with_a_bad_line_is_refused_naming_the_line(tmp_path, lines, message):
    path = layout_file(tmp_path, lines)
    result = sim("calc", "--layout-file", path, "--out", tmp_path / "r.parquet")
    assert result.exit_code == 1
    assert result.output == f"Error: {message.format(path=path)}\n"


def test_deals_past_the_end_of_a_layout_file_are_refused(tmp_path):
    path = layout_file(tmp_path, [CALC, CALC])
    result = sim("calc", "--layout-file", path, "-n", 3, "--out", tmp_path / "r.parquet")
    assert result.output == (
        f"Error: {path} holds 2 layouts (deals 0 to 1): deals 0 to 2 pass them\n"
    )
