"""What the batch runner, the writer and the command line need to know of a game.

A game module (engine.calc, engine.montana, engine.jokers) holds the compiled rules:
STATE_SIZE, POLICY_SIG, play_nb, play_chunk_nb and write_result_nb with the same
signatures in every game. A Game ties it to its rule options, its result columns and
its move-log notation, so the rest of the project treats every game alike.
"""

from dataclasses import dataclass, field
from types import ModuleType

import numpy as np


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
    module: ModuleType
    rules: tuple
    columns: tuple
    max_log: object  # rules dict -> most actions a deal can log
    move_log: object  # (seed, deal, rules dict, actions) -> dict of the move-log line
    extra_summary: tuple = field(default=())  # (label, column) pairs for the summary

    def rules_vector(self, rules):
        return np.array([rules[option.name] for option in self.rules], np.int64)

    def default_rules(self):
        return {option.name: option.default for option in self.rules}

    def nondefault_rules(self, rules):
        return {o.name: rules[o.name] for o in self.rules if rules[o.name] != o.default}
