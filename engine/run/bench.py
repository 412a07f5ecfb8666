"""Benchmarks: kernel speed per core, the wall time of whole commands, and how fast the
commands that should answer at once (help, version, the policy list, completion) do."""

import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
import numpy as np

from sim.engine.run.stop_signals import beside, raising_stops

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

    beside(lambda: play(1))  # the compile: a stop does not wait for it
    probe = play(min(n, 100))
    n = max(10, min(n, int(SLOW_PROBE_SECONDS / max(probe / min(n, 100), 1e-9))))
    times = [play(n) for _ in range(repeat)]
    return n, statistics.median(times)


def time_command(args, repeat, reference=None):
    """Medians of `sim ARGS` (output to a scratch folder), after a warm-up.

    Returns {"sim": (wall, cpu)} and, given a reference command line (a plain C loop of
    the same work, say), {"reference": (wall, cpu)} too: the two are run in turn, so
    that a noisy machine slows both alike. CPU seconds count every process started."""
    words = _split("--command", args)
    reference_words = _split("--reference", reference) if reference else None
    # A stop unwinds: the command under test is killed, the scratch folder removed.
    with raising_stops(), tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "bench.parquet"
        # -P: as the console script does, keep the current folder off the module path.
        words = _logs_into(words, Path(scratch))
        command = [sys.executable, "-P", "-m", "sim", *words]
        command += ["--quiet", "--overwrite", "--out", str(out)]
        runs = {"sim": (f"sim {args}", command)}
        if reference_words:
            runs["reference"] = (reference, reference_words)
        for label, what in runs.values():
            _run(label, what)  # warm-up: caches, page cache
        samples = {name: [] for name in runs}
        for _ in range(repeat):
            for name, (label, what) in runs.items():
                samples[name].append(_timed(label, what))
    return {
        name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got))
        for name, got in samples.items()
    }


# What should answer at once, beside the floor any click command pays: starting Python
# and importing click and tqdm.
STARTUP = (
    ("python -c 'import click, tqdm'", None, None),
    ("sim --help", ["--help"], None),
    ("sim --version", ["--version"], None),
    ("sim calc --help", ["calc", "--help"], None),
    ("sim policies", ["policies"], None),
    ("sim <TAB>", [], {"COMP_WORDS": "sim ", "COMP_CWORD": "1"}),
    ("sim calc --policy <TAB>", [], {"COMP_WORDS": "sim calc --policy ", "COMP_CWORD": "3"}),
)


def time_startup(repeat):
    """[(label, median wall seconds)] of each STARTUP command, run in turn `repeat`
    times, the floor (python with click and tqdm) first."""
    script = Path(sys.executable).with_name("sim")
    sim = [str(script)] if script.exists() else [sys.executable, "-P", "-m", "sim"]
    runs = []
    for label, args, completion in STARTUP:
        if args is None:
            runs.append((label, [sys.executable, "-c", "import click, tqdm"], None))
            continue
        env = None
        if completion:  # click answers completion only under the script's own name
            if not script.exists():
                continue
            env = os.environ | completion | {"_SIM_COMPLETE": "bash_complete"}
        runs.append((label, sim + args, env))
    samples = {label: [] for label, _, _ in runs}
    with raising_stops():  # a stop unwinds: the command being timed is killed
        for _ in range(repeat + 1):  # the first round warms the page cache, untimed
            for label, command, env in runs:
                clock = time.perf_counter()
                _run(label, command, env)
                samples[label].append(time.perf_counter() - clock)
    return [(label, statistics.median(times[1:])) for label, times in samples.items()]


def check_command_lines(commands, reference=None):
    """Refuse, before anything is timed, a --command or --reference that cannot be split
    into words as a shell would."""
    for args in commands:
        _split("--command", args)
    if reference:
        _split("--reference", reference)


def _logs_into(words, scratch):
    """words with the file of any --log-moves moved into scratch (its name kept, so its
    ending still chooses the compression): the command runs with --overwrite, which
    must never replace a user's own file."""
    moved = list(words)
    for i, word in enumerate(moved):
        if word == "--log-moves" and i + 1 < len(moved):
            moved[i + 1] = str(scratch / ("log-" + Path(moved[i + 1]).name))
        elif word.startswith("--log-moves="):
            name = Path(word.removeprefix("--log-moves=")).name
            moved[i] = f"--log-moves={scratch / ('log-' + name)}"
    return moved


def _split(option, text):
    try:
        return shlex.split(text)
    except ValueError as error:
        raise BenchError(f"{option} {text!r}: {error}") from None


def _timed(label, command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    clock = time.perf_counter()
    _run(label, command)
    wall = time.perf_counter() - clock
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _run(label, command, env=None):
    try:
        done = subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
    except OSError as error:
        raise BenchError(f"`{label}` cannot start: {error.strerror}") from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        why = f": {lines[-1].removeprefix('Error: ')}" if lines else ""
        raise BenchError(f"`{label}` failed with exit code {done.returncode}{why}")
