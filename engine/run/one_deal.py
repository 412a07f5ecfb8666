"""Play one deal, seeded or laid out by the user, and return its move-log line.

The deal is played as a run plays it (engine.run.job): the same kernel, and a policy that
is not built in is guarded the same way, so what `sim show` draws is what a run records.
"""

import numpy as np

from sim.engine.kernel import OUTCOME_UNKNOWN
from sim.engine.run.job import (
    LOG_END,
    PolicyFault,
    logged_actions,
    make_job,
    play_from_state,
    play_job,
    settled,
)
from sim.engine.run.move_log import line_header, outcome_label


def play_one(game, policy, params, rules, seed, deal, layout=None):
    """The move-log object (RULES.md format) of one deal played by policy.

    Without a layout this is exactly the deal and play of row (seed, deal) of a result
    file: the same kernel plays it. With a layout (move-log form), play starts there and
    the policy draws from the stream of (seed, deal).
    """
    job = make_job(game, policy, seed, rules, params, log=True)
    header = line_header(game, seed, deal, policy, params, rules)
    if layout is None:
        return header | _play_seeded(job, rules, deal)
    return header | _play_laid_out(job, rules, deal, layout)


def _play_seeded(job, rules, deal):
    result = play_job(job, deal, 1)
    _raise_fault(job, deal, result.fault)
    line = job.game.move_log(job.seed, deal, rules, logged_actions(result.logs[0]))
    return line | outcome_label(job.game, result.rows[0])


def _play_laid_out(job, rules, deal, layout):
    module = job.module
    start = module.state_from_layout(layout, rules)
    state = start.copy()
    log = np.full(job.log_width, LOG_END, np.int16)
    _raise_fault(job, deal, play_from_state(job, deal, state, log))
    row = _row(job.game, state)
    if job.policy.settle is not None and row[_outcome_slot(job.game)] == OUTCOME_UNKNOWN:
        settled(job, start, row, log)  # as a run settles it: the play shown is the play logged
    line = module.move_log(job.seed, deal, rules, logged_actions(log), start=start, layout=layout)
    return line | outcome_label(job.game, row)


def _raise_fault(job, deal, fault):
    # A ValueError, as for a bad layout: the command reports either in one line.
    if fault is not None:
        raise ValueError(str(PolicyFault(job.policy.name, job.seed, deal, fault)))


def _row(game, state):
    """The result row of a deal played to `state`: a solver's `unknown` is not in its moves."""
    row = np.zeros(len(game.columns), np.int32)
    game.module.write_result_nb(state, row)
    return row


def _outcome_slot(game):
    return game.column_slots("outcome")[0]
