"""Move logs (--log-moves): one JSON line per deal, in the format of RULES.md."""

import json

from sim.engine.run.job import LOG_END, ChunkResult


def outcome_label(game, row):
    """{"outcome": label} from a result row where the game records one, else {}.

    A solver's `unknown` (or a resignation) shows in its row, not in its moves."""
    names = [c.name for c in game.columns]
    if "outcome" not in names:
        return {}
    column = names.index("outcome")
    return {"outcome": game.columns[column].labels[row[column]]}


class MoveLog:
    """The --log-moves lines of a run's own deals, appended to the log journal."""

    def __init__(self, request, path):
        self.request = request
        self.file = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close)

    def write(self, result: ChunkResult):
        request, game = self.request, self.request.game
        header = {"game": game.name, "seed": request.seed}
        rules = game.nondefault_rules(request.rules)
        for i, actions in enumerate(result.logs):
            deal = result.start + i
            played = [int(a) for a in actions if a != LOG_END]
            line = header | {"deal": deal, "policy": request.policy.name} | rules
            line |= game.move_log(request.seed, deal, request.rules, played)
            line |= outcome_label(game, result.rows[i])
            self.file.write(json.dumps(line) + "\n")
        self.file.flush()  # before the rows reach their journal: the log is never shorter

    def close(self):
        self.file.close()
