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
from sim.engine.run.compile_notice import compile_notice
from sim.policies import registry
from sim.policies.registry import Param, PolicyError, policy, resolve

PLAIN = "1 to 64 letters, digits, - and _, not starting with -"
NUMBERS = "parameters reach the kernel as numbers, so declare it int or float"
ONE_TO_NINE = Param("n", int, 6, "", 1, 9)


def first_legal(state, legal, n_legal, params, stream):
    return 0


def write_plugin(path, decorator, function, returns="0"):
    """A plug-in file of one policy: `function`, declared by `decorator`, returning
    `returns`."""
    path.write_text(
        "from sim.policies.registry import Param, policy\n"
        f"{decorator}\n"
        f"def {function}(state, legal, n_legal, params, stream):\n"
        f"    return {returns}\n"
    )


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
    write_plugin(tmp_path / "trav.py", "@policy('calc', name='../../trav')", "trav")
    monkeypatch.chdir(tmp_path)
    result = sim("calc", "-p", "trav.py:trav", "-n", 10)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: cannot load policy file trav.py: policy '../../trav' of calc: "
        f"its name is not a plain name ({PLAIN})"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trav.py"]


def test_a_str_parameter_is_refused_before_the_run_starts(tmp_path, monkeypatch):
    write_plugin(
        tmp_path / "modes.py", "@policy('calc', params=(Param('mode', str, 'a b'),))", "modes"
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
    write_plugin(tmp_path / "fake.py", "@policy('calc', name='greedy')", "fake")
    result = sim("calc", "-p", f"{tmp_path}/fake.py:fake", "-n", 10)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: policy {tmp_path}/fake.py:fake is named 'greedy', as a built-in calc "
        "policy is: give it another name"
    )


def test_a_builtin_policy_named_by_its_module_is_still_itself():
    assert resolve("calc", "sim.policies.calc:greedy") is resolve("calc", "greedy")


def test_an_entry_point_named_like_a_builtin_policy_is_refused(monkeypatch, tmp_path):
    write_plugin(tmp_path / "shadowing.py", "@policy('calc', name='planner')", "shadow")
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
    write_plugin(tmp_path / "huge.py", "@policy('calc', name='bigint')", "bigint", "2**70")
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
    say = compile_notice(calc, declared("plain"), heard.append, seconds=lambda declared: declared)
    say(kernel.choice_fault_nb.py_func)
    assert heard == [
        "compiling the Calculation rules for this machine: about 7 s, once (later runs load "
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


def test_a_derived_name_drops_the_leading_underscores_of_a_private_function():
    def _tallest(state, legal, n_legal, params, stream):
        return 0

    def __tallest_pile_nb(state, legal, n_legal, params, stream):
        return 0

    assert policy("calc")(_tallest).name == "tallest"
    assert policy("calc")(__tallest_pile_nb).name == "tallest-pile"


def test_a_function_name_that_leaves_no_policy_name_asks_for_one():
    def __(state, legal, n_legal, params, stream):
        return 0

    with pytest.raises(PolicyError) as refused:
        policy("calc")(__)
    assert str(refused.value) == (
        "policy function '__' of calc: its name gives no policy name; give the policy a "
        "name: @policy('calc', name=...)"
    )


@pytest.mark.parametrize(
    "params, problem",
    [
        ((Param("k", int, 0, "", -(10**400), 10**400),), f"has low -1{'0' * 35}..., not"),
        ((Param("k", int, 10**400),), f"has default 1{'0' * 36}..., not"),
        ((Param("k", int, 0, "", None, 10**5000),), "has high an int of 16610 bits, not"),
    ],
)  # fmt: skip
def test_an_int_beyond_a_float_is_not_a_finite_number(params, problem):
    with pytest.raises(PolicyError) as refused:
        declared("dp", params)
    assert str(refused.value) == f"policy 'dp' of calc: parameter k {problem} a finite number"


def test_a_huge_bound_in_a_plugin_file_is_one_error_line(tmp_path, monkeypatch):
    write_plugin(
        tmp_path / "huge.py",
        "@policy('calc', params=[Param('k', int, 0, '', -10**400, 10**400)])",
        "huge",
    )
    monkeypatch.chdir(tmp_path)
    result = sim("calc", "-p", "./huge.py:huge", "-n", 10)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: cannot load policy file ./huge.py: policy 'huge' of calc: parameter k has "
        f"low -{'1' + '0' * 35}..., not a finite number"
    )


@pytest.mark.parametrize("kernel", [42, None, 2.5, [], {"f": 1}])
def test_a_kernel_that_is_not_a_function_is_refused_as_declared(kernel):
    with pytest.raises(PolicyError) as refused:
        registry.Policy("calc", "knc", kernel=kernel)
    assert str(refused.value) == (
        f"policy 'knc' of calc: its kernel {kernel!r} is not a function, nor "
        '"module:function" naming one'
    )


def test_one_param_given_for_the_sequence_is_refused_in_one_line():
    expected = "policy 'dp' of calc: params is a sequence of Param (params=[Param(...)]), not a"
    for declare in (
        lambda: registry.Policy("calc", "dp", kernel=first_legal, params=ONE_TO_NINE),
        lambda: declared("dp", ONE_TO_NINE),
        lambda: declared("dp", "n"),
    ):
        with pytest.raises(PolicyError) as refused:
            declare()
        assert str(refused.value).startswith(expected)
    assert str(refused.value).endswith(" not a str")


def test_params_given_as_a_list_or_generator_are_kept_as_a_tuple():
    listed = registry.Policy("calc", "dp", kernel=first_legal, params=[ONE_TO_NINE])
    assert listed.params == (ONE_TO_NINE,) and hash(listed)
    assert declared("dp", (p for p in [ONE_TO_NINE])).params == (ONE_TO_NINE,)


def twin_entry_points(monkeypatch, tmp_path, names=("one", "two")):
    """Entry points of two plug-in modules, each declaring a calc policy named twin."""
    entries = []
    for module in names:
        write_plugin(tmp_path / f"{module}.py", "@policy('calc', name='twin')", "twin")
        value = f"{module}:twin"
        entries.append(metadata.EntryPoint(module, value, registry.ENTRY_POINT_GROUP))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group=None: entries)


@pytest.mark.parametrize("command", [("policies", "calc"), ("calc", "-p", "twin", "-n", 1)])
def test_two_plugins_of_one_game_under_one_name_are_refused(monkeypatch, tmp_path, command):
    twin_entry_points(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)
    result = sim(*command)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: policy plug-in 'two' (two:twin) is named 'twin', as policy plug-in 'one' "
        "(one:twin) of calc is: give one of them another name"
    )
    assert not (tmp_path / "results").exists()


def test_one_plugin_declared_by_two_entry_points_is_listed_once(monkeypatch, tmp_path):
    twin_entry_points(monkeypatch, tmp_path, names=("one",))
    entry = metadata.EntryPoint("again", "one:twin", registry.ENTRY_POINT_GROUP)
    entries = [*registry.metadata.entry_points(), entry]
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group=None: entries)
    assert [p.name for p in registry.plugin_policies("calc")] == ["twin"]


def test_a_listed_integer_default_reads_as_a_user_may_type_it_back():
    nodes = Param("nodes", int, 1_000_000, "positions", 1, 10**8)
    assert nodes.describe() == "nodes=1_000_000 (int) positions"
    shown = nodes.describe().split()[0].partition("=")[2]
    assert nodes.parse(shown) == 1_000_000
    assert Param("weight", float, 0.25).describe() == "weight=0.25 (float)"
