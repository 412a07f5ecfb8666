"""Card notation for the referees (kept apart from the engine on purpose)."""

from sim.engine.referee import BadLine

RANKS = "A23456789TJQK"
SUITS = "CDHS"
DECK = [r + s for r in RANKS for s in SUITS]


def rank(card):
    return RANKS.index(card[0]) + 1


def suit(card):
    return card[1]


def is_red(card):
    return card[1] in "DH"


def check_cards(cards, expected, what):
    """Refuse a layout that is not exactly the expected cards, naming the first fault."""
    for card in cards:
        if card not in expected and card != "JK":
            raise BadLine(f"layout: {card!r} is not a card")
    seen = set()
    for card in cards:
        if card in seen and card != "JK":
            raise BadLine(f"layout: {card} appears twice")
        seen.add(card)
    if sorted(cards) != sorted(expected):
        missing = sorted(set(expected) - set(cards))
        raise BadLine(f"layout: {what} (missing {' '.join(missing[:4]) or 'none'})")
