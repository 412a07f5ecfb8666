"""Writing outputs safely: never over an existing file unless asked, never half a file.

The rules are engine.run.files': only a regular file is ever replaced, and only with
--overwrite; a file is written under a temporary name beside it and moved into place.
"""

import os
import stat
from pathlib import Path

from sim.engine.analysis.inputs import AnalysisError
from sim.engine.run.files import OutputError, check_output, temporary_path
from sim.engine.run.stop_signals import Stopped, raising_stops


def check_writable(path, overwrite, what="--out"):
    """Refuse, before any work is done, an output that must not be written."""
    try:
        return check_output(path, overwrite, what=what)
    except OutputError as error:
        raise AnalysisError(str(error)) from None


def write_atomically(path, write):
    """Call write(temporary path), then move the finished file to path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    try:
        with raising_stops():
            write(tmp)
            _refuse_if_not_regular(path)
            os.replace(tmp, path)
    except Stopped as stop:
        tmp.unlink(missing_ok=True)
        raise Stopped(stop.signum, path) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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


def write_bytes(path, data):
    write_atomically(path, lambda tmp: Path(tmp).write_bytes(data))
