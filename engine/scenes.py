"""Referee positions as scenes for the replay page (engine.analysis.replay_page): what
lies where on the table, for a browser to draw cards from.

A scene is {"rows": [[pile, ...], ...], "note": text}: rows of piles from the top of
the table, and a line under it. A pile is {"name", "cards", "show", "caption"}: its
cards bottom first, in the rule book's notation; `show` is "top" (only the top card
shows), "fan" (every card, each partly covering the one before) or "cell" (one card
or an empty cell); `caption` is a short word under it. Each game's Game record names
its scene function here (`scene`).
"""

from sim.engine.referee import montana as montana_referee

RANK_NAMES = "A23456789TJQK"


def pile(name, cards, show, caption=""):
    return {"name": name, "cards": list(cards), "show": show, "caption": caption}


def calc(position):
    foundations = []
    for k in range(4):
        wanted = position.needs(k)
        after = "done" if wanted is None else f"{RANK_NAMES[wanted - 1]} next"
        foundations.append(pile(f"F{k + 1}", [position.top_cards[k]], "top", after))
    left = len(position.stock)
    turned = pile("turned", position.stock[:1], "top", f"{max(left - 1, 0)} left in stock")
    wastes = [pile(f"W{w + 1}", cards, "fan") for w, cards in enumerate(position.piles)]
    return {"rows": [foundations + [turned], wastes], "note": "" if left else "stock empty"}


def montana(position):
    rows = []
    for r, row in enumerate(position.grid):
        cells = [[] if cell == ".." else [cell] for cell in row]
        rows.append([pile(f"r{r + 1}c{c + 1}", cell, "cell") for c, cell in enumerate(cells)])
    kept = sum(montana_referee.kept_run(row) for row in position.grid)
    return {"rows": rows, "note": f"redeals used {position.redeals} · cards in kept runs {kept}"}


def jokers(position):
    foundations = []
    for suit in "CDHS":
        top = position.foundations[suit]
        foundations.append(pile(f"f{suit}", [RANK_NAMES[top - 1] + suit], "top"))
    reserve = pile("reserve", ["JK"] * position.reserve, "top", f"{position.reserve} joker(s)")
    columns = [pile(f"c{c + 1}", cards, "fan") for c, cards in enumerate(position.columns)]
    return {"rows": [foundations + [reserve], columns], "note": ""}
