"""Card codes shared by the games, and the rule book's card notation.

A card is one small integer: code = 4 * (rank - 1) + suit, rank 1..13 (A..K), suit
0..3 for C D H S. So rank = code // 4 + 1 and suit = code % 4. Jokers are 52 and 53.
"""

RANKS = "A23456789TJQK"
SUITS = "CDHS"
JOKER = 52
JOKER2 = 53
NO_CARD = -1


def card_code(rank, suit):
    return 4 * (rank - 1) + suit


def card_name(code):
    if code >= JOKER:
        return "JK"
    return RANKS[code // 4] + SUITS[code % 4]


def parse_card(text):
    """The card code of `TD`, `AS`, `JK`...; ValueError on anything else."""
    if text == "JK":
        return JOKER
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    return card_code(RANKS.index(text[0]) + 1, SUITS.index(text[1]))


def is_red(code):
    return code % 4 in (1, 2)


def deck_problem(cards, expected):
    """What keeps `cards` (codes) from holding each code of `expected` once: the cards
    missing, the cards repeated and the cards that do not belong, in words (`5C twice;
    7H missing`), or None when nothing does."""
    counts = {}
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    wanted = set(expected)
    repeated = [f"{card_name(c)} {_times(n)}" for c, n in sorted(counts.items()) if n > 1]
    missing = [card_name(c) for c in sorted(wanted - counts.keys())]
    foreign = [card_name(c) for c in sorted(counts.keys() - wanted)]
    parts = []
    if repeated:
        parts.append(_listed(repeated, "; "))
    if missing:
        parts.append(_listed(missing) + " missing")
    if foreign:
        parts.append(_listed(foreign) + " not in this game")
    return "; ".join(parts) or None


NAMED = 6  # cards a problem names before it counts the rest: one line stays short


def _listed(names, separator=", "):
    if len(names) <= NAMED:
        return separator.join(names)
    return separator.join(names[:NAMED]) + f" and {len(names) - NAMED} more"


def _times(n):
    return "twice" if n == 2 else f"{n} times"
