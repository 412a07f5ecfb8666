"""The play loop: each chunk of deals, as it finishes in deal order, into the run's
journals, its totals and the progress callback; at the end, the journals into the
outputs (engine.run.finish). Stop signals and faults end the loop, never a write.

No row is kept unchecked: a row that no play of the game can give (engine.row_checks)
stops the run at its deal, as a policy fault does."""

import dataclasses
import signal
import time
from datetime import UTC, datetime

from sim.engine.run import journal
from sim.engine.run.compile_notice import announced_compile
from sim.engine.run.executors import play_chunks
from sim.engine.run.files import describe_os_error
from sim.engine.run.finish import finish
from sim.engine.run.job import PolicyFault, job_spec, load_kernel
from sim.engine.run.move_log import MoveLog
from sim.engine.run.pool import WorkerFailure
from sim.engine.run.request import RunError
from sim.engine.run.stop_signals import beside
from sim.engine.run.totals import RunResult, Totals
from sim.policies.registry import PolicyError


def play_run(request, out, log, before, progress, stop, notice=None):
    """Play the deals after the `before` that --resume keeps, and write the outputs,
    polling `stop` (StopSignals) between writes.

    Returns the RunResult; raises RunError when the journals or the outputs cannot be
    written, or when play failed before any deal finished (the outputs are then left as
    they were)."""
    first = request.start + before
    paths = journal.JournalPaths.beside(out, log)
    started = datetime.now(UTC)
    journals = _Journals(request, paths, first)
    totals = Totals()
    if before:
        totals.add_file(out)
    notes = []
    error, clock = _play_into(request, journals, first, totals, progress, stop, notice, notes)
    wall = time.perf_counter() - clock  # play only: a first compile is not play
    if journals.deals == 0 and before == 0 and (error or stop.signum):
        paths.remove()  # nothing played: the output stays as it was
        if error:
            raise RunError(error)
        return RunResult(out, totals, False, wall, 0, 0, stop.signum, notes=notes)
    meta = request.description() | {
        "started_at": started.isoformat(timespec="seconds"),
        "executor": request.executor(),
    }
    kept = _finish(out, log, request.game, meta, before, paths, wall)
    completed = kept == request.n
    return RunResult(out, totals, completed, wall, kept - before, kept, stop.signum, error, notes)


class _Journals:
    """The open journals of a run: its rows, and its move-log lines when it logs moves."""

    def __init__(self, request, paths, first):
        try:
            columns = len(request.game.columns)
            self.rows = journal.Journal(paths.rows, request.description(), first, columns)
            self.moves = MoveLog(request, paths.log) if paths.log else None
        except OSError as error:
            raise RunError(describe_os_error(error)) from None

    @property
    def deals(self):
        return self.rows.rows

    def write(self, result):
        if self.moves:
            self.moves.write(result)  # first: a move log is never shorter than the rows
        self.rows.write(result.rows)

    def close(self):
        self.rows.close()
        if self.moves:
            self.moves.close()


def _play_into(request, journals, first, totals, progress, stop, notice, notes):
    """Play until every deal is done, a stop is asked for or play fails, writing each
    finished chunk; returns why play failed (or None) and when play began, the kernel
    loaded. The journals are closed after; what the user should know goes to notes."""
    error, play_began = None, time.perf_counter()
    try:
        spec = job_spec(request)
        if not beside(lambda: _load(request, spec, notice), stop) or stop.requested():
            return error, play_began  # a compile can take a minute: a stop does not wait
        play_began = time.perf_counter()
        stop.immediate = request.scheduler is not None  # a Dask client cannot be polled
        if progress:
            progress(totals.deals)
        for result in play_chunks(request, spec, first, stop, notes.append):
            _record(request, journals, totals, progress, _possible_rows(request, result))
    except KeyboardInterrupt:
        stop.signum = stop.signum or signal.SIGINT
    except (PolicyFault, PolicyError, WorkerFailure, OSError, _cluster_error()) as failure:
        error = describe_os_error(failure) if isinstance(failure, OSError) else str(failure)
    finally:
        stop.immediate = False  # from here on a signal is noted, never cuts a write
        try:
            journals.close()
        except OSError as failure:
            error = error or describe_os_error(failure)
    return error, play_began


def _load(request, spec, notice):
    with announced_compile(request.game, request.policy, notice, timed=True):
        load_kernel(spec)


def _possible_rows(request, result):
    """The result, cut at its first row that no play of the game can give, with why."""
    found = request.game.first_impossible_row(result.rows, request.rules)
    if found is None:
        return result
    index, why = found
    reason = f"gave a result row that no play of {request.game.title} gives ({why})"
    rows, logs = result.rows[:index], result.logs[:index]
    return dataclasses.replace(result, rows=rows, logs=logs, fault=reason)


def _record(request, journals, totals, progress, result):
    """Write a finished chunk; raise the policy's fault that ended it, if one did."""
    if result.done:
        journals.write(result)
        totals.add(request.game, result.rows)
        if progress:
            progress(result.done)
    if result.fault is not None:
        raise PolicyFault(request.policy.name, request.seed, result.fault_deal, result.fault)


def _cluster_error():
    # Imported only once something failed: a local run never loads the cluster code.
    from sim.engine.run.cluster import ClusterError

    return ClusterError


def _finish(out, log, game, meta, before, paths, wall):
    try:
        return finish(out, log, game, meta, before, paths, wall)
    except OSError as failure:
        reason = describe_os_error(failure)
        if paths.rows.exists():
            reason += (
                f"; the finished deals are kept in {paths.rows}: run the same command "
                "with --resume to recover them"
            )
        raise RunError(reason) from None
