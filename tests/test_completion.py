"""Shell completion: `sim <TAB>` answers without loading the analysis commands, and
--policy offers the names of the game's policies."""

import json
import os
import subprocess
import sys
from pathlib import Path

from sim.policies.registry import builtin_policies

ROOT = Path(__file__).resolve().parent.parent


def _sim():
    """The installed console script; without one, a program named `sim` the same way
    (`python -m sim` answers to another variable than _SIM_COMPLETE)."""
    script = Path(sys.executable).with_name("sim")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from sim.cli.main import main; main(prog_name='sim')"]


def complete(*words, shell="bash"):
    """What the shell is offered for `sim WORDS`, the last word being the one completed
    (empty: a TAB after a space): (value, help) pairs for zsh, values for bash."""
    env = {
        **os.environ,
        "COMP_WORDS": " ".join(("sim", *words)),
        "COMP_CWORD": str(len(words)),
        "_SIM_COMPLETE": f"{shell}_complete",
    }
    done = subprocess.run(_sim(), cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    if shell == "zsh":  # type, value, help: three lines per item
        return [(lines[i + 1], lines[i + 2]) for i in range(0, len(lines), 3)]
    return [line.split(",", 1)[1] for line in lines]


def names(game):
    return [policy.name for policy in builtin_policies(game)]


def test_command_names_are_offered_lazy_ones_included():
    offered = complete("")
    assert {"calc", "montana", "policies", "bench", "replay"} <= set(offered)
    assert {"show", "compare", "report", "export"} <= set(offered)
    assert complete("co") == ["compare"]


def test_lazy_commands_are_offered_with_their_help():
    offered = dict(complete("co", shell="zsh"))
    assert offered["compare"].startswith("Compare runs")


def test_command_completion_loads_no_analysis_module_nor_the_engine():
    driver = (
        "import json, sys\n"
        "from click.shell_completion import ShellComplete\n"
        "from sim.cli.main import main\n"
        "complete = ShellComplete(main, {}, 'sim', '_SIM_COMPLETE')\n"
        "offered = [item.value for item in complete.get_completions([], '')]\n"
        "heavy = ['sim.cli.analysis', 'sim.cli.show', 'sim.engine.analysis',\n"
        "         'sim.policies.registry', 'numba', 'pyarrow', 'pandas', 'matplotlib']\n"
        "print(json.dumps([offered, [m for m in heavy if m in sys.modules]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", driver], cwd=ROOT, capture_output=True, text=True, check=True
    )
    offered, loaded = json.loads(done.stdout)
    assert {"compare", "report", "export", "show"} <= set(offered)
    assert loaded == []


def test_policy_option_offers_the_policies_that_start_with_the_word():
    assert complete("calc", "--policy", "g") == ["greedy"]


def test_short_policy_option_offers_every_policy_of_the_game():
    offered = complete("montana", "-p", "")
    assert {"first", "greedy", "search", "solver", "random"} <= set(offered)
    assert offered == names("montana")


def test_show_policy_option_offers_the_game_policies():
    assert complete("show", "calc", "-p", "k") == ["kings-bottom"]


def test_a_plugged_in_game_offers_its_own_policies():
    assert complete("pairs", "-p", "") == names("pairs") != []


def test_bench_policy_option_offers_the_policies_of_the_games_given():
    assert complete("bench", "jokers", "-p", "") == names("jokers")
    assert complete("bench", "jokers", "-p", "greedy", "-p", "") == names("jokers")
    assert complete("bench", "-n", "10", "montana", "-p", "s") == [
        name for name in names("montana") if name.startswith("s")
    ]


def test_bench_policy_option_without_games_offers_those_of_every_game():
    offered = complete("bench", "-p", "")
    assert {"kings-bottom", "first", "search", "solver"} <= set(offered)
    assert len(offered) == len(set(offered))  # a name shared by games comes once


def test_game_arguments_offer_game_names():
    assert complete("policies", "m") == ["montana"]
    assert {"calc", "jokers", "montana"} <= set(complete("bench", ""))
