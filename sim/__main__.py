"""`python -m sim`: the command line."""

from sim.cli.main import run_console

if __name__ == "__main__":
    run_console()
