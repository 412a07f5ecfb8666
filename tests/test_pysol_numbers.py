"""`--pysol N`: the layout PySolFC deals as game number N, played by sim.

How the pinned layouts below were made (and `derived` below makes them again, so the
pins cannot drift from the derivation): pysol-cards' own generator for game N (PySolFC's
pysollib/pysolrandom.py construct_random: LCRandom31 for ms numbers and for 1..31999,
MTRandom from 32000 on) shuffles a fresh deck in PySolFC's order (createCards: clubs,
spades, hearts, diamonds, each A to K; ms_rearrange first for LCRandom31); then the
game's dealing as PySolFC's source reads, transcribed with PySolFC's ranks from 0:

- Calculation (pysollib/games/calculation.py): _shuffleHook takes the first A, 2, 3, 4
  of the shuffled list (c.rank <= 3 and topcards[c.rank] is None), reverses them and
  puts them after the rest; the talon's top is the list's end; startGame deals the top
  four to F1..F4 (dealRow), then turns the top card (dealCards): the stock.
- Montana (pysollib/games/montana.py): no hook; startGame takes the talon's top card
  for each of the 52 cells in turn, row by row, an ace to an unseen stack (a gap).

A layout is written in the text notation of RULES.md ("Layouts as text").
"""

import json

import pytest
from conftest import sim
from pysol_cards.cards import createCards, ms_rearrange
from pysol_cards.random import LCRandom31, MTRandom

from sim.engine.games import get_game
from sim.engine.pysol import pysol_layout, shuffled_deck

CALCULATION = {
    "1": "AC 2H 3D 4S / JD 2D 9H JC 5D 7H 7C 5H KD KC 9S 5S AD QC KH 3H 2S KS 9D QD JS AS "
    "AH 3C 4C 5C TS QH 4H 4D 7S 3S TD TH 8H 2C JH 7D 6D 8S 8D QS 6C 8C TC 6S 9C 6H",
    "2": "AS 2H 3D 4H / QD QC KC 3C 4C 2C KD 5C 4D JD JS 6H QS 6D 2D 9C TD JC 8C 6C 8S 4S "
    "5D QH 7S 9D KS 7C 6S AC 8H AH 9S TC 2S 3S TS 9H 3H AD 7H 5H 8D KH 7D 5S TH JH",
    "1000": "AH 2H 3S 4S / 8C 3H KD 7C 6D 6H TC 9C 5C 4C 8S KH 5H 6S QD 5S 9H JC 7H 4D AD "
    "TS KS QS JS 3C JD 4H AC 2C 3D TH QC 9S QH 6C 2D AS 2S 8D JH 8H 9D 7D TD 7S 5D KC",
    "123456": "AD 2H 3H 4D / 3D 2D 2C 9C AC 6H 4C KC 6C TC 8S 8C 9D TH 2S JS AS 4H AH QH 7H "
    "8H 3S 9H TS JD KD 3C 6D QS 6S 4S QC TD KH 5D KS 7D 5H 7S 8D 5S 9S JH JC 5C 7C QD",
    "ms100000": "AS 2S 3C 4H / 5C QS 8C AD 7D TD KC 3S 6S 7S TH 7C 4S 4D AH AC JC 9C 3H JS "
    "KD TC JH 9H 2D QD 4C QH 7H 6H 8H KS 2C JD TS 5D 5S 8D KH 5H 8S 9D 2H 6D 3D 6C 9S QC",
}
MONTANA = {
    "1": "JD 2D 9H JC 5D 7H 7C 5H KD KC 9S 5S ../QC KH 3H 2S KS 9D QD JS .. .. 3C 4C 5C/"
    "TS QH 4H .. 4D 7S 3S TD 4S TH 8H 2C JH/7D 6D 8S 8D QS 6C 3D 8C TC 6S 9C 2H 6H",
    "2": "QD QC KC 3C 4C 2C KD 5C 4D JD JS 6H QS/6D 2D 9C TD JC 8C 6C 8S 4S 5D QH 7S 9D/"
    "KS 7C 6S 4H .. 8H .. 9S TC 2S 3S TS 9H/2H 3H .. 7H 3D 5H 8D KH 7D .. 5S TH JH",
    "1000": "8C 3H KD 7C 6D 6H TC 9C 5C 4C 8S KH 5H/6S QD 5S 9H JC 7H 4D .. TS KS QS JS 3C/"
    "JD 4H .. 2C 3D TH QC 9S QH 4S 6C 2D ../2S 3S 8D JH 8H 9D .. 7D TD 7S 5D 2H KC",
    "123456": "3D 2D 2C 9C .. 6H 4C KC 6C TC 8S 8C 9D/TH 2S JS .. 4H .. QH 7H 8H 3S 9H TS JD/"
    "KD 3C 6D QS 6S 4S QC TD KH 5D KS 7D 5H/7S 8D 2H 5S 9S JH JC 3H .. 4D 5C 7C QD",
    "ms100000": "5C QS 8C .. 7D TD KC 3S 6S 7S TH 7C 4S/4D .. .. JC 9C 3H JS KD TC JH 9H 2D "
    "QD/4C QH 7H 6H 8H KS 2C JD TS 5D 5S 8D KH/5H 8S 9D 2H 6D 3D 2S 6C 9S 3C .. QC 4H",
}


def talon(number):
    """The shuffled list of PySolFC's game `number`: pysol-cards' cards, its end on top."""
    ms = number.startswith("ms")
    n = int(number.removeprefix("ms"))
    cards = createCards(1)
    if ms or n < 32000:
        generator, cards = LCRandom31(n), ms_rearrange(cards)
    else:
        generator = MTRandom(n)
    return generator.shuffle(cards)


def name(card):
    return "A23456789TJQK"[card.rank - 1] + card.suit_s()


def derived_calculation(number):
    cards = talon(number)
    topcards = [None] * 4
    for card in cards[:]:
        rank = card.rank - 1  # PySolFC's ranks count from 0
        if rank <= 3 and topcards[rank] is None:
            topcards[rank] = card
            cards.remove(card)
    topcards.reverse()
    pile = cards + topcards
    bases = [pile.pop() for _ in range(4)]
    stock = [pile.pop() for _ in range(len(pile))]
    return " ".join(map(name, bases)) + " / " + " ".join(map(name, stock))


def derived_montana(number):
    pile = talon(number)
    cells = [".." if card.rank == 1 else name(card) for card in (pile.pop() for _ in range(52))]
    return "/".join(" ".join(cells[13 * r : 13 * (r + 1)]) for r in range(4))


def as_text(game, layout):
    if game == "calc":
        return " ".join(layout["bases"]) + " / " + " ".join(layout["stock"])
    return layout["grid"]


def sim_layout(game, number):
    ms = number.startswith("ms")
    return as_text(game, pysol_layout(get_game(game), int(number.removeprefix("ms")), ms))


@pytest.mark.parametrize("number", list(CALCULATION))
def test_pysol_calculation_numbers_deal_the_layout_pysolfc_deals(number):
    assert derived_calculation(number) == CALCULATION[number]
    assert sim_layout("calc", number) == CALCULATION[number]


@pytest.mark.parametrize("number", list(MONTANA))
def test_pysol_montana_numbers_deal_the_grid_pysolfc_deals(number):
    assert derived_montana(number) == MONTANA[number]
    assert sim_layout("montana", number) == MONTANA[number]


def test_the_shuffle_of_game_1_is_microsoft_freecell_deal_1():
    # PySolFC's game 1 is FreeCell's deal 1, dealt from the talon's top card row by row
    # into 8 columns: its first two rows are widely published.
    top_first = [
        "A23456789TJQK"[code // 4] + "CDHS"[code % 4] for code in reversed(shuffled_deck(1))
    ]
    assert " ".join(top_first[:16]) == "JD 2D 9H JC 5D 7H 7C 5H KD KC 9S 5S AD QC KH 3H"


def test_a_pysol_run_records_the_game_numbers_as_deals_of_seed_minus_1(tmp_path):
    out, log = tmp_path / "r.parquet", tmp_path / "m.jsonl"
    result = sim("calc", "--pysol", 1000, "-n", 2, "--out", out, "--log-moves", log)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "calc · greedy · wastes=4 · PySolFC games 1000 to 1001 (seed -1)"
    )
    import pyarrow.parquet as pq

    rows = pq.read_table(out).to_pydict()
    assert rows["seed"] == [-1, -1] and rows["deal"] == [1000, 1001]
    meta = json.loads(pq.read_schema(out).metadata[b"sim"])
    assert meta["deals"] == {"source": "pysol", "ms": False}
    first = json.loads(log.read_text().splitlines()[0])
    assert as_text("calc", first["layout"]) == CALCULATION["1000"]
    assert sim("replay", log).exit_code == 0


def test_show_pysol_plays_the_game_number_as_the_run_does(tmp_path):
    log = tmp_path / "m.jsonl"
    args = ["montana", "--pysol", "ms100000", "-n", 1, "--out", tmp_path / "r.parquet", "-q"]
    assert sim(*args, "--log-moves", log).exit_code == 0
    logged = json.loads(log.read_text())
    shown = sim("show", "montana", "--pysol", "ms100000", "--final", "--no-color").output
    assert shown.splitlines()[0] == "montana · PySolFC game ms100000 · policy greedy"
    assert logged["seed"] == -2 and logged["deal"] == 100000
    assert shown.splitlines()[-1] == (
        f"outcome: {logged['outcome']} · score {logged['score']} · {len(logged['moves'])} moves"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["calc", "--pysol", "0"], "PySolFC game numbers start at 1"),
        (["calc", "--pysol", "12x"], "'12x' is not a PySolFC game number (123456, or ms123456)"),
        (["calc", "--pysol", "ms8589934592"],
         "PySolFC deals ms numbers up to ms8589934591, not ms8589934592"),
        (["calc", "--pysol", str(2**63)], f"game {2**63} is past {2**63 - 1}, the last deal a "
         "result holds"),
        (["jokers", "--pysol", "5"],
         "--pysol is not available for Jokers: sim does not know how PySolFC deals it"),
        (["calc", "--pysol", "5", "--seed", "3"],
         "--pysol names its own deals; --seed is for sim's seeded deals"),
        (["show", "calc", "--pysol", "5", "--deal", "3"],
         "--pysol names its own deal; --deal is for sim's seeded deals"),
    ],
)  # fmt: skip
def test_a_game_number_pysolfc_does_not_deal_is_refused_in_one_line(tmp_path, args, message):
    result = sim(
        *args,
        "--out" if args[0] != "show" else "--final",
        *([tmp_path / "r.parquet"] if args[0] != "show" else []),
    )
    assert result.exit_code in (1, 2)
    assert result.output.splitlines()[-1] == f"Error: {message}"
