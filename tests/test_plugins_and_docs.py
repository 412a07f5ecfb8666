"""Policies from outside the project: the example of the docs' Writing a policy, and
entry points."""

import re
from importlib import metadata

import pyarrow.parquet as pq
from click.testing import CliRunner
from conftest import ROOT

from sim.cli.main import main
from sim.policies import registry


def test_the_policy_example_of_the_docs_runs_as_written(tmp_path, monkeypatch):
    page = (ROOT / "docs" / "extending" / "policy.md").read_text()
    source = re.search(r"```python\n(# my_policies.py\n.*?)```", page, re.S).group(1)
    command = re.search(r"\$ sim (calc --policy my_policies:tallest [^\n]*)", page).group(1)
    (tmp_path / "my_policies.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    args = command.replace("1e6", "500").split() + ["--out", "r.parquet", "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.num_rows == 500 and table.column("policy")[0].as_py() == "tallest"
    assert pq.read_metadata(tmp_path / "r.parquet").metadata[b"sim"].find(b'"limit": 8') > 0


def test_entry_point_policies_are_listed_and_picked_by_name(monkeypatch, tmp_path):
    (tmp_path / "their_policies.py").write_text(
        "from sim.policies.registry import policy\n"
        "@policy('calc', name='always-first')\n"
        "def always_first(state, legal, n_legal, params, stream):\n"
        "    '''Always the first legal action.'''\n"
        "    return 0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = metadata.EntryPoint(
        name="always-first", value="their_policies:always_first", group=registry.ENTRY_POINT_GROUP
    )
    real = metadata.entry_points

    def entry_points(group=None, **kwargs):
        if group == registry.ENTRY_POINT_GROUP:
            return metadata.EntryPoints([entry])
        return real(group=group, **kwargs)

    monkeypatch.setattr(registry.metadata, "entry_points", entry_points)
    listing = CliRunner().invoke(main, ["policies", "calc"])
    assert "  always-first  Always the first legal action. (python)" in listing.output
    out = tmp_path / "r.parquet"
    result = CliRunner().invoke(main, ["calc", "-p", "always-first", "-n", "50", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert pq.read_table(out).num_rows == 50


def test_bench_reports_a_rate_per_policy():
    result = CliRunner().invoke(
        main, ["bench", "calc", "-p", "greedy", "-n", "2000", "--repeat", "1"]
    )
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("calc"))
    assert row.split()[1] == "greedy" and float(row.split()[-1].replace(",", "")) > 0


def test_bench_startup_times_each_quick_command_beside_the_floor():
    result = CliRunner().invoke(main, ["bench", "--startup", "--repeat", "1"])
    assert result.exit_code == 0, result.output
    labels = [line.split(" median ")[0].strip() for line in result.output.splitlines()]
    assert labels[0] == "python -c 'import click, tqdm'"
    assert {"sim --help", "sim policies", "sim calc --help"} <= set(labels)
    assert result.output.splitlines()[0].endswith("(1.00x the floor)")
