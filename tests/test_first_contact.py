"""A run compiles only what it plays, and says so before a compile makes it wait."""

import subprocess
import sys
import textwrap

from conftest import ROOT, sim

LAZY_PLUGIN = textwrap.dedent(
    """
    from numba import njit

    from sim.policies.registry import policy


    @policy("calc", name="lazy-first")
    @njit(cache=True)
    def lazy_first(state, legal, n_legal, params, stream):
        return 0
    """
)


def run_python(code):
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()[-1]


def test_playing_one_policy_loads_its_game_and_compiles_that_policy_alone():
    loaded = run_python(
        """
        import sys
        from sim.policies.registry import builtin_policies, resolve
        from sim.policies import calc_kernels

        resolve("calc", "greedy").choose
        others = [p.name for p in builtin_policies("calc") if p.name != "greedy"]
        compiled = [n for n in others if not resolve("calc", n).lazy]
        kernels = [f for f in ("random_nb", "kings_bottom_nb", "planner_nb")
                   if getattr(calc_kernels, f).overloads]
        modules = [m for m in ("sim.engine.montana", "sim.engine.jokers",
                               "sim.policies.calc_strong", "sim.policies.calc_oracle")
                   if m in sys.modules]
        print(compiled, kernels, modules, calc_kernels.greedy_nb.signatures != [])
        """
    )
    assert loaded == "[] [] [] True"


def test_declared_policies_are_lazy_until_played():
    from sim.policies.registry import builtin_policies

    declared = builtin_policies("jokers")
    assert all(isinstance(p.kernel, str) for p in declared)
    assert {p.name for p in declared} == {"random", "greedy", "solver"}
    assert all(p.summary and p.compile_seconds for p in declared)


def test_a_first_compile_is_announced_once_before_the_wait(tmp_path):
    plugin = tmp_path / "lazy_plugin.py"
    plugin.write_text(LAZY_PLUGIN)
    out = tmp_path / "lazy.parquet"
    result = sim("calc", "--policy", f"{plugin}:lazy_first", "-n", 20, "--out", out)
    assert result.exit_code == 0, result.output
    notices = [line for line in result.stderr.splitlines() if line.startswith("compiling")]
    assert notices == [
        "compiling policy lazy-first for this machine: up to a minute or two, once "
        "(later runs load it from the cache)"
    ]


def test_a_cached_kernel_loads_without_a_notice_and_quiet_runs_say_nothing(tmp_path):
    plugin = tmp_path / "lazy_plugin.py"
    plugin.write_text(LAZY_PLUGIN)

    def stderr_of(*options):
        args = ["calc", "--policy", f"{plugin}:lazy_first", "-n", "20", "--overwrite"]
        command = [sys.executable, "-m", "sim", *args, "--out", str(tmp_path / "x.parquet")]
        done = subprocess.run([*command, *options], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert "compiling policy lazy-first" in stderr_of()  # compiled, and cached on disk
    assert "compiling" not in stderr_of()  # loaded from the cache: nothing to wait for
    (tmp_path / "__pycache__").rename(tmp_path / "old-cache")
    assert stderr_of("--quiet") == ""  # compiled again, silently


def test_a_kernel_that_cannot_be_loaded_is_one_line_and_leaves_no_file(tmp_path):
    # A light declaration is accepted when named; its kernel is looked up only as play
    # begins, so that is where a wrong name must fail cleanly.
    (tmp_path / "declared.py").write_text(
        "from sim.policies.registry import Policy\n"
        "missing = Policy('calc', 'missing', 'no_such_module_xyz:choose_nb')\n"
    )
    out = tmp_path / "run.parquet"
    result = sim("calc", "--policy", f"{tmp_path / 'declared.py'}:missing", "-n", 10, "--out", out)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: policy missing of calc: its kernel 'no_such_module_xyz:choose_nb' cannot be "
        "imported: ModuleNotFoundError: No module named 'no_such_module_xyz'"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["declared.py"]


def test_a_kernel_that_does_not_compile_as_a_policy_is_one_line(tmp_path):
    (tmp_path / "mistyped.py").write_text(
        "from numba import njit\n"
        "from sim.policies.registry import Policy\n"
        "@njit(cache=True)\n"
        "def pair_nb(state, legal, n_legal, params, stream):\n"
        "    return (1, 2)\n"
        "pair = Policy('calc', 'pair', 'mistyped:pair_nb')\n"
    )
    result = sim(
        "calc", "-p", f"{tmp_path / 'mistyped.py'}:pair", "-n", 5, "--out", tmp_path / "x.parquet"
    )
    assert result.exit_code == 1
    error = result.stderr.splitlines()[-1]
    assert error.startswith(
        "Error: policy pair of calc: its kernel 'mistyped:pair_nb' does not compile as "
        "choose(state, legal, n_legal, params, stream) -> int: TypingError: No conversion"
    )
    assert error.endswith('mistyped.py", line 5:)')
    assert not (tmp_path / "x.parquet").exists()
