"""How PySolFC lays out its shuffled deck for each game sim plays, as a sim layout.

Each function takes the deck as engine.pysol.shuffled_deck gives it (sim card codes,
the talon's bottom card first: PySolFC deals from the end of the list) and returns the
layout in move-log form (RULES.md). Each says which of PySolFC's code it follows.
"""

from sim.engine.cards import card_name


def rank(card):
    return card // 4 + 1


def calculation(deck):
    """pysollib/games/calculation.py. Calculation._shuffleHook takes, reading the
    shuffled list from its start, the first A, 2, 3 and 4 out, and puts them on top of
    the talon (A topmost); startGame deals them to the foundations F1..F4 and turns the
    talon's top card onto the waste: the stock is the rest of the list, last card
    first."""
    bases = {}
    rest = []
    for card in deck:
        if rank(card) <= 4 and rank(card) not in bases:
            bases[rank(card)] = card
        else:
            rest.append(card)
    return {
        "bases": [card_name(bases[r]) for r in (1, 2, 3, 4)],
        "stock": [card_name(card) for card in reversed(rest)],
    }


def montana(deck):
    """pysollib/games/montana.py. Montana has no _shuffleHook; startGame deals the
    talon's top card into each of the 52 cells in turn, row by row, each from the
    left, and an ace goes to an unseen stack instead, leaving its cell a gap."""
    cells = [".." if rank(card) == 1 else card_name(card) for card in reversed(deck)]
    rows = [" ".join(cells[13 * r : 13 * (r + 1)]) for r in range(4)]
    return {"grid": "/".join(rows)}
