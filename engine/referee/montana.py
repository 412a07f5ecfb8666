"""Referee of Montana move logs (rules M1-M7, two redeals by default)."""

from sim.engine.referee import LOSS_CLAIMS, VALID, BadLine, IllegalMove, Verdict
from sim.engine.referee.cards import DECK, check_cards, rank, suit
from sim.engine.referee.shapes import TEXT

LAYOUT_SHAPE = {"grid": TEXT}  # the values of a line's layout (engine.referee.shapes)

ROWS, COLS = 4, 13
GAP = ".."


def parse_grid(text):
    rows = [row.split() for row in text.split("/")]
    if len(rows) != ROWS or any(len(row) != COLS for row in rows):
        raise BadLine(f"a grid has {ROWS} rows of {COLS} cells: {text[:40]!r}...")
    return rows


class Position:
    """The grid (rows of cells, `..` for a gap), redeals and card moves so far."""

    def __init__(self, grid_text, redeals_allowed=2, cap=5000):
        self.grid = parse_grid(grid_text)
        _check_grid_cards(self.grid, "layout")
        self.redeals_allowed, self.cap = redeals_allowed, cap
        self.redeals = self.card_moves = 0

    def play(self, number, move):
        if self.card_moves >= self.cap:
            raise IllegalMove(number, move, f"the move cap of {self.cap} was already reached (M7)")
        if move.startswith("redeal:"):
            if self.redeals >= self.redeals_allowed:
                allowed = self.redeals_allowed
                raise IllegalMove(number, move, f"only {allowed} redeals are allowed (M5)")
            if legal_moves(self.grid):
                raise IllegalMove(
                    number, move, "a redeal is allowed only when no move is possible (M5)"
                )
            self.grid = _check_redeal(number, move, self.grid)
            self.redeals += 1
        else:
            _play(number, move, self.grid)
            self.card_moves += 1


def position(line):
    """The dealt position of a move-log line."""
    return Position(line["layout"]["grid"], line.get("redeals", 2), line.get("max_moves", 5000))


def check(line):
    redeals_allowed = line.get("redeals", 2)
    cap = line.get("max_moves", 5000)
    position = Position(line["layout"]["grid"], redeals_allowed, cap)
    for number, move in enumerate(line["moves"], 1):
        position.play(number, move)
    grid, redeals, card_moves = position.grid, position.redeals, position.card_moves
    won = is_won(grid)
    if won:
        outcome = "won"
    elif card_moves >= cap:
        outcome = "capped"
    elif legal_moves(grid):
        return Verdict(False, None, "the log ends while a move is still possible")
    elif redeals < redeals_allowed:
        return Verdict(False, None, "the log ends while a redeal remains (M5)")
    else:
        outcome = "lost"
    score = sum(kept_run(row) for row in grid)
    claimed = line["outcome"]
    if outcome == "lost" and claimed in LOSS_CLAIMS:
        claimed = "lost"  # a solver's unknown or unwinnable: the moves agree
    if (claimed, line["score"]) != (outcome, score):
        return Verdict(
            False,
            None,
            f"claims {line['outcome']} {line['score']}, the moves give {outcome} {score}",
        )
    return VALID


def _check_grid_cards(grid, what):
    cells = [cell for row in grid for cell in row]
    if cells.count(GAP) != 4:
        raise BadLine(f"{what}: a grid has exactly 4 gaps (M2), this one {cells.count(GAP)}")
    cards = [c for c in cells if c != GAP]
    check_cards(cards, [c for c in DECK if rank(c) != 1], "not the 48 cards without aces (M1)")


def accepts(grid, r, c):
    """What card the gap at (r, c) takes: 'any 2', a card, or None (M3, M4)."""
    if c == 0:
        return "any 2"
    left = grid[r][c - 1]
    if left == GAP or rank(left) == 13:
        return None
    return "A23456789TJQK"[rank(left)] + suit(left)


def legal_moves(grid):
    moves = []
    for r in range(ROWS):
        for c in range(COLS):
            if grid[r][c] != GAP:
                continue
            wanted = accepts(grid, r, c)
            for rr in range(ROWS):
                for cc in range(COLS):
                    card = grid[rr][cc]
                    if card != GAP and (card == wanted or (wanted == "any 2" and rank(card) == 2)):
                        moves.append(f"{card}>r{r + 1}c{c + 1}")
    return moves


def _play(number, move, grid):
    card, arrow, target = move.partition(">")
    if not arrow or len(target) < 4 or target[0] != "r" or "c" not in target[1:]:
        raise IllegalMove(number, move, "not a move of the form 6H>r2c5")
    row_text, _, col_text = target[1:].partition("c")
    if not (row_text.isdigit() and col_text.isdigit()):
        raise IllegalMove(number, move, "not a move of the form 6H>r2c5")
    r, c = int(row_text) - 1, int(col_text) - 1
    if not (0 <= r < ROWS and 0 <= c < COLS):
        raise IllegalMove(number, move, f"there is no cell r{r + 1}c{c + 1}")
    where = [(rr, cc) for rr in range(ROWS) for cc in range(COLS) if grid[rr][cc] == card]
    if not where:
        raise IllegalMove(number, move, f"{card} is not in the grid")
    if grid[r][c] != GAP:
        raise IllegalMove(number, move, f"r{r + 1}c{c + 1} is not a gap (M2)")
    wanted = accepts(grid, r, c)
    if wanted is None:
        left = grid[r][c - 1]
        why = "a gap" if left == GAP else "a K"
        raise IllegalMove(number, move, f"nothing goes right of {why} (M4)")
    if wanted == "any 2":
        if rank(card) != 2:
            raise IllegalMove(number, move, "a gap in column 1 takes only a 2 (M3)")
    elif card != wanted:
        raise IllegalMove(number, move, f"that gap takes only {wanted} (M4)")
    (rr, cc) = where[0]
    grid[rr][cc], grid[r][c] = GAP, card


def kept_run(row):
    """Length of the run 2, 3, ... of one suit from column 1 (M5, M6)."""
    if row[0] == GAP or rank(row[0]) != 2:
        return 0
    length = 1
    while length < 12 and row[length] != GAP:
        card = row[length]
        if suit(card) != suit(row[0]) or rank(card) != length + 2:
            break
        length += 1
    return length


def is_won(grid):
    return all(kept_run(row) == 12 and row[12] == GAP for row in grid)


def _check_redeal(number, move, grid):
    new = parse_grid(move.removeprefix("redeal:"))
    try:
        _check_grid_cards(new, "redeal")
    except BadLine as bad:
        raise IllegalMove(number, "redeal", str(bad)) from None
    for r in range(ROWS):
        keep = kept_run(grid[r])
        if new[r][:keep] != grid[r][:keep]:
            raise IllegalMove(number, "redeal", f"row {r + 1} must keep its run of {keep} (M5)")
        if new[r][keep] != GAP:
            raise IllegalMove(
                number, "redeal", f"row {r + 1} needs its gap in column {keep + 1} (M5)"
            )
    return new
