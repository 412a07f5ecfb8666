"""Finishing a run: its journals, after the rows an earlier run kept, into the final files.

The move log goes first, then the result file: a crash between the two leaves a log that
is only longer, and the journals are removed last, so salvage can redo it. The result
file records a digest of the log's lines (LOG_DIGEST_KEY), so that --resume can tell
the lines it continues from lines edited since (engine.run.resume).
"""

import hashlib
import os

import numpy as np

from sim.engine.compressed import compression_of, open_text
from sim.engine.run import journal, results
from sim.engine.run.files import temporary_path


def finish(out, log, game, meta, before, journals, wall):
    """Merge the first `before` rows of `out` (and lines of `log`) with the journals
    (a JournalPaths) into the final files; returns the deals the result file holds.

    `meta` describes the run; `wall` is the seconds this invocation played."""
    description, first, rows = journal.read(journals.rows)
    if log is not None:
        logged = sum(1 for _ in journal.iter_lines(journals.log, rows.shape[0]))
        rows = rows[:logged]  # only deals with their log line: both files agree
        meta = meta | {LOG_DIGEST_KEY: _write_log(log, before, journals.log, logged)}
    previous = results.read_meta(out) if before else {}
    meta = meta | {
        "sim_version": _version(),
        "n_done": before + rows.shape[0],
        "completed": before + rows.shape[0] == description["n"],
        "wall_time": round(wall + previous.get("wall_time", 0), 3),
    }
    _write_results(out, game, description, before, first, rows, meta)
    journals.remove()
    return meta["n_done"]


def _write_log(log, before, log_journal, logged):
    """The first `before` lines of log, then the first `logged` of its journal, streamed;
    returns the digest of the lines written (lines_digest)."""
    tmp = temporary_path(log)
    digest = hashlib.sha256()
    try:
        with open_text(tmp, "w", compression_of(log), name=log) as file:
            file.writelines(_hashed(journal.iter_lines(log, before), digest))
            file.writelines(_hashed(journal.iter_lines(log_journal, logged), digest))
        os.replace(tmp, log)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return digest.hexdigest()


LOG_DIGEST_KEY = "log_sha256"  # the result file's record of its move log's lines


def lines_digest(lines):
    """The hex SHA-256 of text lines (newlines included) as a move log holds them."""
    digest = hashlib.sha256()
    for _ in _hashed(lines, digest):
        pass
    return digest.hexdigest()


def _hashed(lines, digest):
    for line in lines:
        digest.update(line.encode("utf-8"))
        yield line


def _write_results(out, game, description, before, first, rows, meta):
    try:
        writer = results.ResultWriter(out, game)
    except BaseException:
        temporary_path(out).unlink(missing_ok=True)
        raise
    try:
        if before:
            results.copy_rows(out, writer, limit=before)
        _write_rows(writer, game, description, first, rows)
        writer.close(meta)
    except BaseException:
        writer.discard()
        raise


def _write_rows(writer, game, description, first, rows):
    batch = results.ROW_GROUP_ROWS
    for at in range(0, rows.shape[0], batch):
        part = np.ascontiguousarray(rows[at : at + batch])
        table = results.rows_to_table(game, description, first + at, part)
        writer.write(table)


def _version():
    try:
        from importlib.metadata import version

        return version("sim")
    except Exception:
        return "unknown"
