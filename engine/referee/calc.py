"""Referee of Calculation move logs (rules C1-C9)."""

from sim.engine.referee import LOSS_CLAIMS, VALID, BadLine, IllegalMove, Verdict
from sim.engine.referee.cards import DECK, check_cards, rank
from sim.engine.referee.shapes import CARDS

LAYOUT_SHAPE = {
    "bases": CARDS,
    "stock": CARDS,
}  # the values of a line's layout (engine.referee.shapes)


def check(line):
    wastes = line.get("wastes", 4)
    layout = line["layout"]
    bases, stock = list(layout["bases"]), list(layout["stock"])
    check_cards(bases + stock, DECK, "not the 52 cards once each")
    if [rank(b) for b in bases] != [1, 2, 3, 4]:
        raise BadLine("layout: the bases are not an A, a 2, a 3 and a 4 (C3)")
    table = Position(bases, stock, wastes)
    for number, move in enumerate(line["moves"], 1):
        table.play(number, move)
    if stock:
        return Verdict(False, None, f"the log ends with {len(stock)} cards still in the stock")
    for w, pile in enumerate(table.piles):
        for k in range(4):
            if pile and table.needs(k) == rank(pile[-1]):
                return Verdict(
                    False, None, f"the log ends while w{w + 1}>f{k + 1} is still possible (C8)"
                )
    score = sum(table.counts)
    outcome = "won" if score == 52 else "lost"
    claimed = "lost" if outcome == "lost" and line["outcome"] in LOSS_CLAIMS else line["outcome"]
    if (claimed, line["score"]) != (outcome, score):
        return Verdict(
            False,
            None,
            f"claims {line['outcome']} {line['score']}, the moves give {outcome} {score}",
        )
    return VALID


def position(line):
    """The dealt position of a move-log line."""
    layout = line["layout"]
    return Position(list(layout["bases"]), list(layout["stock"]), line.get("wastes", 4))


class Position:
    """Foundations (top card, count), waste piles (bottom first) and the stock left."""

    def __init__(self, bases, stock, wastes):
        self.top_cards = list(bases)
        self.tops = [1, 2, 3, 4]  # rank on top of F1..F4
        self.counts = [1, 1, 1, 1]
        self.piles = [[] for _ in range(wastes)]
        self.stock = stock

    def needs(self, k):
        """The rank foundation k takes next (C2), None when complete."""
        return None if self.counts[k] == 13 else (self.tops[k] + k) % 13 + 1

    def play(self, number, move):
        stock = self.stock
        source, arrow, target = move.partition(">")
        if not arrow or not target:
            raise IllegalMove(number, move, "not a move of the form s>f2, s>w3 or w3>f2")
        if source == "s":
            if not stock:
                raise IllegalMove(number, move, "the stock is empty")
            card = stock[0]
        else:
            card = self._waste_top(number, move, source)
        if target[0] == "f":
            k = self._index(number, move, target, 4, "foundation")
            if self.needs(k) != rank(card):
                wanted = self.needs(k)
                reason = "it is complete" if wanted is None else f"it needs {_rank_name(wanted)}"
                raise IllegalMove(number, move, f"{card} does not fit F{k + 1}: {reason} (C2)")
            self.tops[k], self.counts[k] = rank(card), self.counts[k] + 1
            self.top_cards[k] = card
            if source != "s":
                self.piles[int(source[1:]) - 1].pop()
        elif target[0] == "w":
            if source != "s":
                raise IllegalMove(number, move, "nothing moves between waste piles (C6)")
            self.piles[self._index(number, move, target, len(self.piles), "waste pile")].append(
                card
            )
        else:
            raise IllegalMove(number, move, f"no such target {target!r}")
        if source == "s":
            stock.pop(0)

    def _waste_top(self, number, move, source):
        if source.startswith("f"):
            raise IllegalMove(number, move, "nothing comes back from a foundation (C6)")
        if not source.startswith("w"):
            raise IllegalMove(number, move, f"no such source {source!r}")
        pile = self.piles[self._index(number, move, source, len(self.piles), "waste pile")]
        if not pile:
            raise IllegalMove(number, move, f"waste pile {source[1:]} is empty")
        return pile[-1]

    @staticmethod
    def _index(number, move, name, count, what):
        if name[0] not in "fw" or not name[1:].isdigit() or not 1 <= int(name[1:]) <= count:
            raise IllegalMove(number, move, f"there is no {what} {name[1:] or '?'}")
        return int(name[1:]) - 1


def _rank_name(r):
    return "A23456789TJQK"[r - 1]
