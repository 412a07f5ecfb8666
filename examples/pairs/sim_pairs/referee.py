"""The Pairs referee, written from the rules (P1-P5) alone, and the drawing of a position."""

from sim.engine.drawings import card
from sim.engine.referee import VALID, BadLine, IllegalMove, Verdict
from sim.engine.referee.cards import DECK, check_cards, rank


class Position:
    """The row (None for an empty cell) and the stock left, in order."""

    def __init__(self, row, stock):
        self.row = list(row)
        self.stock = list(stock)
        self.taken = 0

    def play(self, number, move):
        a, plus, b = move.partition("+")
        if not plus or not a.isdigit() or not b.isdigit():
            raise IllegalMove(number, move, "not a move of the form a+b")
        a, b = int(a) - 1, int(b) - 1
        if not 0 <= a < b < len(self.row):
            raise IllegalMove(number, move, "cells must be two row cells, the lower first")
        first, second = self.row[a], self.row[b]
        if first is None or second is None:
            raise IllegalMove(number, move, "a cell of the pair is empty")
        if rank(first) != rank(second):
            raise IllegalMove(number, move, f"{first} and {second} differ in rank (P3)")
        for cell in (a, b):  # the lower cell is refilled first (P4)
            self.row[cell] = self.stock.pop(0) if self.stock else None
        self.taken += 2

    def pairs_left(self):
        ranks = [rank(c) for c in self.row if c is not None]
        return len(ranks) != len(set(ranks))


def position(line):
    """The dealt position of a move-log line."""
    return Position(line["layout"]["row"], line["layout"]["stock"])


def check(line):
    layout = line["layout"]
    check_cards(list(layout["row"]) + list(layout["stock"]), DECK, "not the 52 cards once each")
    if len(layout["row"]) != line.get("cells", 12):
        raise BadLine(f"layout: the row has {len(layout['row'])} cells (P2)")
    table = position(line)
    for number, move in enumerate(line["moves"], 1):
        table.play(number, move)
    if table.pairs_left():
        return Verdict(False, None, "the log ends while a pair is still in the row (P5)")
    outcome = "won" if table.taken == 52 else "lost"
    if (line["outcome"], line["score"]) != (outcome, table.taken):
        claimed = f"{line['outcome']} {line['score']}"
        return Verdict(False, None, f"claims {claimed}, the moves give {outcome} {table.taken}")
    return VALID


def draw(position):
    cells = "".join(f" {n + 1:>3}" for n in range(len(position.row)))
    shown = "".join(" " + (" ··" if c is None else f" {card(c)}") for c in position.row)
    return f"  {cells}\n  {shown}\n  taken {position.taken} · {len(position.stock)} in stock"
