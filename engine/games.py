"""The games the simulator plays, by command name."""

from engine import calc
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
    ),
    max_log=lambda rules: calc.MAX_MOVES,
    move_log=calc.move_log,
)

GAMES = {game.name: game for game in (CALC,)}
