"""What --resume keeps: the rows of an interrupted result file, once it is shown to be
this very run's, and the lines of its move log; and a file that already holds this very
run, complete, which leaves nothing to play."""

import itertools
import json
import os
import stat
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sim.engine.run import journal, results
from sim.engine.run.files import same_file
from sim.engine.run.finish import LOG_DIGEST_KEY, lines_digest
from sim.engine.run.move_log import line_header
from sim.engine.run.request import SAME_RUN_KEYS, RunError, played_by_other_code
from sim.engine.run.totals import RunResult, Totals


def rows_kept_by_resume(request, out):
    """Rows of an interrupted run that --resume keeps (0 for a fresh run)."""
    if not request.resume:
        return 0
    if not out.exists():
        raise RunError(f"nothing to resume: {out} does not exist")
    meta = results.read_meta(out)
    mine = request.description()
    _check_same_run(out, meta, mine)
    if meta.get("completed"):
        raise RunError(f"{out} is already complete ({meta['n_done']} deals)")
    _check_same_move_log(out, meta, mine)
    _check_rows_are_the_deals_done(out, meta, request.game)
    return int(meta["n_done"])


def already_complete(request):
    """The RunResult of request.out read back from the file, when it already holds this
    very run, complete: the same game, rules, policy, parameters, seed and deals, played
    by this code, its rows the deals it says are done, and its move log the one asked
    for, if any. Nothing is then left to play.

    None with --overwrite, and for any other file (none, incomplete, another run's, not
    a result file): the usual rules refuse or resume it. With --resume, a file that says
    it is this run, complete, and whose rows are not its deals is refused (RunError)."""
    meta = _complete_run_held(request)
    if meta is None:
        return None
    totals = Totals()
    totals.add_file(request.out)
    done = int(meta["n_done"])
    wall = float(meta.get("wall_time", 0.0))
    return RunResult(Path(request.out), totals, True, wall, deals_played=done, kept=done)


def _complete_run_held(request):
    """The description of request.out when it says it is this very run, complete, and
    its rows agree; None otherwise."""
    out = Path(request.out)
    if request.overwrite or not _is_regular_file(out):
        return None
    try:
        meta = results.read_meta(out)
    except (results.ResultFileError, ValueError):  # not a result file: the usual refusal
        return None
    mine = request.description()
    if not (isinstance(meta, dict) and _says_complete(meta) and _logged_as_asked(meta, mine)):
        return None
    if _how_runs_differ(meta, mine):
        return None
    try:
        _check_rows_are_the_deals_done(out, meta, request.game)
    except RunError:
        if request.resume:
            raise
        return None
    return meta


def _is_regular_file(path):
    """Whether path is a regular file, not a link to one; False when it cannot be looked
    at (a name too long): the checks of the outputs then say why."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _says_complete(meta):
    return meta.get("completed") is True and meta.get("n_done") == meta.get("n")


def _logged_as_asked(meta, mine):
    """A run asked with --log-moves is held only with that very log beside it."""
    ours, theirs = mine["log_moves"], meta.get("log_moves")
    if ours is None:
        return True
    return theirs is not None and Path(ours).is_file() and same_file(theirs, ours)


def _check_same_run(out, meta, mine):
    why = _how_runs_differ(meta, mine)
    if why:
        raise RunError(f"cannot resume {out}: {why}")


def _how_runs_differ(meta, mine):
    """Why a stored run description is not of this very run; None when it is."""
    # Files from before the policy's spec (or the code) was stored are known without it.
    keys = SAME_RUN_KEYS + (("policy_spec",) if "policy_spec" in meta else ())
    for key in keys:
        if meta.get(key) != json.loads(json.dumps(mine[key])):  # as stored: JSON values
            verb = "are" if key in ("rules", "params") else "is"
            return f"its {key} {verb} {meta.get(key)!r}, this run's {verb} {mine[key]!r}"
    other_code = played_by_other_code(meta, mine)
    if other_code:
        return f"{other_code}: run it again whole"
    return None


def _check_rows_are_the_deals_done(out, meta, game):
    """Refuse a file whose rows are not the deals its description says are done, in
    order, of its seed and its run: resuming it would leave gaps, repeats or rows of
    another run in a file marked complete."""
    done, start = int(meta["n_done"]), int(meta["start"])
    expected = f"deals {start} to {start + done - 1} of seed {meta['seed']} in order"
    names = pq.read_schema(out).names
    texts = results.run_texts(game, meta)
    wanted = ["deal", "seed", *(name for name in texts if name in names)]
    try:
        table = pq.read_table(out, columns=wanted)
    except (OSError, KeyError, pa.ArrowException):
        raise RunError(f"cannot resume {out}: its deal and seed columns cannot be read") from None
    if table.num_rows != done:
        raise RunError(
            f"cannot resume {out}: it should hold {expected}, and holds {table.num_rows:,} rows"
        )
    deals, seeds = (table.column(name).to_numpy() for name in ("deal", "seed"))
    if not (
        deals.dtype.kind in "iu"
        and np.array_equal(deals, np.arange(start, start + done))
        and seeds.dtype.kind in "iu"
        and np.all(seeds == meta["seed"])
    ):
        raise RunError(f"cannot resume {out}: its rows are not {expected}")
    for name in wanted[2:]:
        found = table.column(name).unique().to_pylist()
        if found and found != [texts[name]]:
            raise RunError(
                f"cannot resume {out}: its {name} column is not {texts[name]!r} throughout"
            )


def _check_same_move_log(out, meta, mine):
    theirs, ours = meta.get("log_moves"), mine["log_moves"]
    if theirs is None and ours is not None:
        raise RunError(
            f"cannot resume {out} with --log-moves: its first {meta['n_done']:,} deals "
            "were played without a move log"
        )
    if theirs is None or (ours is not None and same_file(theirs, ours)):
        return
    # A folder moved (or renamed) with its run in it: the log it names is gone, and the
    # one of that name given now is taken if it holds the deals done (checked next).
    moved = ours is not None and not Path(theirs).exists() and Path(theirs).name == Path(ours).name
    if not moved:
        raise RunError(f"{out} logs its moves to {theirs}: resume it with --log-moves {theirs}")


def check_move_log_for_resume(request, log, before, out):
    """Refuse to resume with a move log that does not hold the deals already done, as
    the run that wrote `out` wrote them."""
    if log is None or before == 0:
        return
    header = line_header(
        request.game, request.seed, None, request.policy, request.params, request.rules
    )
    kept = 0
    for line, deal in zip(journal.iter_lines(log, before), itertools.count(request.start)):
        if not _is_line_of(header | {"deal": deal}, _parse_line(line)):
            break
        kept += 1
    if kept < before:
        raise RunError(
            f"cannot resume with {log}: it does not hold the move logs of the {before:,} deals done"
        )
    if not kept_lines_are_as_written(log, before, results.read_meta(out)):
        raise RunError(
            f"cannot resume with {log}: its first {before:,} lines are not the move logs "
            "the run wrote (edited since?)"
        )


def kept_lines_are_as_written(log, before, meta):
    """Whether the first `before` lines of log are those the run described by meta
    wrote (a file written before runs recorded their log's digest is taken at its word)."""
    recorded = meta.get(LOG_DIGEST_KEY)
    return recorded is None or lines_digest(journal.iter_lines(log, before)) == recorded


def _is_line_of(header, line):
    """Whether a kept log line begins with the header this run writes for its deal."""
    return all(line.get(key) == value for key, value in header.items())


def _parse_line(line):
    try:
        parsed = json.loads(line)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
