"""Move logs (--log-moves): one JSON line per deal, in the format of RULES.md."""

import json

from sim.engine.run.job import ChunkResult, logged_actions


def line_header(game, seed, deal, policy, params, rules):
    """The keys of a move-log line before its layout: what played the deal, and under
    which rules (those that differ from the standard game). A policy's parameters are
    all written, defaults too: a default may change, a logged play may not."""
    header = {"game": game.name, "seed": seed, "deal": deal, "policy": policy.name}
    if policy.params:
        header["params"] = {p.name: params[p.name] for p in policy.params}
    return header | game.nondefault_rules(rules)


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
        run, game = self.request, self.request.game
        header = line_header(game, run.seed, None, run.policy, run.params, run.rules)
        for i, actions in enumerate(result.logs):
            deal = result.start + i
            played = logged_actions(actions)
            line = header | {"deal": deal}  # in its place: the key is in the header already
            dealt = {} if run.source is None else {"start": run.source.state(deal, run.rules)}
            line |= game.move_log(run.seed, deal, run.rules, played, **dealt)
            line |= outcome_label(game, result.rows[i])
            self.file.write(json.dumps(line) + "\n")
        self.file.flush()  # before the rows reach their journal: the log is never shorter

    def close(self):
        self.file.close()
