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
