"""The games the simulator plays, by command name: one Game record per game.

Declarations only: a game's compiled rules module is loaded when something first plays
or draws it, so help pages and listings cost no compile. Everything else (the command
line, the Parquet schema, the runner, show, replay, compare and the tests common to all
games) reads a game from here, through registered_games() or get_game()."""

import functools
from importlib import metadata

from sim.engine import outcomes
from sim.engine.game import Column, Game, RuleOption

CALC_MAX_WASTES = 8  # engine.calc.MAX_WASTES: the state has room for 8 waste piles
JOKERS_DEFAULT_MAX_MOVES = 2000  # engine.jokers.DEFAULT_MAX_MOVES

CALC = Game(
    name="calc",
    title="Calculation",
    module_name="sim.engine.calc",
    compile_seconds=7,  # measured on two cores
    rules=(
        RuleOption(
            "wastes", 4, 1, CALC_MAX_WASTES, "waste piles: 4 is the game, 3 the hard variant"
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
            labels=outcomes.CALC,
        ),
    ),
    max_log=lambda rules: 96,  # engine.calc.MAX_MOVES: 48 placements, 48 moves up
    referee="sim.engine.referee.calc",
    draw="sim.engine.drawings:calc",
    layout_text="sim.engine.layout_text:calc",
    scene="sim.engine.scenes:calc",
    pysol="sim.engine.pysol_deals:calculation",
    row_checks="sim.engine.row_checks:calc",
    policy_modules=("sim.policies.calc",),
    examples=(
        "sim calc --policy greedy -n 1e6",
        "sim calc -p mc -n 1e4 --wastes 3 --workers 2",
        "sim calc -p planner -n 1e5 --seed 7 --log-moves moves.jsonl",
    ),
)

JOKERS = Game(
    name="jokers",
    title="Jokers",
    module_name="sim.engine.jokers",
    compile_seconds=8,  # measured on two cores
    rules=(
        RuleOption(
            "max_moves",
            JOKERS_DEFAULT_MAX_MOVES,
            1,
            1_000_000,
            "move cap: a deal still going after this many moves ends as capped (J9)",
        ),
    ),
    columns=(
        Column("outcome", "int8", "how the deal ended", labels=outcomes.JOKERS),
        Column("won", "bool", "all 52 cards reached the foundations"),
        Column("score", "int8", "cards on the foundations, 4..52"),
        Column("moves", "int32", "cards moved"),
        Column("jokers_used", "int16", "jokers placed from the reserve (J7)"),
        Column("nodes", "int32", "positions a solver searched; 0 for heuristics"),
    ),
    max_log=lambda rules: rules["max_moves"],
    referee="sim.engine.referee.jokers",
    draw="sim.engine.drawings:jokers",
    layout_text="sim.engine.layout_text:jokers",
    scene="sim.engine.scenes:jokers",
    row_checks="sim.engine.row_checks:jokers",
    policy_modules=("sim.policies.jokers",),
    examples=(
        "sim jokers --policy solver -n 1e5 --seed 7",
        "sim jokers -p greedy -n 1e6 --out results/jokers-greedy.parquet",
    ),
)

MONTANA = Game(
    name="montana",
    title="Montana",
    module_name="sim.engine.montana",
    compile_seconds=7,  # measured on two cores
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
        Column("outcome", "int8", "how the deal ended", labels=outcomes.MONTANA),
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
    referee="sim.engine.referee.montana",
    draw="sim.engine.drawings:montana",
    layout_text="sim.engine.layout_text:montana",
    scene="sim.engine.scenes:montana",
    pysol="sim.engine.pysol_deals:montana",
    row_checks="sim.engine.row_checks:montana",
    policy_modules=("sim.policies.montana",),
    examples=(
        "sim montana --policy greedy -n 1e6",
        "sim montana -p search --param nodes=200000 -n 1e4 --redeals 0",
    ),
)

BUILTIN = {game.name: game for game in (CALC, JOKERS, MONTANA)}
GAMES = BUILTIN  # the built-in games; registered_games() adds the plugged-in ones

ENTRY_POINT_GROUP = "sim.games"


class GameError(ValueError):
    """A game that cannot be found, or a plug-in that does not declare one."""


BROKEN_PLUGINS = []  # one line per game plug-in that could not be loaded


@functools.cache
def registered_games():
    """Every game by name: the built-ins, then those that installed packages declare in
    the `sim.games` entry points (each entry a Game; its module loads only on play).

    A plug-in that fails to load is left out and described in BROKEN_PLUGINS, so that
    one broken package cannot take the built-in games down with it."""
    games = dict(BUILTIN)
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            games |= _plugged_in(entry, games)
        except GameError as error:
            BROKEN_PLUGINS.append(str(error))
    return games


def _plugged_in(entry, games):
    where = f"game plug-in {entry.name!r} ({entry.value})"
    try:
        game = entry.load()
    except (Exception, SystemExit) as error:
        raise GameError(f"cannot load {where}: {type(error).__name__}: {error}") from None
    if not isinstance(game, Game):
        raise GameError(f"{where} is not a sim.engine.game.Game")
    if game.name in games:
        raise GameError(f"{where} takes the name {game.name!r}, already in use")
    return {game.name: game}


def get_game(name):
    """The game registered under `name`."""
    games = registered_games()
    if name not in games:
        raise GameError(f"unknown game {name!r} (known: {', '.join(sorted(games))})")
    return games[name]
