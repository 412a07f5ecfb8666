"""Policies given as module:attribute or path/file.py:attribute: loaded without letting
the current folder shadow installed packages, and every failure one error line."""

import os
import subprocess
import sys
from importlib import metadata

import pyarrow.parquet as pq
import pytest
from conftest import played, sim

from sim.policies import registry
from sim.policies.registry import PolicyError, resolve

FORMS = "NAME, MODULE:ATTRIBUTE or PATH/FILE.py:ATTRIBUTE"
NOT_A_MODULE = "is not a module name; give MODULE:ATTRIBUTE or PATH/FILE.py:ATTRIBUTE"

# A plain Python policy that plays like the built-in greedy.
GREEDY_COPY = """
from sim.policies.calc import greedy
from sim.policies.registry import policy

_choose = greedy.choose.py_func


@policy("calc", name="greedy-copy")
def greedy_copy(state, legal, n_legal, params, stream):
    return _choose(state, legal, n_legal, params, stream)
"""


@pytest.mark.parametrize(
    "spec, message",
    [
        (":", f"policy ':' is not {FORMS}"),
        ("module:", f"policy 'module:' is not {FORMS}"),
        (":attr", f"policy ':attr' is not {FORMS}"),
        (".foo:bar", f"'.foo' {NOT_A_MODULE}"),
        ("a b:c", f"'a b' {NOT_A_MODULE}"),
        ("no/such/file.py:x", "no policy file no/such/file.py"),
        ("notes/policy.txt:x", "policy file notes/policy.txt is not a Python file (.py)"),
    ],
)  # fmt: skip
def test_malformed_policy_specs_are_one_error_line(tmp_path, spec, message):
    result = sim("calc", "-p", spec, "--out", tmp_path / "r.parquet")
    assert result.exit_code == 2  # the value names no policy: a usage error
    assert result.output.strip() == f"Error: {message}"


@pytest.mark.parametrize(
    "source, reason",
    [
        ("raise RuntimeError('no\\nluck')", "RuntimeError: no luck"),
        ("import sys\nsys.exit(4)", "SystemExit: 4"),
        ("def broken(:\n", "SyntaxError: invalid syntax (NAME.py, line 1)"),
        ("import a_module_nobody_has", "No module named 'a_module_nobody_has'"),
        ("1 / 0", "ZeroDivisionError: division by zero"),
    ],
)
def test_a_plugin_module_that_fails_to_import_is_named(tmp_path, monkeypatch, source, reason):
    name = f"failing_plugin_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PolicyError) as module_error:
        resolve("calc", f"{name}:policy")
    assert str(module_error.value) == (
        f"cannot import policy module {name!r}: {reason.replace('NAME', name)}"
    )
    with pytest.raises(PolicyError) as file_error:
        resolve("calc", f"./{name}.py:policy")
    if "No module named" not in reason:
        reason = reason.replace("NAME", name)
        assert str(file_error.value) == f"cannot load policy file ./{name}.py: {reason}"


def test_a_broken_entry_point_is_named(monkeypatch):
    entry = metadata.EntryPoint(
        name="broken", value="a_module_nobody_has:policy", group=registry.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group=None: [entry])
    assert resolve("calc", "greedy").name == "greedy"  # built-ins never load plug-ins
    result = sim("calc", "-p", "tallest", "-n", 10)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: cannot load policy plug-in 'broken' (a_module_nobody_has:policy): "
        "ModuleNotFoundError: No module named 'a_module_nobody_has'"
    )


def test_a_policy_file_given_by_path_plays_like_its_module(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "copy_of_greedy.py").write_text(GREEDY_COPY)
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    spec = f"{tmp_path}/mine/copy_of_greedy.py:greedy_copy"
    result = sim("calc", "-p", spec, "-n", 40, "--workers", 1, "--out", theirs, "-q")
    assert result.exit_code == 0, result.output
    assert sim("calc", "-n", 40, "--workers", 1, "--out", ours, "-q").exit_code == 0
    assert played(pq.read_table(ours)).equals(played(pq.read_table(theirs)))
    assert pq.read_table(theirs).column("policy")[0].as_py() == "greedy-copy"


def test_a_stray_module_in_the_current_folder_never_shadows_an_installed_one(tmp_path):
    (tmp_path / "tqdm.py").write_text("raise ImportError('the stray tqdm.py was imported')\n")
    (tmp_path / "myplug.py").write_text(GREEDY_COPY)
    # Started as the `sim` console script is: the current folder is not on the module path.
    command = [sys.executable, "-P", "-c", "from sim.cli.main import run_console; run_console()"]
    command += ["calc", "--policy", "myplug:greedy_copy", "-n", "10", "--workers", "1"]
    command += ["--out", "r.parquet"]
    env = os.environ | {"TQDM_DISABLE": "", "PYTHONPATH": ""}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "written     r.parquet" in done.stdout
    assert pq.read_table(tmp_path / "r.parquet").num_rows == 10


COMPILED_COPY = """\
from numba import njit

from sim.engine.kernel import POLICY_SIG
from sim.policies.calc_kernels import greedy_nb
from sim.policies.registry import policy


@policy("calc", name="compiled-copy")
@njit(POLICY_SIG, cache=True)
def compiled_copy_nb(state, legal, n_legal, params, stream):
    return greedy_nb(state, legal, n_legal, params, stream)
"""


def test_a_compiled_plugin_loads_by_module_after_a_run_by_path(tmp_path):
    # A run by path compiles the kernel under the file's own module name, and numba's
    # cache beside the file keeps that name: a later import by module name must load.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "compiled_copy.py").write_text(COMPILED_COPY)
    env = os.environ | {"PYTHONPATH": str(tmp_path / "mine"), "TQDM_DISABLE": "1"}

    def run(spec, out):
        command = [sys.executable, "-m", "sim", "calc", "-p", spec, "-n", "20", "-q"]
        command += ["--workers", "1", "--out", str(tmp_path / out)]
        return subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path)

    by_path = run(f"{tmp_path}/mine/compiled_copy.py:compiled_copy_nb", "path.parquet")
    assert by_path.returncode == 0, by_path.stderr
    by_module = run("compiled_copy:compiled_copy_nb", "module.parquet")
    assert by_module.returncode == 0, by_module.stderr
    rows = [played(pq.read_table(tmp_path / name)) for name in ("path.parquet", "module.parquet")]
    assert rows[0].equals(rows[1])
