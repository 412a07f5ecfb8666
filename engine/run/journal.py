"""The journal of a run: its finished rows on disk within moments, in deal order.

A run writes each finished chunk's kernel rows (int32, one row per deal) to a hidden
journal beside its output as soon as the chunk is next in deal order, and the lines of
its move log to a hidden log journal just before. If the run is killed outright
(`kill -9`, a lost node), the journals hold every deal that reached them; the next run
of the same output salvages them into a valid result file marked incomplete, which
`--resume` completes.

    offset      what
    0           MAGIC, 12 bytes
    12          length L of the header, uint64 little-endian
    20          the header, JSON: {"description": run description, "first": first deal
                of the journal, "columns": int32 values per row}, padded with spaces to
                a multiple of 4 bytes
    20 + L      rows: `columns` int32 values each, deal first, first + 1, ...

A row cut short by the kill is ignored: a row counts once all its bytes are there.
"""

import json
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim.engine.compressed import READ_ERRORS, compression_of, open_text

MAGIC = b"SIM JOURNAL\n"
_LENGTH = struct.Struct("<Q")


class JournalError(ValueError):
    """A file that is not a journal of this simulator."""


def journal_path(out):
    out = Path(out)
    return out.with_name(f".{out.name}.journal")


def log_journal_path(log):
    log = Path(log)
    return log.with_name(f".{log.name}.journal")


@dataclass(frozen=True)
class JournalPaths:
    """The journals of a run: its rows', and its move log's when it logs moves."""

    rows: Path
    log: Path | None = None

    @classmethod
    def beside(cls, out, log=None):
        """The journals of a run writing the result file `out` and the move log `log`."""
        return cls(journal_path(out), log_journal_path(log) if log else None)

    def remove(self):
        for path in (self.rows, self.log):
            if path is not None:
                path.unlink(missing_ok=True)

    def check_places(self):
        """Refuse, before a run reads or writes its journals, anything at their names
        but a regular file (a folder, a link, a pipe): it is not a journal a run
        wrote, and must be neither read (a pipe would block) nor replaced."""
        for path in (self.rows, self.log):
            if path is None:
                continue
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(mode):
                raise JournalError(
                    f"{path} is where this run keeps its journal, and it is not a regular "
                    "file; move it away"
                )


def written_by_a_run(path):
    """Whether the regular file at path starts as a journal does (a run killed as it
    created it may have left only part of the start, or nothing)."""
    with open(path, "rb") as file:
        head = file.read(len(MAGIC))
    return MAGIC.startswith(head)


class Journal:
    """Appends kernel rows to the journal file; each write reaches the OS at once."""

    def __init__(self, path, description, first, columns):
        self.path = Path(path)
        header = json.dumps({"description": description, "first": first, "columns": columns})
        header = header.encode()
        header += b" " * (-len(header) % 4)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._write(MAGIC + _LENGTH.pack(len(header)) + header)
        self.rows = 0

    def write(self, rows):
        self._write(np.ascontiguousarray(rows, np.int32).tobytes())
        self.rows += rows.shape[0]

    def _write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read(path):
    """(description, first deal, rows as int32 [n, columns]) of a journal file.

    The rows are mapped from the file, not read, so a long run's journal costs no memory."""
    path = Path(path)
    with open(path, "rb") as file:
        head = file.read(len(MAGIC) + _LENGTH.size)
        if not head.startswith(MAGIC) or len(head) < len(MAGIC) + _LENGTH.size:
            raise JournalError(f"{path} is not a sim journal")
        (length,) = _LENGTH.unpack_from(head, len(MAGIC))
        try:
            header = json.loads(file.read(min(length, 1 << 20)))
            columns = int(header["columns"])
            first = int(header["first"])
            description = header["description"]
        except (ValueError, KeyError, TypeError):
            raise JournalError(f"{path} is not a sim journal") from None
    body = len(MAGIC) + _LENGTH.size + length
    complete = max(0, path.stat().st_size - body) // (4 * columns)
    if complete == 0:
        return description, first, np.zeros((0, columns), np.int32)
    rows = np.memmap(path, np.int32, "r", offset=body, shape=(complete, columns))
    return description, first, rows


def read_lines(path, count):
    """The first `count` lines of a text file (fewer if it has fewer), decompressed if
    its name ends in .gz or .zst."""
    return list(iter_lines(path, count))


def iter_lines(path, count):
    """read_lines one line at a time: a log of any length passes through in little
    memory."""
    if count <= 0 or not Path(path).exists():
        return
    with open_text(path, "r", compression_of(path)) as file:
        read = 0
        try:
            for line in file:
                if read == count or not line.endswith("\n"):
                    break
                yield line
                read += 1
        except READ_ERRORS:
            pass  # a damaged compressed end: the whole lines before it count
