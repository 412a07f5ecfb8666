"""A run's default file name: one per setting, and a clear line when it cannot be made."""

from conftest import sim

from sim.engine.games import get_game
from sim.engine.run.request import default_filename
from sim.policies.registry import resolve

LONG = """
from sim.policies.registry import Param, policy

PARAMS = tuple(Param(c * 64, float, 0.5, "", 0, 1) for c in "bcd")


@policy("calc", name="p" * 64, params=PARAMS)
def long_named(state, legal, n_legal, params, stream):
    return 0
"""


def test_settings_that_differ_past_six_digits_get_files_of_their_own(tmp_path):
    args = ["calc", "-p", "planner", "--param", "depth_weight=0.1234567,0.1234568", "-n", 10]
    result = sim(*args, "--out", tmp_path, "-q")
    assert result.exit_code == 0, result.output
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == [
        "calc-planner-depthweight0.1234567-wastes4-seed0-n10.parquet",
        "calc-planner-depthweight0.1234568-wastes4-seed0-n10.parquet",
    ]


def test_a_setting_six_digits_say_exactly_keeps_its_short_name():
    calc, planner = get_game("calc"), resolve("calc", "planner")
    name = default_filename(calc, planner, {"depth_weight": 0.5, "king_pile": 1}, {}, 0, 0, 5)
    assert name == "calc-planner-depthweight0.5-seed0-n5.parquet"


def test_a_default_name_too_long_for_the_file_system_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "long.py").write_text(LONG)
    monkeypatch.chdir(tmp_path)
    params = [arg for c in "bcd" for arg in ("--param", f"{c * 64}=0.{'1' * 16}")]
    result = sim("calc", "-p", "./long.py:long_named", *params, "-n", 2)
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: file name too long for this file system: "
        f"{('calc-' + 'p' * 64)[:40]}...; give --out a shorter one"
    )
    assert not any(tmp_path.rglob("*.parquet"))
