"""Referee positions drawn for a terminal: rank and suit symbol, red suits in red.

Each game's Game record names its drawing here (`draw`); `sim show` prints it."""

import click

from sim.engine.referee import montana as montana_referee

SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def card(text):
    if text == "JK":
        return click.style("JK", bold=True)
    shown = text[0] + SYMBOLS[text[1]]
    return click.style(shown, fg="red") if text[1] in "DH" else shown


def cards(texts):
    return " ".join(card(t) for t in texts) or "—"


# --- Calculation --------------------------------------------------------------------


def calc(position):
    foundations = []
    for k in range(4):
        wanted = position.needs(k)
        after = "done" if wanted is None else f"{'A23456789TJQK'[wanted - 1]} next"
        foundations.append(f"F{k + 1} {card(position.top_cards[k])} ({after})")
    lines = ["  " + "   ".join(foundations)]
    for w, pile in enumerate(position.piles):
        lines.append(f"  W{w + 1}  {cards(pile)}")
    if position.stock:
        lines.append(
            f"  turned {card(position.stock[0])} · {len(position.stock) - 1} left in stock"
        )
    else:
        lines.append("  stock empty")
    return "\n".join(lines)


# --- Montana ------------------------------------------------------------------------


def montana(position):
    header = "     " + "".join(f"{c:>4}" for c in range(1, 14))
    lines = [header]
    for r, row in enumerate(position.grid):
        cells = "".join(" " + (" ··" if cell == ".." else " " + card(cell)) for cell in row)
        lines.append(f"  r{r + 1} {cells}")
    kept = sum(montana_referee.kept_run(row) for row in position.grid)
    lines.append(f"  redeals used {position.redeals} · cards in kept runs {kept}")
    return "\n".join(lines)


# --- Jokers -------------------------------------------------------------------------


def jokers(position):
    tops = []
    for s in "CDHS":
        r = position.foundations[s]
        tops.append(card("A23456789TJQK"[r - 1] + s))
    lines = ["  foundations " + " ".join(tops) + f"   reserve: {position.reserve} joker(s)"]
    lines.append("  " + "".join(f"  c{c + 1:<2}" for c in range(10)))
    height = max((len(c) for c in position.columns), default=0)
    for depth in range(height):
        cells = []
        for column in position.columns:
            cells.append(f"  {card(column[depth])} " if depth < len(column) else "     ")
        lines.append("  " + "".join(cells).rstrip())
    return "\n".join(lines)
