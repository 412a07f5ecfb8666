"""Writing outputs safely: never over an existing file unless asked, never half a file."""

import os
import shutil
from pathlib import Path

from engine.analysis.inputs import AnalysisError
from engine.results import temporary_path


def check_writable(path, overwrite):
    """Refuse an existing output (before any work is done) unless overwrite."""
    path = Path(path)
    if path.is_dir():
        raise AnalysisError(f"{path} is a folder, not a file")
    if path.exists() and not overwrite:
        raise AnalysisError(f"{path} already exists (pass --overwrite to replace it)")


def write_atomically(path, write):
    """Call write(temporary path), then move the finished file to path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise


def write_text(path, text):
    write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def write_bytes(path, data):
    write_atomically(path, lambda tmp: Path(tmp).write_bytes(data))
