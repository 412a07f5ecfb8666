"""What a result row can hold: the invariants no play of a game can break.

A run checks every row against them before the row is kept (engine.run.play_loop), so
that a row a worker did not finish correctly (a forked copy writing over it, shared
memory gone wrong) stops the run instead of passing for a deal played.

Every game's rows are checked against its column declarations (a bool is 0 or 1, a
coded column holds one of its labels, a number fits its type); a game adds its own
invariants by naming a function in `Game.row_checks`: function(column, rules) returns
[(ok, rule)], `ok` a boolean array over the rows (column(name) gives a column's values)
and `rule` the invariant in words, naming the columns it reads first. The built-in
games' functions are below. Pure numpy: checking costs no compile.
"""

import importlib

import numpy as np

from sim.engine import outcomes

TYPE_RANGES = {
    "bool": (0, 1),
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
}
WON, CAPPED = outcomes.LABELS.index("won"), outcomes.LABELS.index("capped")


def first_impossible_row(game, rows, rules):
    """(index, why) of the first of the kernel rows (int32 [n, columns]) that no play
    of game under rules can give, or None when every one can."""
    names = game.column_names
    if rows.shape[0] == 0:
        return None

    def column(name):
        return rows[:, names.index(name)]

    checks = _declared(game, column) + _own(game, column, rules)
    first = None
    for ok, rule in checks:
        bad = np.flatnonzero(~np.asarray(ok, bool))
        if len(bad) and (first is None or bad[0] < first[0]):
            first = (int(bad[0]), rule)
    if first is None:
        return None
    index, rule = first
    shown = " ".join(f"{name}={rows[index, names.index(name)]}" for name in _named(rule, names))
    return index, f"{rule}; the row has {shown}"


def _declared(game, column):
    checks = []
    for declared in game.columns:
        values = column(declared.name)
        low, high = TYPE_RANGES.get(declared.type, TYPE_RANGES["int32"])
        if declared.labels:
            low, high = 0, len(declared.labels) - 1
        checks.append((between(values, low, high), f"{declared.name} is {low}..{high}"))
    return checks


def _own(game, column, rules):
    if not game.row_checks:
        return []
    module_name, _, function = game.row_checks.partition(":")
    return list(getattr(importlib.import_module(module_name), function)(column, rules))


def _named(rule, names):
    """The columns a rule's words name, in the order they come."""
    words = rule.replace(",", " ").replace("(", " ").replace(")", " ").split()
    return list(dict.fromkeys(word for word in words if word in names))


def between(values, low, high):
    return (values >= low) & (values <= high)


def calc(column, rules):
    """Calculation (C1-C9): the four bases always count, 48 stock cards are placed or
    built once each, and only a complete build wins."""
    score, moves, outcome = column("score"), column("moves"), column("outcome")
    complete = score == 52
    return [
        (between(score, 4, 52), "score is 4..52"),
        (column("won") == complete, "won is 1 exactly when score is 52"),
        ((outcome == WON) == complete, "outcome is won exactly when score is 52"),
        (outcome != CAPPED, "outcome is never capped (no move cap)"),
        # Each of the 48 stock cards is turned once, and a card is moved up once at most.
        (between(moves, 48, score + 44), "moves is 48..score + 44"),
        (between(column("last_foundation_turn"), 0, 48), "last_foundation_turn is 0..48"),
        (between(column("max_waste_height"), 0, 48), "max_waste_height is 0..48"),
    ]


def montana(column, rules):
    """Montana (M1-M7): 48 cards in runs at most, the redeals and the move cap of the
    rules, a win is every run complete."""
    score, outcome, won = column("score"), column("outcome"), column("won")
    moves, cap = column("moves"), rules["max_moves"]
    return [
        (between(score, 0, 48), "score is 0..48"),
        (won == (outcome == WON), "won is 1 exactly when outcome is won"),
        (~(won == 1) | (score == 48), "score is 48 when won is 1"),
        (between(column("redeals"), 0, rules["redeals"]), f"redeals is 0..{rules['redeals']}"),
        (between(moves, 0, cap), f"moves is 0..{cap} (the move cap)"),
        ((outcome != CAPPED) | (moves == cap), f"moves is {cap} when outcome is capped"),
        (between(column("score_deal1"), 0, 48), "score_deal1 is 0..48"),
        (between(column("score_deal2"), -1, 48), "score_deal2 is -1..48"),
        (between(column("score_deal3"), -1, 48), "score_deal3 is -1..48"),
    ]


def jokers(column, rules):
    """Jokers (J1-J9): the four aces start the foundations, a win is all 52 cards up,
    and play ends at the move cap."""
    score, outcome, moves, cap = (
        column("score"),
        column("outcome"),
        column("moves"),
        rules["max_moves"],
    )
    complete = score == 52
    return [
        (between(score, 4, 52), "score is 4..52"),
        (column("won") == complete, "won is 1 exactly when score is 52"),
        ((outcome == WON) == complete, "outcome is won exactly when score is 52"),
        (between(moves, 0, cap), f"moves is 0..{cap} (the move cap)"),
        ((outcome != CAPPED) | (moves == cap), f"moves is {cap} when outcome is capped"),
        (column("jokers_used") >= 0, "jokers_used is at least 0"),
        (column("nodes") >= 0, "nodes is at least 0"),
    ]
