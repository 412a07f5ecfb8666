"""What a killed run left behind: the journals of its finished deals, turned into a valid
result file marked incomplete, which --resume completes (engine.run.journal)."""

import contextlib
import json
import shlex
from pathlib import Path

from sim.engine.games import GameError, get_game
from sim.engine.run import journal, results
from sim.engine.run.files import FileLock, OutputError, describe_os_error, same_file, temporary_path
from sim.engine.run.finish import finish
from sim.engine.run.request import SAME_RUN_KEYS, RunError, played_by_other_code
from sim.engine.run.resume import kept_lines_are_as_written


def salvage(request, out, locks):
    """Turn the journal of a killed run of `out` into a valid result file.

    Returns notes for the user and whether the file is now complete (a run stopped as
    it wrote its outputs, by a full disk say, and resumed by this very run); raises
    RunError when this run must not go on: the journal does not continue `out`, or the
    recovered file ends it (this run does not --resume it)."""
    try:
        return _salvage(request, out, locks)
    except OSError as error:
        temporary_path(out).unlink(missing_ok=True)
        raise RunError(
            f"{describe_os_error(error)}, recovering the finished deals of a killed run of {out}"
        ) from None


def _salvage(request, out, locks):
    try:
        journal.JournalPaths.beside(out, request.log_moves).check_places()
    except journal.JournalError as error:
        raise RunError(str(error)) from None
    path = journal.journal_path(out)
    if not path.exists():
        return [], False
    found = _read_journal(path)
    if found is None:
        if not journal.written_by_a_run(path):
            raise RunError(
                f"{path} is where this run keeps its journal, and it is not one; move it away"
            )
        path.unlink()  # the start of a journal a killed run was creating: nothing to keep
        return [], False
    description, rows, game, before = found
    log = _moved_log(description.get("log_moves"), request.log_moves)
    description = description | {"log_moves": log}
    journals = journal.JournalPaths.beside(out, log)
    if rows.shape[0] == 0 or request.overwrite:
        journals.remove()
        discarded = [f"discarded {_deals(len(rows))} a killed run left for {out}"]
        return discarded if len(rows) else [], False
    if not _may_salvage_into(out, description, before):
        raise RunError(
            f"a killed run left {_deals(rows.shape[0], 'finished ')} for {out} in {path} that "
            f"do not continue {out}; move {out} away to keep them, or use --overwrite"
        )
    if log and not (request.log_moves and same_file(log, request.log_moves)):
        with contextlib.suppress(OutputError):
            locks.enter_context(FileLock(log))
    if log and before and not kept_lines_are_as_written(log, before, results.read_meta(out)):
        raise RunError(
            f"cannot recover the deals a killed run left for {out}: the first {before:,} "
            f"lines of {log} are not the move logs the run wrote (edited since?)"
        )
    meta = description | {"salvaged": True, "executor": "recovered from a killed run"}
    kept = finish(out, Path(log) if log else None, game, meta, before, journals, 0.0)
    note, complete = _recovered(request, out, kept, description)
    return [note], complete


def _moved_log(recorded, given):
    """The move log of a killed run: the one it recorded, or, its folder moved since
    (no journal of that log is left there), the log of the same name given now, whose
    journal was moved along with it."""
    if not recorded or not given or Path(recorded).name != Path(given).name:
        return recorded
    if journal.log_journal_path(recorded).exists():
        return recorded
    if not journal.log_journal_path(given).exists():
        return recorded
    return str(Path(given).absolute())


def _read_journal(path):
    """(description, rows, game, rows of `out` it continues) of a journal, or None."""
    try:
        description, first, rows = journal.read(path)
        game = get_game(description["game"])
        before = first - description["start"]
    except (journal.JournalError, GameError, KeyError, TypeError):
        return None
    return description, rows, game, before


def _may_salvage_into(out, description, before):
    """Whether out is missing, or the same run's incomplete file that the journal extends."""
    if not out.exists():
        return before == 0
    try:
        meta = results.read_meta(out)
    except results.ResultFileError:
        return False
    same = all(meta.get(k) == description.get(k) for k in SAME_RUN_KEYS)
    return same and not meta.get("completed") and meta.get("n_done") == before


def _recovered(request, out, kept, description):
    """The note on the deals recovered, and whether they complete the file; an error
    unless this run goes on to finish them, or resumes the very run they complete."""
    note = f"recovered {_deals(kept, 'finished ')} of a killed run into {out}"
    mine = json.loads(json.dumps(request.description()))  # as stored: JSON values
    other_code = played_by_other_code(description, {"code": _code_now(description, mine)})
    other_run = any(description.get(key) != mine[key] for key in SAME_RUN_KEYS + ("policy_spec",))
    if kept == description["n"]:
        note += ": every deal of the run, so the file is complete"
        if request.resume and not (other_code or other_run):
            return note, True
        raise RunError(note)
    if other_code:
        raise RunError(f"{note}; {other_code}, so --resume cannot finish it: run it again whole")
    if other_run:
        raise RunError(f"{note}; `{_resume_command(description, out)}` finishes it")
    if not request.resume:
        raise RunError(f"{note}; run the same command with --resume to finish it")
    return note, False


def _code_now(description, mine):
    """The code that would play the recorded run now: this command's when it is that run,
    else that of the game and policy the journal names (their own code, as of now), or
    the recorded code when they cannot be loaded, since nothing then says it changed."""
    if description.get("policy_spec") == mine.get("policy_spec"):
        return mine["code"]
    from sim.engine.compile_cache import code_of
    from sim.policies.registry import PolicyError, resolve

    try:
        game = get_game(description["game"])
        return code_of(game, resolve(game.name, description["policy_spec"]))
    except (GameError, PolicyError, KeyError, TypeError):
        return description.get("code")


def _resume_command(description, out):
    """The command that resumes the run a journal describes."""
    words = ["sim", description["game"], "--policy", description["policy_spec"]]
    for name, value in description["params"].items():
        words += ["--param", f"{name}={results.number_text(value)}"]
    for name, value in description["rules"].items():
        words += [f"--{name.replace('_', '-')}", str(value)]
    words += _deal_words(description)
    words += ["-n", str(description["n"]), "--out", str(out)]
    if description.get("log_moves"):
        words += ["--log-moves", description["log_moves"]]
    return shlex.join(words + ["--resume"])


def _deal_words(description):
    """The options that name a run's deals: its seed, or its source (deal_sources)."""
    source = description.get("deals") or {}
    if source.get("source") == "pysol":
        prefix = "ms" if source.get("ms") else ""
        return ["--pysol", f"{prefix}{description['start']}"]
    words = ["--layout-file", source["path"]] if source else ["--seed", str(description["seed"])]
    return words + (["--start", str(description["start"])] if description["start"] else [])


def _deals(count, kind=""):
    """'1 finished deal', '2 finished deals'."""
    return f"{count:,} {kind}deal" + ("" if count == 1 else "s")
