"""The game contract: everything the project knows of a game, declared in one record.

A Game names three modules, loaded only when something plays, checks or draws a deal,
so that declaring a game (and listing it in help pages) costs no compile:

- `module_name`, the compiled rules (engine/calc.py is the model), which provide:

        STATE_SIZE, POLICY_SCRATCH     the int16 state array and where the policy's own
                                       block starts (engine/kernel.py)
        POLICY_SIG, OUTCOMES           the policy signature; outcome labels by code
        start_nb(seed, deal, rules, state)                      deal (seed, deal)
        play_out_nb(seed, deal, rules, state, choose, params, stream, log) -> fault code
        write_result_nb(state, row)                             the row, in `columns` order
        play_deals_nb(choose, seed, start, rules, params, rows, logs, status)
        play_chunk_nb(choose, seed, start, rules, params, rows, logs)
        move_log(seed, deal, rules, actions, start=None, layout=None) -> dict
        state_from_layout(layout, rules) -> state               for `sim show --layout`

- `referee`, an independent checker written from the rule book alone: check(line)
  returns a Verdict (engine/referee/__init__.py) and position(line) the dealt position
  of a move-log line, whose play(number, move) applies one move or raises IllegalMove;
- `draw`, "module:function" drawing such a position as text for `sim show`;
- optionally `layout_text`, "module:function" reading a layout typed in the game's
  text notation, and `pysol`, "module:function" laying out PySolFC's shuffled deck.
- `row_checks`, optionally, "module:function" giving the invariants of its result rows
  that no play can break (engine/row_checks.py): a row that breaks one is never kept.

The built-in games are declared in engine/games.py; a package adds one by naming a Game
in the `sim.games` entry-point group (docs/extending/game.md, "Adding a game").
"""

import importlib
from dataclasses import dataclass, field
from types import ModuleType

DEFAULT_DEAL_TIMEOUT = 600.0  # seconds one deal may take before its run is stopped


@dataclass(frozen=True)
class RuleOption:
    """An integer rule option (`--wastes`, `--redeals`, `--max-moves`)."""

    name: str
    default: int
    low: int
    high: int
    help: str

    def allows(self, value):
        """Whether value, as a move-log line's JSON gives it, is a setting of this rule:
        an integer in low..high (JSON's true is not 1, nor 4.0 the integer 4)."""
        integer = isinstance(value, int) and not isinstance(value, bool)
        return integer and self.low <= value <= self.high


@dataclass(frozen=True)
class Column:
    """A per-deal result column: its Arrow type, and the labels of a coded column."""

    name: str
    type: str  # "bool", "int8", "int16", "int32"
    help: str = ""
    labels: tuple = ()  # a coded column: kernel writes the index of the label


@dataclass(frozen=True)
class Game:
    """A game, declared in one record: its name and title, its rule options (RuleOption,
    each a command option), its result columns in order (Column), and the modules loaded
    only when used: `module_name` (the compiled rules), `referee` (the move-log checker),
    `draw` (the drawing for `sim show`) and `policy_modules` (its policies, declared
    light). What the rules module provides is listed at the top of this module."""

    name: str
    title: str
    module_name: str  # its compiled rules, imported on first use
    rules: tuple
    columns: tuple
    max_log: object  # rules dict -> most actions a deal can log
    referee: str  # module: check(line) -> Verdict, position(line) -> position
    draw: str  # "module:function": position -> text
    policy_modules: tuple = ()  # light modules (no numba) declaring its Policy objects
    examples: tuple = ()  # two or three real commands, closing its help page
    default_policy: str = "greedy"  # what `sim GAME` plays without --policy
    extra_summary: tuple = field(default=())  # (label, column) pairs for the summary
    compile_seconds: float | None = None  # the rules' first compile, roughly, if known
    # "module:function": text in the game's layout notation (RULES.md) -> a layout in
    # move-log form, for a deal typed in; None: layouts come as JSON only
    layout_text: str | None = None
    # "module:function": PySolFC's shuffled deck -> the layout PySolFC deals from it
    # (engine.pysol); None: sim does not deal this game as PySolFC does
    pysol: str | None = None
    # "module:function": a referee position -> the scene the replay page draws
    # (engine.scenes); None: the page shows the text drawing
    scene: str | None = None
    row_checks: str | None = None  # "module:function": its own invariants of a result row

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(self.module_name)

    @property
    def referee_module(self) -> ModuleType:
        return importlib.import_module(self.referee)

    def drawing(self, position):
        """The text of a referee position, as `sim show` prints it."""
        module_name, _, function = self.draw.partition(":")
        return getattr(importlib.import_module(module_name), function)(position)

    @property
    def column_names(self):
        return tuple(column.name for column in self.columns)

    def column_slots(self, *names):
        """The index in a result row of each named column, for write_result_nb."""
        order = [column.name for column in self.columns]
        missing = [name for name in names if name not in order]
        if missing:
            raise KeyError(f"{self.name} declares no result column {missing[0]!r}")
        return tuple(order.index(name) for name in names)

    @property
    def rule_names(self):
        return tuple(option.name for option in self.rules)

    def move_log(self, seed, deal, rules, actions, **start):
        """The move-log line (a dict) of one deal, from its actions."""
        return self.module.move_log(seed, deal, rules, actions, **start)

    def rules_vector(self, rules):
        import numpy as np  # here, not at the top: help pages need no numpy

        return np.array([rules[option.name] for option in self.rules], np.int64)

    def default_rules(self):
        return {option.name: option.default for option in self.rules}

    def first_impossible_row(self, rows, rules):
        """(index, why) of the first kernel row no play of this game can give, or None."""
        from sim.engine.row_checks import first_impossible_row

        return first_impossible_row(self, rows, rules)

    def nondefault_rules(self, rules):
        return {o.name: rules[o.name] for o in self.rules if rules[o.name] != o.default}
