"""The games the simulator plays, by command name."""

from engine import calc, jokers, montana
from engine.game import Column, Game, RuleOption

CALC = Game(
    name="calc",
    title="Calculation",
    module=calc,
    rules=(
        RuleOption(
            "wastes", 4, 1, calc.MAX_WASTES, "waste piles: 4 is the game, 3 the hard variant"
        ),
    ),
    columns=(
        Column("won", "bool", "all 52 cards reached the foundations"),
        Column("score", "int8", "cards on the foundations, 4..52"),
        Column("moves", "int16", "cards placed and moved"),
        Column("last_foundation_turn", "int8", "stock cards turned when a foundation last grew"),
        Column("max_waste_height", "int8", "height of the highest waste pile"),
        Column(
            "outcome",
            "int8",
            "won, lost, or unknown: a searching policy ran out of budget",
            labels=calc.OUTCOMES,
        ),
    ),
    max_log=lambda rules: calc.MAX_MOVES,
    move_log=calc.move_log,
)

JOKERS = Game(
    name="jokers",
    title="Jokers",
    module=jokers,
    rules=(
        RuleOption(
            "max_moves",
            jokers.DEFAULT_MAX_MOVES,
            1,
            1_000_000,
            "move cap: a deal still going after this many moves ends as capped (J9)",
        ),
    ),
    columns=(
        Column("outcome", "int8", "how the deal ended", labels=jokers.OUTCOMES),
        Column("won", "bool", "all 52 cards reached the foundations"),
        Column("score", "int8", "cards on the foundations, 4..52"),
        Column("moves", "int32", "cards moved"),
        Column("jokers_used", "int16", "jokers placed from the reserve (J7)"),
        Column("nodes", "int32", "positions a solver searched; 0 for heuristics"),
    ),
    max_log=lambda rules: rules["max_moves"],
    move_log=jokers.move_log,
)

MONTANA = Game(
    name="montana",
    title="Montana",
    module=montana,
    rules=(
        RuleOption("redeals", 2, 0, 10, "redeals allowed when no move is possible (M5)"),
        RuleOption(
            "max_moves",
            5000,
            1,
            1_000_000,
            "move cap, card moves across redeals: reaching it ends the deal as capped (M7)",
        ),
    ),
    columns=(
        Column("outcome", "int8", "how the deal ended", labels=montana.OUTCOMES),
        Column("won", "bool", "every row 2..K of one suit, its last cell a gap (M6)"),
        Column("score", "int8", "cards in kept runs (M5) summed over the rows, 0..48"),
        Column("redeals", "int8", "redeals used"),
        Column("moves", "int32", "card moves, across redeals"),
        Column("score_deal1", "int8", "score when the first deal was stuck (or ended)"),
        Column(
            "score_deal2", "int8", "score when redeal 1 was stuck (or ended); -1: never reached"
        ),
        Column(
            "score_deal3", "int8", "score when redeal 2 was stuck (or ended); -1: never reached"
        ),
    ),
    max_log=lambda rules: rules["max_moves"] + rules["redeals"],
    move_log=montana.move_log,
)

GAMES = {game.name: game for game in (CALC, JOKERS, MONTANA)}
