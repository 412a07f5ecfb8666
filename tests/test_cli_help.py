"""Help as a user meets it: `-h` everywhere, examples at the end, bare `sim` is help."""

import pytest
from conftest import sim

from sim.cli.main import EXAMPLES

COMMANDS = sorted(set(EXAMPLES) - {"sim"})


def test_bare_sim_shows_its_help_without_an_error():
    result = sim()
    assert result.exit_code == 0
    assert result.output.startswith("Usage: sim [OPTIONS] COMMAND [ARGS]...")
    assert "Error" not in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_dash_h_and_ends_its_help_with_examples(command):
    short, long = sim(command, "-h"), sim(command, "--help")
    assert short.exit_code == 0 and short.output == long.output
    tail = short.output.rstrip().splitlines()[-len(EXAMPLES[command]) :]
    assert [line.strip() for line in tail] == EXAMPLES[command]


def test_show_offers_one_policy_with_its_default():
    result = sim("show", "calc", "--help")
    assert "-p, --policy TEXT" in result.output
    assert "PATH/FILE.py:ATTRIBUTE.  [default: greedy]" in result.output
    assert "repeat it" not in result.output
