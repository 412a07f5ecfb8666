"""The `sim` console script. From its first moment a stop signal ends it at once, in one
line: importing the command line (sim.cli.main) takes a good part of a second."""

from sim.engine.run.stop_signals import stop_at_once


def run():
    stop_at_once()
    from sim.cli.main import run_console

    run_console()
