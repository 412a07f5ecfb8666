"""What the batch runner, the writer and the command line need to know of a game.

A game module (engine.calc, engine.montana, engine.jokers) holds the compiled rules:
STATE_SIZE, POLICY_SIG, play_nb, play_chunk_nb and write_result_nb with the same
signatures in every game. A Game ties it to its rule options, its result columns and
its move-log notation, so the rest of the project treats every game alike.
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


@dataclass(frozen=True)
class Column:
    """A per-deal result column: its Arrow type, and the labels of a coded column."""

    name: str
    type: str  # "bool", "int8", "int16", "int32"
    help: str = ""
    labels: tuple = ()  # a coded column: kernel writes the index of the label


@dataclass(frozen=True)
class Game:
    name: str
    title: str
    module_name: str  # its compiled rules, imported on first use
    rules: tuple
    columns: tuple
    max_log: object  # rules dict -> most actions a deal can log
    extra_summary: tuple = field(default=())  # (label, column) pairs for the summary

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(self.module_name)

    def move_log(self, seed, deal, rules, actions, **start):
        """The move-log line (a dict) of one deal, from its actions."""
        return self.module.move_log(seed, deal, rules, actions, **start)

    def rules_vector(self, rules):
        import numpy as np  # here, not at the top: help pages need no numpy

        return np.array([rules[option.name] for option in self.rules], np.int64)

    def default_rules(self):
        return {option.name: option.default for option in self.rules}

    def nondefault_rules(self, rules):
        return {o.name: rules[o.name] for o in self.rules if rules[o.name] != o.default}
