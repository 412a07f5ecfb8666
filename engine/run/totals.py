"""What a run reports: running sums over the rows written, and how the run ended."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim.engine.stats import wilson_interval


@dataclass
class Totals:
    """Running sums over the rows written, for the closing summary."""

    deals: int = 0
    wins: int = 0
    score_sum: int = 0
    outcomes: dict = field(default_factory=dict)

    def add(self, game, rows):
        """Add kernel rows (int32 [deals, columns]) of game."""
        names = [c.name for c in game.columns]
        outcomes = {}
        if "outcome" in names:
            labels = game.columns[names.index("outcome")].labels
            counts = np.bincount(rows[:, names.index("outcome")], minlength=len(labels))
            outcomes = dict(zip(labels, counts.tolist(), strict=True))
        self._add(
            rows.shape[0],
            rows[:, names.index("won")].sum(),
            rows[:, names.index("score")].sum(dtype=np.int64),
            outcomes,
        )

    def add_file(self, path):
        """Add the rows of a result file (those an interrupted run kept, for --resume)."""
        import pyarrow.parquet as pq

        columns = [c for c in ("won", "score", "outcome") if c in pq.read_schema(path).names]
        self.add_table(pq.read_table(path, columns=columns))

    def add_table(self, table):
        """Add the rows of a result table (rows carried over by --resume)."""
        outcomes = {}
        if "outcome" in table.column_names:
            values = table.column("outcome").to_pandas().value_counts()
            outcomes = {str(k): int(v) for k, v in values.items()}
        self._add(
            table.num_rows,
            table.column("won").to_numpy().sum(),
            table.column("score").to_numpy().sum(dtype=np.int64),
            outcomes,
        )

    def _add(self, deals, wins, score_sum, outcomes):
        self.deals += int(deals)
        self.wins += int(wins)
        self.score_sum += int(score_sum)
        for label, count in outcomes.items():
            self.outcomes[label] = self.outcomes.get(label, 0) + count

    @property
    def win_interval(self):
        return wilson_interval(self.wins, self.deals)


@dataclass
class RunResult:
    path: Path
    totals: Totals
    completed: bool
    wall_time: float
    deals_played: int  # in this invocation (not counting rows carried over by --resume)
    kept: int = 0  # rows in the file written
    signal: int | None = None  # the signal that stopped the run
    error: str | None = None  # why the run stopped early, when not by a signal
    notes: list = field(default_factory=list)  # things the user should know
