"""How long first compiles take on this machine, so that the notice of one is about right.

Games and policies declare how long their first compile takes (`compile_seconds`),
measured on one machine; another may be several times faster or slower. Each first
compile a run announces is timed, and the declared and measured seconds are kept beside
the compiled kernels (RECORDS_NAME in numba's cache folder); the next notice scales the
declared seconds by this machine's ratio of measured to declared time over its last
records. A machine with no record yet is told the declared time.
"""

import contextlib
import json
import os
from pathlib import Path

RECORDS_NAME = "sim-compile-times.json"
RECORDS_KEPT = 8
# A compile declared shorter than this is mostly numba's fixed start-up: its ratio says
# little of how the machine compiles, so it neither scales nor is kept.
SHORTEST_DECLARED = 5.0
FASTEST, SLOWEST = 1 / 8, 8.0  # a ratio beyond these is a measure gone wrong


def calibrated(declared, records):
    """`declared` seconds as this machine compiles, by its records [(declared,
    measured)]: scaled by their summed measured over summed declared seconds."""
    usable = [(d, m) for d, m in records if d >= SHORTEST_DECLARED and m > 0]
    if not usable:
        return declared
    ratio = sum(m for _, m in usable) / sum(d for d, _ in usable)
    return declared * min(max(ratio, FASTEST), SLOWEST)


def with_record(records, declared, measured):
    """The records kept once a compile declared at `declared` took `measured` seconds."""
    if declared < SHORTEST_DECLARED or measured <= 0:
        return list(records)
    return [*records, (declared, measured)][-RECORDS_KEPT:]


def machine_seconds(declared):
    """`declared` seconds as this machine compiles, by its records on disk."""
    return calibrated(declared, read_records(records_path()))


def record(declared, measured):
    """Keep the time a first compile took on this machine; a folder that cannot be
    written keeps nothing (the notice then stays as declared)."""
    path = records_path()
    if path is None:
        return
    records = with_record(read_records(path), declared, measured)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        temporary.write_text(json.dumps(records))
        os.replace(temporary, path)
    temporary.unlink(missing_ok=True)


def read_records(path):
    """[(declared, measured)] from the records file; [] when it is missing or unreadable."""
    try:
        found = json.loads(Path(path).read_text())
        return [(float(d), float(m)) for d, m in found]
    except (OSError, TypeError, ValueError):
        return []


def records_path():
    """Where the records live: numba's cache folder for the rules (NUMBA_CACHE_DIR, or
    __pycache__ beside them); None when it cannot be written."""
    from numba.core import config

    folder = Path(config.CACHE_DIR) if config.CACHE_DIR else Path(__file__).parent / "__pycache__"
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    return folder / RECORDS_NAME if os.access(folder, os.W_OK) else None
