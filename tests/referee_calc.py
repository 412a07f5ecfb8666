"""An independent referee of Calculation move logs, written from RULES.md alone.

It shares no code with the engine: it reads the notation, keeps its own piles, and
says what is wrong with a deal's log, or None.
"""

RANKS = "A23456789TJQK"


def rank(card):
    return RANKS.index(card[0]) + 1


def check_calc_log(line):
    wastes = line.get("wastes", 4)
    layout = line["layout"]
    bases, stock = layout["bases"], list(layout["stock"])
    if sorted(bases + stock) != sorted(r + s for r in RANKS for s in "CDHS"):
        return "layout is not the 52 cards once each"
    if [rank(b) for b in bases] != [1, 2, 3, 4]:
        return "bases are not A 2 3 4"
    tops = [1, 2, 3, 4]  # rank on top of each foundation
    counts = [1, 1, 1, 1]
    piles = [[] for _ in range(wastes)]

    def needs(k):
        return None if counts[k] == 13 else (tops[k] + k) % 13 + 1

    def to_foundation(card, k):
        if needs(k) != rank(card):
            return f"{card} does not fit F{k + 1}"
        tops[k], counts[k] = rank(card), counts[k] + 1
        return None

    for number, move in enumerate(line["moves"], 1):
        source, _, target = move.partition(">")
        if source == "s":
            if not stock:
                return f"move {number} {move}: the stock is empty"
            card = stock.pop(0)
        elif source[0] == "w" and 1 <= int(source[1:]) <= wastes:
            pile = piles[int(source[1:]) - 1]
            if not pile:
                return f"move {number} {move}: waste pile is empty"
            card = pile[-1]
        else:
            return f"move {number} {move}: no such source"
        if target[0] == "f" and 1 <= int(target[1:]) <= 4:
            error = to_foundation(card, int(target[1:]) - 1)
            if error:
                return f"move {number} {move}: {error}"
            if source != "s":
                pile.pop()
        elif target[0] == "w" and source == "s" and 1 <= int(target[1:]) <= wastes:
            piles[int(target[1:]) - 1].append(card)
        else:
            return f"move {number} {move}: illegal target"
    if stock:
        return "the stock was not played out"
    for k in range(4):
        if any(p and needs(k) == rank(p[-1]) for p in piles):
            return "the game ended while a waste top could still go to a foundation"
    score = sum(counts)
    outcome = "won" if score == 52 else "lost"
    if (line["outcome"], line["score"]) != (outcome, score):
        return f"claimed {line['outcome']} {line['score']}, replay gives {outcome} {score}"
    return None
