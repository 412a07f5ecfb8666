"""`python -m sim`: the command line."""

from sim.cli.console import run

if __name__ == "__main__":
    run()
