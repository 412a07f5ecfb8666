"""PySolFC's game numbers: the layout PySolFC deals as game number N, as a sim layout.

PySolFC (3.4, as its source reads) deals game N in three steps, and this module takes
the first two from pysol-cards, the package PySolFC itself deals with:

1. The generator (pysollib/pysolrandom.py, construct_random): "msN", and N from 1 to
   31999, take LCRandom31(N), the generator of Microsoft FreeCell's deals; any other N
   takes MTRandom(N), a Mersenne Twister whose randint is Python 2's.
2. The shuffle (pysollib/game/__init__.py, Game.shuffle): a fresh deck in PySolFC's
   order, suit by suit (clubs, spades, hearts, diamonds), each A to K; LCRandom31
   first rearranges it rank by rank (ms_rearrange); the generator's shuffle; then the
   game's _shuffleHook. The list goes onto the talon in order, so its last card is the
   talon's top card, dealt first.
3. The game's dealing (its startGame): each game's own, in engine.pysol_deals, named
   by the game's declaration (Game.pysol).
"""

import importlib

PYSOL_VERSION = "3.4"  # the PySolFC whose dealing code was read
MS_PREFIX = "ms"
FIRST_MT_NUMBER = 32000  # from here on, a plain number takes the Mersenne Twister
LARGEST_NUMBER = 2**63 - 1  # deal indices are int64 in the kernels and the files
PYSOL_SUITS = "CSHD"  # PySolFC's suit order (pysollib/resource.py SUITS)


class PysolError(ValueError):
    """A game number PySolFC does not deal, or a game sim cannot deal as PySolFC does."""


def parse_number(text):
    """(number, ms) from `123456` or `ms123456`; PysolError for anything else."""
    text = str(text).strip()
    ms = text.lower().startswith(MS_PREFIX)
    digits = text[len(MS_PREFIX) :] if ms else text
    if not digits.isdigit():
        raise PysolError(f"{text!r} is not a PySolFC game number (123456, or ms123456)")
    number = int(digits)
    check_numbers(number, 1, ms)
    return number, ms


def check_numbers(first, count, ms):
    """Refuse game numbers PySolFC does not deal, or that a result file cannot hold."""
    from pysol_cards.random import LCRandom31

    last = first + count - 1
    name = f"{MS_PREFIX}{last}" if ms else f"{last}"
    if first < 1:
        raise PysolError("PySolFC game numbers start at 1")
    if ms and last > LCRandom31.MAX_SEED:
        raise PysolError(f"PySolFC deals ms numbers up to ms{LCRandom31.MAX_SEED}, not {name}")
    if last > LARGEST_NUMBER:
        raise PysolError(f"game {name} is past {LARGEST_NUMBER}, the last deal a result holds")


def shuffled_deck(number, ms=False):
    """The 52 cards (sim card codes) of PySolFC's game `number` after its shuffle and
    before any game's hook: the talon's bottom card first."""
    from pysol_cards.cards import createCards, ms_rearrange
    from pysol_cards.random import LCRandom31, MTRandom

    deck = createCards(1)
    if ms or number < FIRST_MT_NUMBER:
        generator, deck = LCRandom31(number), ms_rearrange(deck)
    else:
        generator = MTRandom(number)
    return [_sim_code(card) for card in generator.shuffle(deck)]


def _sim_code(card):
    suit = "CDHS".index(PYSOL_SUITS[card.suit])  # engine.cards' suit order
    return 4 * (card.rank - 1) + suit


def deals_as_pysol(game):
    """Whether sim knows how PySolFC deals this game."""
    return bool(getattr(game, "pysol", None))


def pysol_layout(game, number, ms=False):
    """The layout (move-log form) PySolFC deals as game `number` of this game."""
    if not deals_as_pysol(game):
        raise PysolError(
            f"--pysol is not available for {game.title}: sim does not know how PySolFC deals it"
        )
    module_name, _, function = game.pysol.partition(":")
    deal = getattr(importlib.import_module(module_name), function)
    return deal(shuffled_deck(number, ms))
