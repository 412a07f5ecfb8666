"""The batch runner: a run's deals through workers, into a result file that never lies.

Deal i depends on (seed, i) alone, so chunking and the number of workers change speed,
never rows. What survives what:

- Ctrl-C, SIGTERM or SIGHUP (a scheduler's stop): workers stop at once; every deal
  finished in order is written to a valid file marked incomplete; exit 128 + signal.
- A worker killed from outside: its chunks are played again by a fresh worker.
- A policy that raises, exits, loops or breaks its contract: the run stops with one
  line naming the policy, seed and deal; the deals before it are kept.
- The parent killed outright: finished rows are in the run's journal within moments
  (engine.journal); the next run of the same output salvages them.
- A second run of the same output while the first is alive: refused (engine.files).

The output is written under a temporary name and moved into place whole, after the
move log, so the two always describe the same deals.
"""

import contextlib
import json
import os
import re
import signal
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from sim.engine.game import DEFAULT_DEAL_TIMEOUT
from sim.engine.run import journal, results
from sim.engine.run.files import FileLock, OutputError, check_output, same_file, temporary_path
from sim.engine.run.job import LOG_END, ChunkResult, PolicyFault, job_spec, load_kernel, play_chunk
from sim.engine.run.pool import ChunkPlanner, WorkerFailure
from sim.engine.stats import wilson_interval

PROBE_DEALS = 256  # deals the parent plays to size the chunks of a Dask run
MAX_DEAL = 2**63 - 1


class RunError(ValueError):
    """A run that cannot start: bad output path, nothing to resume, mismatched resume."""


@dataclass
class RunRequest:
    game: object
    policy: object
    policy_spec: str
    params: dict
    rules: dict
    seed: int
    start: int
    n: int
    workers: int
    out: Path
    overwrite: bool = False
    resume: bool = False
    log_moves: Path | None = None
    scheduler: str | None = None  # a Dask scheduler address, or "local"
    deal_timeout: float = DEFAULT_DEAL_TIMEOUT

    def description(self):
        return {
            "game": self.game.name,
            "rules": self.rules,
            "policy": self.policy.name,
            "policy_spec": self.policy_spec,
            "params": self.params,
            "seed": self.seed,
            "start": self.start,
            "n": self.n,
            "log_moves": str(Path(self.log_moves).absolute()) if self.log_moves else None,
        }


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


def default_filename(game, policy, params, rules, seed, start, n):
    parts = [game.name, policy.name]
    parts += [f"{k}{v:g}" for k, v in params.items() if _differs(policy, k, v)]
    parts += [f"{k}{v}" for k, v in rules.items()]
    parts.append(f"seed{seed}")
    if start:
        parts.append(f"start{start}")
    parts.append(f"n{n}")
    return "-".join(parts).replace("_", "") + ".parquet"


def _differs(policy, name, value):
    return next(p for p in policy.params if p.name == name).default != value


def run(request, progress=None):
    """Play the requested deals and write the result file; return a RunResult.

    `progress(deals)` is called once play is about to start (with any rows carried
    over by --resume, possibly 0) and then as deals finish, in order.
    """
    if request.start + request.n - 1 > MAX_DEAL:
        raise RunError(f"deals {request.start} .. {request.start + request.n - 1} pass 2**63 - 1")
    if request.scheduler:
        from sim.engine.run.cluster import ClusterError, check_reachable

        try:
            check_reachable(request.scheduler)
        except ClusterError as error:
            raise RunError(str(error)) from None
    out, log = _checked_paths(request)
    with contextlib.ExitStack() as locks:
        try:
            locks.enter_context(FileLock(out))
            if log is not None:
                locks.enter_context(FileLock(log, "--log-moves"))
        except OutputError as error:
            raise RunError(str(error)) from None
        _remove_stale_temporaries(out, log)
        try:
            notes = _salvage(request, out, locks)
        except OSError as error:
            temporary_path(out).unlink(missing_ok=True)
            raise RunError(
                f"{_os_reason(error)}, recovering the finished deals of a killed run of {out}"
            ) from None
        before = _rows_before(request, out)
        _check_log_for_resume(request, log, before)
        result = _run_locked(request, out, log, before, progress)
        result.notes = notes + result.notes
        return result


def _checked_paths(request):
    try:
        out = check_output(request.out, True, "--out")
        if request.out.exists() and not (request.overwrite or request.resume):
            raise OutputError(
                f"{out} exists; use --overwrite to replace it or --resume to complete it"
            )
        log = None
        if request.log_moves is not None:
            log = check_output(request.log_moves, True, "--log-moves")
            if same_file(out, log):
                raise OutputError(f"--log-moves and --out name the same file: {log}")
            if log.exists() and not (request.overwrite or request.resume):
                raise OutputError(f"{log} exists; use --overwrite to replace it")
    except OutputError as error:
        raise RunError(str(error)) from None
    return out, log


def _rows_before(request, out):
    """Rows of an interrupted run that --resume keeps (0 for a fresh run)."""
    if not request.resume:
        return 0
    if not out.exists():
        raise RunError(f"nothing to resume: {out} does not exist")
    meta = results.read_meta(out)
    mine = request.description()
    for key in ("game", "rules", "policy", "params", "seed", "start", "n"):
        if meta.get(key) != json.loads(json.dumps(mine[key])):
            raise RunError(
                f"cannot resume {out}: its {key} is {meta.get(key)!r}, this run's is {mine[key]!r}"
            )
    if meta.get("completed"):
        raise RunError(f"{out} is already complete ({meta['n_done']} deals)")
    theirs, ours = meta.get("log_moves"), mine["log_moves"]
    if theirs is None and ours is not None:
        raise RunError(
            f"cannot resume {out} with --log-moves: its first {meta['n_done']:,} deals "
            "were played without a move log"
        )
    if theirs is not None and (ours is None or not same_file(theirs, ours)):
        raise RunError(f"{out} logs its moves to {theirs}: resume it with --log-moves {theirs}")
    return int(meta["n_done"])


def _check_log_for_resume(request, log, before):
    if log is None or before == 0:
        return
    kept = journal.read_lines(log, before)
    deals = [_parse_line(line) for line in kept]
    expected = range(request.start, request.start + before)
    if len(kept) < before or any(
        line.get("game") != request.game.name or line.get("deal") != deal
        for line, deal in zip(deals, expected, strict=True)
    ):
        raise RunError(
            f"cannot resume with {log}: it does not hold the move logs of the {before:,} deals done"
        )


def _parse_line(line):
    try:
        parsed = json.loads(line)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _run_locked(request, out, log, before, progress):
    game = request.game
    first = request.start + before
    description = request.description()
    rows_journal = journal.journal_path(out)
    log_journal = journal.log_journal_path(log) if log else None
    started, clock = datetime.now(UTC), time.perf_counter()
    try:
        journal_file = journal.Journal(rows_journal, description, first, len(game.columns))
        log_file = _MoveLog(request, log_journal) if log else None
    except OSError as error:
        raise RunError(_os_reason(error)) from None
    totals = Totals()
    if before:
        _add_kept_rows(out, totals)
    error = None
    with _StopSignals() as stop:
        try:
            spec = job_spec(request)
            load_kernel(spec)
            stop.immediate = bool(request.scheduler)  # a Dask client cannot be polled
            if progress:
                progress(totals.deals)
            for result in _play(request, spec, first, stop):
                if result.done:
                    if log_file:
                        log_file.write(result)
                    journal_file.write(result.rows)
                    totals.add(game, result.rows)
                    if progress:
                        progress(result.done)
                if result.fault is not None:
                    raise PolicyFault(
                        request.policy.name, request.seed, result.fault_deal, result.fault
                    )
        except KeyboardInterrupt:
            stop.signum = stop.signum or signal.SIGINT
        except (PolicyFault, WorkerFailure, OSError, _cluster_error()) as failure:
            error = _os_reason(failure) if isinstance(failure, OSError) else str(failure)
        finally:
            stop.immediate = False  # from here on a signal is noted, never cuts a write
            try:
                journal_file.close()
                if log_file:
                    log_file.close()
            except OSError as failure:
                error = error or _os_reason(failure)
        wall = time.perf_counter() - clock
        if journal_file.rows == 0 and before == 0 and (error or stop.signum):
            _discard(rows_journal, log_journal)  # nothing played: the output stays as it was
            if error:
                raise RunError(error)
            return RunResult(out, totals, False, wall, 0, 0, stop.signum)
        meta = description | {
            "started_at": started.isoformat(timespec="seconds"),
            "executor": _executor(request),
        }
        try:
            kept = _finish(out, log, game, meta, before, rows_journal, log_journal, wall)
        except OSError as failure:
            reason = _os_reason(failure)
            if rows_journal.exists():
                reason += (
                    f"; the finished deals are kept in {rows_journal}: run the same command "
                    "with --resume to recover them"
                )
            raise RunError(reason) from None
    return RunResult(out, totals, kept == request.n, wall, kept - before, kept, stop.signum, error)


def _cluster_error():
    from sim.engine.run.cluster import ClusterError

    return ClusterError


def _add_kept_rows(out, totals):
    import pyarrow.parquet as pq

    columns = [c for c in ("won", "score", "outcome") if c in pq.read_schema(out).names]
    totals.add_table(pq.read_table(out, columns=columns))


def _finish(out, log, game, meta, before, rows_journal, log_journal, wall):
    """Merge what an earlier run kept with the journals into the final files.

    The move log goes first, then the result file: a crash between the two leaves a
    log that is only longer, and the journals are removed last, so salvage can redo it.
    """
    description, first, rows = journal.read(rows_journal)
    if log is not None:
        lines = journal.read_lines(log_journal, rows.shape[0])
        rows = rows[: len(lines)]
        _write_log(log, before, lines)
    previous = results.read_meta(out) if before else {}
    meta = meta | {
        "sim_version": _version(),
        "n_done": before + rows.shape[0],
        "completed": before + rows.shape[0] == description["n"],
        "wall_time": round(wall + previous.get("wall_time", 0), 3),
    }
    _write_results(out, game, description, before, first, rows, meta)
    _discard(rows_journal, log_journal)
    return meta["n_done"]


def _write_log(log, before, lines):
    tmp = temporary_path(log)
    try:
        with open(tmp, "w", encoding="utf-8") as file:
            file.writelines(journal.read_lines(log, before))
            file.writelines(lines)
        os.replace(tmp, log)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_results(out, game, description, before, first, rows, meta):
    try:
        writer = results.ResultWriter(out, game)
    except BaseException:
        temporary_path(out).unlink(missing_ok=True)
        raise
    try:
        if before:
            results.copy_rows(out, writer, limit=before)
        batch = results.ROW_GROUP_ROWS
        for at in range(0, rows.shape[0], batch):
            part = np.ascontiguousarray(rows[at : at + batch])
            writer.write(
                results.rows_to_table(
                    game, description["policy"], description["seed"], first + at, part
                )
            )
        writer.close(meta)
    except BaseException:
        writer.discard()
        raise


def _discard(*paths):
    for path in paths:
        if path is not None:
            Path(path).unlink(missing_ok=True)


# --- what a killed run left behind ------------------------------------------------


def _salvage(request, out, locks):
    """Turn the journal of a killed run of `out` into a valid incomplete result file."""
    from sim.engine.games import GAMES

    path = journal.journal_path(out)
    if not path.exists():
        return []
    try:
        description, first, rows = journal.read(path)
        game = GAMES[description["game"]]
        before = first - description["start"]
    except (journal.JournalError, KeyError, TypeError):
        path.unlink()
        return []
    log = description.get("log_moves")
    log_journal = journal.log_journal_path(log) if log else None
    if rows.shape[0] == 0 or request.overwrite:
        _discard(path, log_journal)
        return [f"discarded {len(rows):,} deals a killed run left for {out}"] if len(rows) else []
    if not _may_salvage_into(out, description, before):
        raise RunError(
            f"a killed run left {rows.shape[0]:,} finished deals for {out} in {path} that "
            f"do not continue {out}; move {out} away to keep them, or use --overwrite"
        )
    if log and not (request.log_moves and same_file(log, request.log_moves)):
        with contextlib.suppress(OutputError):
            locks.enter_context(FileLock(log))
    meta = description | {"salvaged": True, "executor": "recovered from a killed run"}
    kept = _finish(out, Path(log) if log else None, game, meta, before, path, log_journal, 0.0)
    note = f"recovered {kept:,} finished deals of a killed run into {out}"
    if kept == description["n"]:
        raise RunError(f"{note}: every deal of the run, so the file is complete")
    if not request.resume:
        raise RunError(f"{note}; run the same command with --resume to finish it")
    return [note]


def _may_salvage_into(out, description, before):
    """Whether out is missing, or the same run's incomplete file that the journal extends."""
    if not out.exists():
        return before == 0
    try:
        meta = results.read_meta(out)
    except results.ResultFileError:
        return False
    same = all(meta.get(k) == description.get(k) for k in ("game", "rules", "policy", "params"))
    same = same and all(meta.get(k) == description.get(k) for k in ("seed", "start", "n"))
    return same and not meta.get("completed") and meta.get("n_done") == before


def _remove_stale_temporaries(*paths):
    """Remove `.NAME.PID.tmp` files that dead processes left beside our outputs."""
    for path in paths:
        if path is None:
            continue
        pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.tmp")
        with contextlib.suppress(OSError):
            for sibling in path.parent.iterdir():
                match = pattern.fullmatch(sibling.name)
                if match and not _alive(int(match.group(1))) and sibling.is_file():
                    sibling.unlink(missing_ok=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- playing -----------------------------------------------------------------------


def _play(request, spec, first, stop):
    """ChunkResults in deal order, deals first .. start + n - 1."""
    from sim.engine.run import pool

    end = request.start + request.n
    if first >= end:
        return
    if request.scheduler:
        yield from _play_on_cluster(request, spec, first, end)
        return
    planner = ChunkPlanner(first, end, request.workers)
    yield from pool.play(spec, planner, request.workers, stop.requested, request.deal_timeout)


def _play_on_cluster(request, spec, first, end):
    from sim.engine.run import cluster

    probe = min(PROBE_DEALS, end - first)
    result = play_chunk(spec, (first, probe))
    yield result
    if result.fault is not None or first + probe >= end:
        return
    per_deal = max(result.seconds / probe, 1e-7)
    size = int(max(1, min(cluster.MAX_CHUNK, cluster.CHUNK_SECONDS / per_deal)))
    chunks = ((s, min(size, end - s)) for s in range(first + probe, end, size))
    yield from cluster.play(spec, chunks, request.scheduler, request.workers)


class _StopSignals:
    """Within the block, SIGINT, SIGTERM and SIGHUP ask the run to stop.

    While `immediate` (loading the kernel, or waiting on a Dask cluster) a signal
    interrupts at once; otherwise it only sets `signum`, which the pool polls, so that
    no write is ever cut in half."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self):
        self.signum = None
        self.immediate = True
        self._old = {}

    def requested(self):
        return self.signum is not None

    def _handle(self, signum, frame):
        self.signum = self.signum or signum
        if self.immediate:
            raise KeyboardInterrupt

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc):
        for signum, old in self._old.items():
            signal.signal(signum, old)


def _executor(request):
    if request.scheduler:
        return f"dask {request.scheduler}"
    return f"local, {request.workers} worker(s)"


def _version():
    try:
        from importlib.metadata import version

        return version("sim")
    except Exception:
        return "unknown"


def _os_reason(error):
    from sim.engine.run.files import describe_os_error

    return describe_os_error(error)


# --- move logs ---------------------------------------------------------------------


def outcome_label(game, row):
    """{"outcome": label} from a result row where the game records one, else {}.

    A solver's `unknown` (or a resignation) shows in its row, not in its moves."""
    names = [c.name for c in game.columns]
    if "outcome" not in names:
        return {}
    column = names.index("outcome")
    return {"outcome": game.columns[column].labels[row[column]]}


class _MoveLog:
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
