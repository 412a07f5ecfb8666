"""Claiming a run's outputs: paths checked, exclusive locks held, leftovers of dead runs
removed. The rules themselves (what may be replaced, how locks work) are engine.run.files.
"""

import contextlib
import os
import re
from pathlib import Path

from sim.engine.compressed import OTHER_COMPRESSIONS, SUFFIXES
from sim.engine.run.files import FileLock, OutputError, check_output, same_file
from sim.engine.run.request import OTHER_FORMATS, BadRequest, RunError


def checked_outputs(request):
    """(result file, move log or None) of the request, refused before any work is done
    if they must not be written. A log's name is refused first: it is wrong whatever
    the files (a BadRequest)."""
    if request.log_moves is not None:
        check_log_name(request.log_moves)
    try:
        out = check_output(request.out, True, "--out")
        if request.out.exists() and not (request.overwrite or request.resume):
            raise OutputError(_exists(out, request))
        log = None
        if request.log_moves is not None:
            log = _checked_move_log(request, out)
    except OutputError as error:
        raise RunError(str(error)) from None
    return out, log


def _exists(out, request):
    """Why an existing result file stops a run: with what would replace or finish it. A
    file of this very run played by other code (an upgrade, an edited plug-in) can only
    be played again: --resume would refuse it."""
    import json

    from sim.engine.run.request import SAME_RUN_KEYS, played_by_other_code
    from sim.engine.run.results import ResultFileError, read_meta

    try:
        meta = read_meta(out)
        mine = json.loads(json.dumps(request.description()))  # as stored: JSON values
        same_run = all(meta.get(key) == mine[key] for key in SAME_RUN_KEYS)
        other_code = same_run and played_by_other_code(meta, mine)
    except (ResultFileError, ValueError, TypeError, AttributeError):
        other_code = None
    if other_code:
        return f"{out} holds this run, but {other_code}: --overwrite plays it again"
    return f"{out} exists; use --overwrite to replace it or --resume to complete it"


# Names that promise a format a move log is not (it is JSON lines, .jsonl): a log under
# one would be taken for a file of that format (a .parquet one in a results folder).
NOT_A_LOG = (set(OTHER_FORMATS) | {".parquet"}) - {".jsonl", ".txt"}


def check_log_name(log):
    """Refuse a move log's name that promises what the log is not."""
    _check_log_compression(log)
    _check_log_format(log)


def _checked_move_log(request, out):
    log = check_output(request.log_moves, True, "--log-moves")
    if same_file(out, log):
        raise BadRequest(f"--log-moves and --out name the same file: {log}")
    if log.exists() and not (request.overwrite or request.resume):
        raise OutputError(f"{log} exists; use --overwrite to replace it")
    return log


def _check_log_compression(log):
    """Refuse a name that promises a compression sim does not write: the log would be
    plain text under it, and every reader would take it for what it is not."""
    log = Path(log)
    if log.suffix.lower() not in OTHER_COMPRESSIONS:
        return
    plain = log.with_suffix("")
    fitting = ", ".join(str(plain) + suffix for suffix in SUFFIXES)
    raise BadRequest(
        f"--log-moves {log}: move logs are written plain or compressed as "
        f"{' or '.join(SUFFIXES)}; write {fitting} or {plain}"
    )


def _check_log_format(log):
    log = Path(log)
    plain = log.with_suffix("") if log.suffix.lower() in SUFFIXES else log
    if plain.suffix.lower() not in NOT_A_LOG:
        return
    ending = log.suffix if plain is not log else ""
    raise BadRequest(
        f"--log-moves {log}: a move log is JSON lines, not {plain.suffix}; "
        f"write {plain.with_suffix('.jsonl')}{ending}"
    )


def lock_outputs(locks, out, log):
    """Lock the outputs for as long as the ExitStack `locks` is open."""
    try:
        locks.enter_context(FileLock(out))
        if log is not None:
            locks.enter_context(FileLock(log, "--log-moves"))
    except OutputError as error:
        raise RunError(str(error)) from None


def remove_stale_temporaries(*paths):
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
    except PermissionError:  # someone else's process: alive, and its file is not ours
        return True
    return True
