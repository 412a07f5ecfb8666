"""Bad input of every kind: one `Error: ...` line and a non-zero exit, never a traceback."""

import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from cli.main import main


def sim(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# --param: only finite numbers reach a policy and the run's JSON description.


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
@pytest.mark.parametrize(
    "policy, name", [("planner", "depth_weight"), ("slow_greedy:py_greedy", "delay_ms")]
)
def test_non_finite_parameters_are_refused(tmp_path, policy, name, text):
    result = sim("calc", "-p", policy, "--param", f"{name}={text}", "--out", tmp_path / "r.parquet")
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: parameter {name} must be a finite number, not {text!r}"
    )
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("text", ["nan", "inf", "-inf"])
def test_non_finite_integer_parameters_are_refused(tmp_path, text):
    result = sim("calc", "-p", "planner", "--param", f"king_pile={text}", "--out", tmp_path / "r")
    assert result.output.strip() == f"Error: parameter king_pile must be an integer, not {text!r}"


def test_the_run_description_is_strict_json(tmp_path):
    out = tmp_path / "r.parquet"
    result = sim("calc", "-p", "planner", "--param", "depth_weight=1e-300", "-n", 5,
                 "--workers", 1, "--out", out, "-q")  # fmt: skip
    assert result.exit_code == 0, result.output

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    text = pq.read_metadata(out).metadata[b"sim"]
    assert json.loads(text, parse_constant=refuse)["params"]["depth_weight"] == 1e-300
