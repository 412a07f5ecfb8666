"""Writing outputs safely: never over an existing file unless asked, never half a file.

The rules are engine.run.files': only a regular file is ever replaced, and only with
--overwrite; a file is written under a temporary name beside it and moved into place.
"""

import contextlib
import os
import stat
from pathlib import Path

from sim.engine.analysis.inputs import AnalysisError
from sim.engine.compressed import is_compressed_name
from sim.engine.run.files import OutputError, check_output, temporary_path
from sim.engine.run.stop_signals import Stopped, raising_stops, say_kept


def check_writable(path, overwrite, what="--out"):
    """Refuse, before any work is done, an output that must not be written."""
    try:
        return check_output(path, overwrite, what=what)
    except OutputError as error:
        raise AnalysisError(str(error)) from None


def check_suffix(out, fmt, writer, promised, kinds, option):
    """Refuse an output name that promises another format than fmt, the one written, or
    a compression: these outputs are never compressed.

    writer says what writes fmt (`--to csv`); promised maps a suffix to the format it
    promises (None: one not written here); kinds maps each format written to its title
    and suffix (`CSV`, `.csv`); option is the one that picks another format (`--to`)."""
    out = Path(out)
    compressed = is_compressed_name(out)
    plain = out.with_suffix("") if compressed else out
    named = promised.get(plain.suffix.lower(), fmt)
    if named == fmt and not compressed:
        return
    title, suffix = kinds[fmt]
    fitting = plain if named == fmt else plain.with_suffix(suffix)
    how = ", uncompressed" if compressed else ""
    other = f", or give {option} {named}" if named in kinds and not compressed else ""
    raise AnalysisError(f"--out {out}: {writer} writes {title}{how}; write {fitting}{other}")


def check_outside_inputs(out, paths, what):
    """Refuse an output that would land inside a folder given as input: every later scan
    of that folder would read it as one of its files."""
    shown, out = out, Path(out).resolve()
    for folder in (Path(path) for path in paths):
        if folder.is_dir() and out.is_relative_to(folder.resolve()):
            raise AnalysisError(
                f"--out {shown}: inside {folder}, an input; {what} would be read again by "
                "every scan of it: write it elsewhere"
            )


def write_atomically(path, write):
    """Call write(temporary path), then move the finished file to path."""
    write_together([(path, write)])


def write_together(writes):
    """Call write(temporary path) for each (path, write), then move every finished file
    into place.

    A failure or a stop while they are written leaves none of them (a Stopped names them
    as not written, and folders made for them go too); the moves are not cut short, and
    a stop asked for meanwhile is raised after them, naming the files as written."""
    paths = [Path(path) for path, _ in writes]
    temporaries, folders = [], []
    try:
        with raising_stops() as stop:
            try:
                for path, (_, write) in zip(paths, writes, strict=True):
                    folders += _make_folder(path.parent)
                    temporaries.append(temporary_path(path))
                    write(temporaries[-1])
                for path in paths:
                    _refuse_if_not_regular(path)
            except BaseException:
                stop.immediate = False  # the clean-up is not cut short
                _remove(temporaries, folders)
                raise
            stop.immediate = False  # nor are the moves
            for tmp, path in zip(temporaries, paths, strict=True):
                os.replace(tmp, path)
            say_kept(f"{', '.join(map(str, paths))} written in full")
    except Stopped as stopped:
        raise Stopped(stopped.signum, unwritten=paths) from None
    if stop.requested():
        raise Stopped(stop.signum, written=paths)


def _make_folder(folder):
    """Make folder and the folders above it that are missing: those it made, the
    deepest first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir(exist_ok=True)
    return missing


def _remove(temporaries, folders):
    for tmp in temporaries:
        tmp.unlink(missing_ok=True)
    for folder in folders:  # the deepest first; one that holds something else stays
        with contextlib.suppress(OSError):
            folder.rmdir()


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
