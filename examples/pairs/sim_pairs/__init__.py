"""Pairs: a toy patience game declared to sim through the `sim.games` entry point.

The declaration is light (no numba): `sim --help` lists the game without compiling it.
"""

from sim.engine import outcomes
from sim.engine.game import Column, Game, RuleOption

MAX_CELLS = 13  # sim_pairs.rules.MAX_CELLS: the state has room for 13 cells

PAIRS = Game(
    name="pairs",
    title="Pairs",
    module_name="sim_pairs.rules",
    rules=(RuleOption("cells", 12, 2, MAX_CELLS, "cells in the row (P2)"),),
    columns=(
        Column("outcome", "int8", "how the deal ended", labels=outcomes.LABELS),
        Column("won", "bool", "all 52 cards taken (P5)"),
        Column("score", "int8", "cards taken, 0..52"),
        Column("moves", "int8", "pairs taken"),
    ),
    max_log=lambda rules: 26,
    referee="sim_pairs.referee",
    draw="sim_pairs.referee:draw",
    policy_modules=("sim_pairs.policies",),
    default_policy="first",
    examples=("sim pairs --policy first -n 1e5", "sim show pairs --deal 7 --final"),
)
