"""Layouts typed in: each game's text notation (RULES.md, "Layouts as text") read into
the move-log form of a layout. Only the shape is read here; whether the cards make a
deal (each once, the right ones) is the rules' check (state_from_layout).

- calc: the 4 bases of F1..F4, `/`, then the 48 stock cards, the first turned first;
- montana: the grid notation, 4 rows of 13 cells separated by `/`, a gap `..`;
- jokers: the 10 columns separated by `/`, each from its covered card to its free one.
"""

from sim.engine.cards import parse_card


def calc(text):
    parts = text.split("/")
    if len(parts) != 2:
        raise ValueError(
            "a Calculation layout is written as its 4 bases, `/`, then its 48 stock cards"
        )
    bases, stock = (_cards(part) for part in parts)
    return {"bases": bases, "stock": stock}


def montana(text):
    return {"grid": " ".join(text.split())}


def jokers(text):
    columns = [_cards(column) for column in text.split("/")]
    return {"columns": columns}


def _cards(text):
    """The cards of a text, checked one by one so that a typo is named."""
    names = text.split()
    for name in names:
        parse_card(name)
    return names
