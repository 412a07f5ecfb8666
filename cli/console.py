"""The `sim` console script. From its first moment a stop signal ends it at once, in one
line: importing the command line (sim.cli.main) takes a good part of a second."""

import os

from sim.engine.run.stop_signals import stop_at_once

STANDARD_STREAMS = (0, 1, 2)


def run():
    stop_at_once()
    hold_closed_streams()
    from sim.cli.main import run_console

    run_console()


def hold_closed_streams():
    """Hold a standard stream closed when sim started open on /dev/null, so that no file
    the command opens takes its number: a write meant for the stream (a child process's,
    a library's) would land in that file. Python has set sys.stdout to None for a closed
    fd 1, and leaves it so: sim.cli.main tells a command that writes to it that it is
    closed."""
    for fd in STANDARD_STREAMS:
        if _is_closed(fd):
            _hold_on_devnull(fd)


def _is_closed(fd):
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _hold_on_devnull(fd):
    devnull = os.open(os.devnull, os.O_RDWR)
    if devnull != fd:
        os.dup2(devnull, fd)
        os.close(devnull)
