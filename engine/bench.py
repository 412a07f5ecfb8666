"""Benchmarks: kernel speed per core, and the wall time of whole commands."""

import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
import numpy as np

SLOW_PROBE_SECONDS = 2.0


class BenchError(click.ClickException):
    """A timed command that cannot run or fails: `sim bench` prints it as one line."""


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
    try:
        words = shlex.split(args)
    except ValueError as error:
        raise BenchError(f"--command {args!r}: {error}") from None
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "bench.parquet"
        # -P: as the console script does, keep the current folder off the module path.
        command = [sys.executable, "-P", "-m", "cli.main", *words]
        command += ["--quiet", "--overwrite", "--out", str(out)]
        _run(args, command)
        walls = []
        for _ in range(repeat):
            clock = time.perf_counter()
            _run(args, command)
            walls.append(time.perf_counter() - clock)
    return statistics.median(walls)


def _run(args, command):
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        why = f": {lines[-1].removeprefix('Error: ')}" if lines else ""
        raise BenchError(f"`sim {args}` failed with exit code {done.returncode}{why}")
