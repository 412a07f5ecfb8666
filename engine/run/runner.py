"""The batch runner: a run's deals through workers, into a result file that never lies.

Deal i depends on (seed, i) alone, so chunking and the number of workers change speed,
never rows. What survives what:

- Ctrl-C, SIGTERM or SIGHUP (a scheduler's stop): workers stop at once; every deal
  finished in order is written to a valid file marked incomplete; exit 128 + signal
  (engine.run.stop_signals).
- A worker killed from outside: its chunks are played again by a fresh worker
  (engine.run.pool).
- A policy that raises, exits, loops or breaks its contract: the run stops with one
  line naming the policy, seed and deal; the deals before it are kept.
- A policy that forks its worker, or whose worker's pipe carries what the worker did not
  send, or a row no play of the game can give: the same, and only rows the worker
  finished itself are kept (engine.run.pool, engine.row_checks); nothing the policy
  started outlives the run.
- The parent killed outright: finished rows are in the run's journal within moments
  (engine.run.journal); the next run of the same output salvages them
  (engine.run.salvage).
- A second run of the same output while the first is alive: refused (engine.run.files).

The output is written under a temporary name and moved into place whole, after the
move log, so the two always describe the same deals (engine.run.finish).

A run, in order: the request is checked (engine.run.request), its outputs claimed
(engine.run.outputs), a killed run's deals salvaged, the rows --resume keeps checked
(engine.run.resume), then the deals played and the outputs written
(engine.run.play_loop).
"""

import contextlib

from sim.engine.run.outputs import checked_outputs, lock_outputs, remove_stale_temporaries
from sim.engine.run.play_loop import play_run
from sim.engine.run.request import RunError, RunRequest, check_request, default_filename
from sim.engine.run.resume import check_move_log_for_resume, rows_kept_by_resume
from sim.engine.run.salvage import salvage
from sim.engine.run.stop_signals import StopSignals
from sim.engine.run.totals import RunResult, Totals

__all__ = ["RunError", "RunRequest", "default_filename", "run"]


def run(request, progress=None, notice=None, stop=None):
    """Play the requested deals and write the result file; return a RunResult.

    `progress(deals)` is called once play is about to start (with any rows carried
    over by --resume, possibly 0) and then as deals finish, in order. `notice(line)`
    is called with one line before a wait the user should know of: a first compile.
    `stop`: the caller's StopSignals, entered, to be polled (None: the run's own).
    """
    with contextlib.ExitStack() as held:
        if stop is None:
            stop = held.enter_context(StopSignals())
        return _run(request, progress, notice, stop)


def _run(request, progress, notice, stop):
    # A stop is only noted, never raised: what is written is never cut short.
    check_request(request)
    out, log = checked_outputs(request)
    with contextlib.ExitStack() as locks:
        lock_outputs(locks, out, log)
        remove_stale_temporaries(out, log)
        notes, complete = salvage(request, out, locks)
        if complete:
            return recovered_whole(out, notes)
        before = rows_kept_by_resume(request, out)
        check_move_log_for_resume(request, log, before, out)
        result = play_run(request, out, log, before, progress, stop, notice)
        result.notes = notes + result.notes
        return result


def recovered_whole(out, notes):
    """The RunResult of a file that salvage made complete: nothing left to play."""
    from sim.engine.run import results

    totals = Totals()
    totals.add_file(out)
    meta = results.read_meta(out)
    wall = float(meta.get("wall_time") or 0.0)
    return RunResult(out, totals, True, wall, totals.deals, totals.deals, notes=notes)
