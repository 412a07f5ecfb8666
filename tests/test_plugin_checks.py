"""A plug-in policy's declaration is checked as it is made: its name and its parameters'
become file names, `--param` keys and kernel inputs, so anything else is one error line
before a file is named or a deal played."""

import math
from importlib import metadata

import pytest
from conftest import sim

from sim.engine import kernel
from sim.engine.games import get_game
from sim.engine.run import sweep
from sim.engine.run.job import compile_notice
from sim.policies import registry
from sim.policies.registry import Param, PolicyError, policy, resolve

PLAIN = "1 to 64 letters, digits, - and _, not starting with -"
NUMBERS = "parameters reach the kernel as numbers, so declare it int or float"
ONE_TO_NINE = Param("n", int, 6, "", 1, 9)


def first_legal(state, legal, n_legal, params, stream):
    return 0


def declared(name=None, params=()):
    return policy("calc", name=name, params=params)(first_legal)


@pytest.mark.parametrize("name", ["../../trav", "a/b", "new\nline", "-x", ".hidden", "", "x" * 65])
def test_a_policy_name_that_is_not_a_plain_token_is_refused(name):
    with pytest.raises(PolicyError) as refused:
        policy("calc", name=name)(lambda state, legal, n_legal, params, stream: 0)
    shown = name or "<lambda>"  # no name given: the function's own
    assert str(refused.value) == (
        f"policy {shown!r} of calc: its name is not a plain name ({PLAIN})"
    )


@pytest.mark.parametrize("name", ["tallest", "greedy-copy", "py_greedy", "2nd", "A-1_b"])
def test_a_plain_policy_name_is_accepted(name):
    assert declared(name).name == name


@pytest.mark.parametrize(
    "params, problem",
    [
        ((ONE_TO_NINE, ONE_TO_NINE), "parameter n is declared twice"),
        ((Param("n", int, 6, "", 9, 1),), "parameter n has low 9 above high 1"),
        ((Param("n", int, 12, "", 1, 9),), "parameter n has default 12, not in 1..9"),
        ((Param("n", float, -1.0, "", 0),), "parameter n has default -1.0, not at least 0"),
        ((Param("n", int, 2.5),), "parameter n is an int, and its default 2.5 is not"),
        ((Param("mode", str, "a b"),), f"parameter mode is of type str: {NUMBERS}"),
        ((Param("flag", bool, True),), f"parameter flag is of type bool: {NUMBERS}"),
        ((Param("x", float, "1"),), "parameter x has default '1', not a finite number"),
        ((Param("x", float, math.nan),), "parameter x has default nan, not a finite number"),
        ((Param("x", float, 0.5, "", True),), "parameter x has low True, not a finite number"),
        ((Param("a b", int, 1),), f"parameter name 'a b' is not a plain name ({PLAIN})"),
        ((Param("k=v", int, 1),), f"parameter name 'k=v' is not a plain name ({PLAIN})"),
        (("n",), "'n' is not a Param"),
    ],
)  # fmt: skip
def test_a_parameter_that_cannot_reach_the_kernel_is_refused(params, problem):
    with pytest.raises(PolicyError) as refused:
        declared("dp", params)
    assert str(refused.value) == f"policy 'dp' of calc: {problem}"


def test_a_parameter_declared_within_its_bounds_is_accepted():
    params = (Param("n", int, 1, "", 1, 9), Param("w", float, 0.0, "", -1, 1), Param("z", float, 3))
    assert [p.name for p in declared("dp", params).params] == ["n", "w", "z"]


def test_a_refused_plugin_file_is_one_error_line_and_writes_nothing(tmp_path, monkeypatch):
    (tmp_path / "trav.py").write_text(
        "from sim.policies.registry import policy\n"
        "@policy('calc', name='../../trav')\n"
        "def trav(state, legal, n_legal, params, stream):\n"
        "    return 0\n"
    )
    monkeypatch.chdir(tmp_path)
    result = sim("calc", "-p", "trav.py:trav", "-n", 10)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: cannot load policy file trav.py: policy '../../trav' of calc: "
        f"its name is not a plain name ({PLAIN})"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trav.py"]


def test_a_str_parameter_is_refused_before_the_run_starts(tmp_path, monkeypatch):
    (tmp_path / "modes.py").write_text(
        "from sim.policies.registry import Param, policy\n"
        "@policy('calc', params=(Param('mode', str, 'a b'),))\n"
        "def modes(state, legal, n_legal, params, stream):\n"
        "    return 0\n"
    )
    monkeypatch.chdir(tmp_path)
    result = sim("calc", "-p", "modes.py:modes", "-n", 10, "--out", "r.parquet")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot load policy file modes.py: policy 'modes' of calc: "
        f"parameter mode is of type str: {NUMBERS}"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["modes.py"]  # no journal either


def test_a_plugin_file_named_like_a_builtin_policy_is_refused(tmp_path):
    (tmp_path / "fake.py").write_text(
        "from sim.policies.registry import policy\n"
        "@policy('calc', name='greedy')\n"
        "def fake(state, legal, n_legal, params, stream):\n"
        "    return 0\n"
    )
    result = sim("calc", "-p", f"{tmp_path}/fake.py:fake", "-n", 10)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: policy {tmp_path}/fake.py:fake is named 'greedy', as a built-in calc "
        "policy is: give it another name"
    )


def test_a_builtin_policy_named_by_its_module_is_still_itself():
    assert resolve("calc", "sim.policies.calc:greedy") is resolve("calc", "greedy")


def test_an_entry_point_named_like_a_builtin_policy_is_refused(monkeypatch, tmp_path):
    (tmp_path / "shadowing.py").write_text(
        "from sim.policies.registry import policy\n"
        "@policy('calc', name='planner')\n"
        "def shadow(state, legal, n_legal, params, stream):\n"
        "    return 0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = metadata.EntryPoint(
        name="shadow", value="shadowing:shadow", group=registry.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group=None: [entry])
    result = sim("policies", "calc")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: policy plug-in 'shadow' (shadowing:shadow) is named 'planner', as a built-in "
        "calc policy is: give it another name"
    )


def test_a_python_policy_returning_a_huge_integer_returned_an_index_outside_the_list(tmp_path):
    (tmp_path / "huge.py").write_text(
        "from sim.policies.registry import policy\n"
        "@policy('calc', name='bigint')\n"
        "def bigint(state, legal, n_legal, params, stream):\n"
        "    return 2**70\n"
    )
    out = tmp_path / "r.parquet"
    result = sim("calc", "-p", f"{tmp_path}/huge.py:bigint", "-n", 5, "--workers", 1, "--out", out)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: policy bigint returned an index outside the legal list (seed 0, deal 0)"
    )
    shown = sim("show", "calc", "-p", f"{tmp_path}/huge.py:bigint", "--final")
    assert shown.output.splitlines()[-1] == (
        "Error: policy bigint returned an index outside the legal list (seed 0, deal 0)"
    )


def test_a_compile_while_a_python_policy_plays_is_announced_as_the_rules():
    calc, heard = get_game("calc"), []
    say = compile_notice(calc, declared("plain"), heard.append)
    say(kernel.choice_fault_nb.py_func)
    assert heard == [
        "compiling the Calculation rules for this machine: about 5 s, once (later runs load "
        "it from the cache)"
    ]


def test_a_compile_of_a_compiled_plugin_is_announced_as_the_policy():
    greedy_kernel = resolve("calc", "greedy").choose
    compiled, heard = policy("calc", name="mine")(greedy_kernel), []
    compile_notice(get_game("calc"), compiled, heard.append)(greedy_kernel.py_func)
    assert heard == [
        "compiling policy mine for this machine: up to a minute or two, once (later runs "
        "load it from the cache)"
    ]


def test_minus_zero_is_the_setting_zero():
    planner = resolve("calc", "planner")
    weight = planner.settings(["depth_weight=-0"])["depth_weight"]
    assert weight == 0.0 and math.copysign(1, weight) == 1
    assert len(sweep.settings([planner], ["depth_weight=0,-0,-0.0"])) == 1
