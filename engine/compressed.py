"""Text files compressed when their name says so: `.gz` (gzip) or `.zst` (zstandard).

A million Montana move-log lines take about 0.9 GB as text and a tenth of that gzipped;
`--log-moves moves.jsonl.gz` writes them compressed, and every reader of move logs
(`sim replay`, `--resume`) reads them back through open_text.
"""

import gzip
import io
from pathlib import Path

SUFFIXES = {".gz": "gzip", ".zst": "zstd"}
READ_ERRORS = (EOFError, OSError, ValueError)  # a truncated or damaged compressed stream


def compression_of(path):
    """ "gzip", "zstd" or None, from the name's last suffix."""
    return SUFFIXES.get(Path(path).suffix.lower())


def open_text(path, mode="r", compression=None):
    """A UTF-8 text file opened for reading ("r") or writing ("w"), compressed with
    `compression` (as compression_of gives it; None: plain text)."""
    if compression == "gzip":
        return gzip.open(path, mode + "t", encoding="utf-8", errors=_errors(mode))
    if compression == "zstd":
        import pyarrow as pa  # only here: plain and gzip logs need no pyarrow

        stream = pa.output_stream if mode == "w" else pa.input_stream
        return io.TextIOWrapper(stream(str(path), compression="zstd"), "utf-8", _errors(mode))
    return open(path, mode, encoding="utf-8", errors=_errors(mode))  # noqa: SIM115


def open_binary_lines(path):
    """A log opened for reading line by line as bytes, decompressed by its name."""
    compression = compression_of(path)
    if compression == "gzip":
        return gzip.open(path, "rb")
    if compression == "zstd":
        import pyarrow as pa

        return io.BufferedReader(pa.input_stream(str(path), compression="zstd"))
    return open(path, "rb")  # noqa: SIM115


def bounded_lines(file, limit):
    """The lines of a binary file, as iterating it gives them, except that a line longer
    than `limit` bytes (its newline aside) is skipped, read in pieces, and stands as
    None: one endless line (a file of zero bytes) must not fill the memory."""
    while True:
        line = file.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or len(line) == limit + 1 and line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = file.readline(limit)
        yield None


def _errors(mode):
    return "replace" if mode == "r" else "strict"
