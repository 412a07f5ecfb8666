"""Writing outputs safely: never over an existing file unless asked, never half a file.

The rules are engine.run.files': only a regular file is ever replaced, and only with
--overwrite; a file is written under a temporary name beside it and moved into place.
"""

import os
import stat
from pathlib import Path

from sim.engine.analysis.inputs import AnalysisError
from sim.engine.run.files import OutputError, check_output, temporary_path
from sim.engine.run.stop_signals import Stopped, StopSignals, raising_stops


def check_writable(path, overwrite, what="--out"):
    """Refuse, before any work is done, an output that must not be written."""
    try:
        return check_output(path, overwrite, what=what)
    except OutputError as error:
        raise AnalysisError(str(error)) from None


def write_atomically(path, write):
    """Call write(temporary path), then move the finished file to path."""
    write_together([(path, write)])


def write_together(writes):
    """Call write(temporary path) for each (path, write), then move every finished file
    into place: a failure or a stop while they are written leaves none of them (a
    Stopped names them as not written), and the moves are not cut short (a stop asked
    for meanwhile is raised after them, naming them as written)."""
    paths = [Path(path) for path, _ in writes]
    temporaries = []
    try:
        with raising_stops():
            for path, (_, write) in zip(paths, writes, strict=True):
                path.parent.mkdir(parents=True, exist_ok=True)
                temporaries.append(temporary_path(path))
                write(temporaries[-1])
            for path in paths:
                _refuse_if_not_regular(path)
        with StopSignals() as moving:
            for tmp, path in zip(temporaries, paths, strict=True):
                os.replace(tmp, path)
    except Stopped as stop:
        _remove(temporaries)
        raise Stopped(stop.signum, unwritten=paths) from None
    except BaseException:
        _remove(temporaries)
        raise
    if moving.requested():
        raise Stopped(moving.signum, written=paths)


def _remove(temporaries):
    for tmp in temporaries:
        tmp.unlink(missing_ok=True)


def _refuse_if_not_regular(path):
    """Checked again at the last moment: what took the name meanwhile is never replaced."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise AnalysisError(f"{path} exists and is not a regular file; it is never replaced")


def write_text(path, text):
    write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
