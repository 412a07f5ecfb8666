"""Benchmarks: kernel speed per core, and the wall time of whole commands."""

import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SLOW_PROBE_SECONDS = 2.0


def time_kernel(game, policy, n, repeat):
    """(deals, median seconds) of the compiled kernel on one core, warm cache.

    For slow policies the count is cut so that one timed run takes about two seconds.
    """
    rules = game.rules_vector(game.default_rules())
    params = policy.param_vector(policy.settings())
    module = game.module

    def play(count):
        rows = np.zeros((count, len(game.columns)), np.int32)
        logs = np.zeros((count, 0), np.int16)
        clock = time.perf_counter()
        module.play_chunk_nb(policy.choose, 0, 0, rules, params, rows, logs)
        return time.perf_counter() - clock

    play(1)
    probe = play(min(n, 100))
    n = max(10, min(n, int(SLOW_PROBE_SECONDS / max(probe / min(n, 100), 1e-9))))
    times = [play(n) for _ in range(repeat)]
    return n, statistics.median(times)


def time_command(args, repeat):
    """Median wall seconds of `sim ARGS` (output to a scratch folder), after a warm-up."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "bench.parquet"
        command = [sys.executable, "-m", "cli.main", *shlex.split(args)]
        command += ["--quiet", "--overwrite", "--out", str(out)]
        subprocess.run(command, check=True)
        walls = []
        for _ in range(repeat):
            clock = time.perf_counter()
            subprocess.run(command, check=True)
            walls.append(time.perf_counter() - clock)
    return statistics.median(walls)
