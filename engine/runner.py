"""The batch runner: deals in chunks across long-lived worker processes, rows to Parquet.

Deal i depends on (seed, i) alone, so chunking and the number of workers change speed,
never rows. The parent compiles (or loads) the kernel and plays the first small chunk
itself, which also measures the policy's speed to size the other chunks; then it forks
the workers, which inherit the loaded kernel. Rows come back in deal order and are
written as they arrive, so memory stays bounded and an interrupted run keeps a valid
file of every deal finished before the interruption.
"""

import json
import multiprocessing
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np

from engine import results, rng
from engine.stats import wilson_interval

LOG_END = np.iinfo(np.int16).min  # fills the unused tail of a deal's action log
PROBE_DEALS = 256
CHUNK_SECONDS = 0.25
MAX_CHUNK = 100_000


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

    `progress(deals)` is called as chunks finish (first with any rows carried over by
    --resume). KeyboardInterrupt (Ctrl-C, or SIGTERM, turned into one here) stops the
    workers; the deals finished so far are kept in a valid file marked incomplete, which
    --resume completes. Any other error leaves the output exactly as it was.
    """
    out = _check_output(request)
    resumed = results.read_meta(out) if request.resume else None
    done_before = resumed["n_done"] if resumed else 0
    log = _MoveLog(request, done_before)
    writer = results.ResultWriter(out, request.game)
    totals = Totals()
    started, clock = datetime.now(UTC), time.perf_counter()
    try:
        if resumed:
            _carry_over(out, writer, totals)
            if progress:
                progress(totals.deals)
        with _sigterm_as_interrupt():
            for chunk_start, rows, logs in _play(request, request.start + done_before):
                table = results.rows_to_table(
                    request.game, request.policy.name, request.seed, chunk_start, rows
                )
                writer.write(table)
                totals.add(request.game, rows)
                log.write(chunk_start, rows, logs)
                if progress:
                    progress(rows.shape[0])
    except KeyboardInterrupt:
        pass
    except BaseException:
        writer.discard()
        log.discard()
        raise
    wall = time.perf_counter() - clock
    meta = request.description() | {
        "sim_version": _version(),
        "n_done": writer.rows,
        "completed": writer.rows == request.n,
        "started_at": started.isoformat(timespec="seconds"),
        "wall_time": round(wall + (resumed["wall_time"] if resumed else 0), 3),
        "executor": _executor(request),
    }
    writer.close(meta)
    log.close()
    return RunResult(out, totals, writer.rows == request.n, wall, writer.rows - done_before)


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


def _check_output(request):
    out = Path(request.out)
    if out.is_dir():
        raise RunError(f"{out} is a folder; give a file name for --out")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunError(f"cannot create folder {out.parent}: {error.strerror}") from None
    if not os.access(out.parent, os.W_OK):
        raise RunError(f"cannot write to folder {out.parent}")
    if request.resume:
        _check_resumable(request, out)
    elif out.exists() and not request.overwrite:
        raise RunError(f"{out} exists; use --overwrite to replace it or --resume to complete it")
    return out


def _check_resumable(request, out):
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


def _carry_over(out, writer, totals):
    import pyarrow.parquet as pq

    results.copy_rows(out, writer)
    columns = [c for c in ("won", "score", "outcome") if c in writer.schema.names]
    totals.add_table(pq.read_table(out, columns=columns))


class _sigterm_as_interrupt:
    """Within the block, SIGTERM stops the run the way Ctrl-C does."""

    def __enter__(self):
        self._main = threading.current_thread() is threading.main_thread()
        if self._main:  # only the main thread may set handlers
            self._old = signal.signal(signal.SIGTERM, _raise_interrupt)

    def __exit__(self, *exc):
        if self._main:
            signal.signal(signal.SIGTERM, self._old)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


# --- playing chunks -------------------------------------------------------------


def job_spec(request):
    """What a worker needs to play chunks of this run: small, picklable, by name."""
    return {
        "game": request.game.name,
        "policy": request.policy_spec,
        "params": request.params,
        "rules": request.rules,
        "seed": request.seed,
        "log": request.log_moves is not None,
    }


_JOBS = {}  # resolved jobs of this process, by spec


def resolve_job(spec):
    key = json.dumps(spec, sort_keys=True)
    if key not in _JOBS:
        from engine.games import GAMES
        from policies.registry import resolve

        game = GAMES[spec["game"]]
        policy = resolve(game.name, spec["policy"])
        _JOBS[key] = {
            "module": game.module,
            "columns": len(game.columns),
            "choose": policy.choose,
            "compiled": policy.compiled,
            "seed": spec["seed"],
            "rules": game.rules_vector(spec["rules"]),
            "params": policy.param_vector(spec["params"]),
            "log_width": game.max_log(spec["rules"]) if spec["log"] else 0,
        }
    return _JOBS[key]


def play_chunk(spec, chunk):
    """(start, rows, logs) of deals chunk[0] .. chunk[0] + chunk[1] - 1 of the job spec."""
    job = resolve_job(spec)
    start, count = chunk
    rows = np.zeros((count, job["columns"]), np.int32)
    logs = np.full((count, job["log_width"]), LOG_END, np.int16)
    module = job["module"]
    kernel = module.play_chunk_nb if job["compiled"] else partial(play_chunk_python, module)
    kernel(job["choose"], job["seed"], start, job["rules"], job["params"], rows, logs)
    return start, rows, logs


def play_chunk_python(module, choose, seed, start, rules, params, rows, logs):
    """The interpreted twin of module.play_chunk_nb, for a policy that is not compiled."""
    state = np.zeros(module.STATE_SIZE, np.int16)
    for i in range(rows.shape[0]):
        play_deal_python(module, seed, start + i, rules, choose, params, state, logs[i])
        module.write_result_nb(state, rows[i])


def play_deal_python(module, seed, deal, rules, choose, params, state, log):
    """The interpreted twin of module.play_nb: the compiled rules, a Python policy."""
    module.start_nb(seed, deal, rules, state)
    stream = rng.new_stream(seed, deal, rng.STREAM_POLICY)
    play_out = getattr(module.play_out_nb, "py_func", module.play_out_nb)
    play_out(seed, deal, rules, state, choose, params, stream, log)


def _play(request, first):
    """Yield (chunk start, rows, logs) in deal order, deals first .. start + n - 1."""
    spec = job_spec(request)
    end = request.start + request.n
    if first >= end:
        return
    probe = min(PROBE_DEALS, end - first)
    play_chunk(spec, (first, 1))  # compiles or loads the kernel before timing or forking
    clock = time.perf_counter()
    yield play_chunk(spec, (first, probe))
    per_deal = max((time.perf_counter() - clock) / probe, 1e-7)
    if request.scheduler:
        from engine import cluster

        chunks = _chunks(first + probe, end, per_deal, request.workers, cluster.CHUNK_SECONDS)
        yield from cluster.play(spec, chunks, request.scheduler, request.workers)
        return
    chunks = _chunks(first + probe, end, per_deal, request.workers)
    if request.workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            yield play_chunk(spec, chunk)
        return
    yield from _play_in_workers(spec, chunks, request.workers)


def _chunks(first, end, per_deal, workers, seconds=CHUNK_SECONDS):
    size = int(min(MAX_CHUNK, max(1, seconds / per_deal)))
    size = max(1, min(size, -(-(end - first) // (workers * 4))))
    return [(s, min(size, end - s)) for s in range(first, end, size)]


def _play_in_workers(spec, chunks, workers):
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    pool = context.Pool(workers, initializer=_worker_init)
    try:
        yield from pool.imap(partial(play_chunk, spec), chunks)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


def _worker_init():
    # The parent owns Ctrl-C: it stops the workers and writes what they finished.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


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
    """The --log-moves JSON Lines file, written beside the rows and moved into place."""

    def __init__(self, request, keep_lines):
        self.request = request
        self.path = Path(request.log_moves) if request.log_moves else None
        if self.path is None:
            return
        if self.path.exists() and not (request.overwrite or request.resume):
            raise RunError(f"{self.path} exists; use --overwrite to replace it")
        self.tmp = results.temporary_path(self.path)
        self.file = open(self.tmp, "w")  # noqa: SIM115 (closed by close/discard)
        if keep_lines and self.path.exists():
            with open(self.path) as old:
                for _, line in zip(range(keep_lines), old, strict=False):
                    self.file.write(line)

    def write(self, start, rows, logs):
        if self.path is None:
            return
        request, game = self.request, self.request.game
        header = {"game": game.name, "seed": request.seed}
        rules = game.nondefault_rules(request.rules)
        for i, actions in enumerate(logs):
            played = [int(a) for a in actions if a != LOG_END]
            line = header | {"deal": start + i, "policy": request.policy.name} | rules
            line |= game.move_log(request.seed, start + i, request.rules, played)
            line |= outcome_label(game, rows[i])
            self.file.write(json.dumps(line) + "\n")

    def close(self):
        if self.path is not None:
            self.file.close()
            os.replace(self.tmp, self.path)

    def discard(self):
        if self.path is not None:
            self.file.close()
            self.tmp.unlink(missing_ok=True)
