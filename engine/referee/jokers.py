"""Referee of Jokers move logs (rules J1-J9)."""

from sim.engine.referee import LOSS_CLAIMS, VALID, BadLine, IllegalMove, Verdict
from sim.engine.referee.cards import DECK, check_cards, is_red, rank, suit
from sim.engine.referee.shapes import COLUMNS_OF_CARDS

# The values of a line's layout (engine.referee.shapes).
LAYOUT_SHAPE = {"columns": COLUMNS_OF_CARDS}

JOKER = "JK"
COLUMNS = 10


def check(line):
    cap = line.get("max_moves", 2000)
    columns = [list(column) for column in line["layout"]["columns"]]
    if len(columns) != COLUMNS or any(len(column) != 5 for column in columns):
        raise BadLine("layout: 10 columns of 5 cards (J1)")
    cards = [card for column in columns for card in column]
    if cards.count(JOKER) != 2:
        raise BadLine(f"layout: 2 jokers (J1), not {cards.count(JOKER)}")
    check_cards(
        [c for c in cards if c != JOKER],
        [c for c in DECK if rank(c) != 1],
        "not the 48 cards without aces (J1)",
    )
    table = Position(columns)
    for number, move in enumerate(line["moves"], 1):
        if number > cap:
            raise IllegalMove(number, move, f"the move cap of {cap} was already reached (J9)")
        table.play(number, move)
    score = sum(table.foundations.values())
    won = score == 52
    moves = len(line["moves"])
    claimed = line["outcome"]
    if won:
        expected = {"won"}
    elif moves >= cap:
        expected = {"capped"}
    elif table.any_move():
        expected = set(LOSS_CLAIMS)  # the player resigned, or a solver gave up or proved it
    else:
        expected = {"lost", "unwinnable"}
    if claimed not in expected or line["score"] != score:
        gives = "won" if won else "/".join(sorted(expected))
        return Verdict(
            False, None, f"claims {claimed} {line['score']}, the moves give {gives} {score}"
        )
    return VALID


def position(line):
    """The dealt position of a move-log line."""
    return Position([list(column) for column in line["layout"]["columns"]])


class Position:
    """Columns (covered card first), the joker reserve and the foundations by suit."""

    def __init__(self, columns):
        self.columns = columns
        self.reserve = 0
        self.foundations = dict.fromkeys("CDHS", 1)  # the aces start them (J1)
        for column in self.columns:
            self._set_jokers_aside(column)

    def _set_jokers_aside(self, column):
        while column and column[-1] == JOKER:  # J6
            column.pop()
            self.reserve += 1

    def play(self, number, move):
        source, arrow, target = move.partition(">")
        if not arrow or not _is_column(source):
            raise IllegalMove(number, move, "not a move of the form c3>f, c3>c7, c3>c7+1")
        column = self.columns[int(source[1:]) - 1]
        if not column:
            raise IllegalMove(number, move, f"column {source[1:]} is empty")
        card = column[-1]
        if target == "f":
            wanted = self.foundations[suit(card)] + 1
            if rank(card) != wanted:
                raise IllegalMove(number, move, f"{card} does not fit its foundation (J3)")
            self.foundations[suit(card)] = wanted
        else:
            self._build(number, move, card, target)
        column.pop()
        self._set_jokers_aside(column)

    def _build(self, number, move, card, target):
        name, plus, jokers = target.partition("+")
        if not _is_column(name) or (plus and jokers not in ("1", "2")):
            raise IllegalMove(number, move, f"no such target {target!r}")
        if name == move.partition(">")[0]:
            raise IllegalMove(number, move, "a card cannot move onto its own column")
        column = self.columns[int(name[1:]) - 1]
        jokers = int(jokers) if plus else 0
        if not column:
            if jokers:
                raise IllegalMove(number, move, "a joker never goes into an empty column (J7)")
            column.append(card)  # J5
            return
        top = column[-1]
        if jokers > self.reserve:
            raise IllegalMove(number, move, f"the reserve holds {self.reserve} joker(s) (J7)")
        gap = jokers + 1
        same_colour = jokers % 2 == 1
        if rank(card) != rank(top) - gap or (is_red(card) == is_red(top)) != same_colour:
            rule = "J4" if jokers == 0 else "J7"
            need = (
                f"{gap} rank(s) below {top} and of the {'same' if same_colour else 'other'} colour"
            )
            raise IllegalMove(number, move, f"{card} must be {need} ({rule})")
        self.reserve -= jokers
        column.extend([JOKER] * jokers + [card])

    def any_move(self):
        """Whether some legal move remains (J8): foundation, build, empty column or bridge."""
        free = [column[-1] for column in self.columns if column]
        if any(rank(card) == self.foundations[suit(card)] + 1 for card in free):
            return True
        if len(free) < COLUMNS and len(free) > 0:
            return True
        for card in free:
            for top in free:
                for jokers in range(min(self.reserve, 2) + 1):
                    same = jokers % 2 == 1
                    if (
                        rank(card) == rank(top) - jokers - 1
                        and (is_red(card) == is_red(top)) == same
                    ):
                        return True
        return False


def _is_column(name):
    return (
        len(name) >= 2 and name[0] == "c" and name[1:].isdigit() and 1 <= int(name[1:]) <= COLUMNS
    )
