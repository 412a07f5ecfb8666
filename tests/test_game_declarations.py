"""The light game declarations agree with the compiled rules they stand for."""

import subprocess
import sys

import pytest
from conftest import ROOT

from sim.engine import calc, jokers
from sim.engine.games import CALC, GAMES, JOKERS


def test_declared_limits_are_the_rules_modules_own():
    assert CALC.rules[0].high == calc.MAX_WASTES
    assert CALC.max_log(CALC.default_rules()) == calc.MAX_MOVES
    assert JOKERS.rules[0].default == jokers.DEFAULT_MAX_MOVES


@pytest.mark.parametrize("game", sorted(GAMES))
def test_declared_outcome_labels_are_what_the_rules_module_writes(game):
    labels = next(c.labels for c in GAMES[game].columns if c.name == "outcome")
    assert labels == GAMES[game].module.OUTCOMES


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["calc", "--help"], [], ["policies"], ["policies", "pairs"]],
)
def test_help_version_and_the_policy_list_load_no_compiled_code(args):
    code = (
        "import sys\n"
        "from sim.cli.main import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('numba', 'numpy', 'pyarrow', 'pandas') if m in sys.modules)\n"
        "print('loaded:', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "loaded: []"


def test_the_command_list_describes_the_lazy_commands_as_they_describe_themselves():
    import importlib
    import inspect

    from sim.cli.main import SimGroup

    for name, module_attribute in SimGroup.lazy.items():
        module, _, attribute = module_attribute.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        first = inspect.cleandoc(command.help).split("\n\n")[0].replace("\n", " ")
        assert SimGroup.lazy_help[name] == first
