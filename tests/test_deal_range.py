"""Seeds, deal indices and deal counts stay within int64: refused in one line beyond it,
never wrapped to negative deal numbers."""

import pyarrow.parquet as pq
import pytest
from conftest import sim

INT64_MAX = 2**63 - 1


MAX = "9223372036854775807"


@pytest.mark.parametrize(
    "args, message",
    [
        (["-n", "1e30"], f"Invalid value for '-n' / '--deals': '1e30' is above {MAX}"),
        (["--seed", 2**63], f"Invalid value for '--seed': '{2**63}' is above {MAX}"),
        (["--seed", "1e19"], f"Invalid value for '--seed': '1e19' is above {MAX}"),
        (["--start", 2**64], f"Invalid value for '--start': '{2**64}' is above {MAX}"),
        (
            ["--start", INT64_MAX, "-n", "2"],
            f"--start {MAX} with -n 2 goes past the last deal index, {MAX}",
        ),
        (
            ["--start", INT64_MAX - 5, "-n", "1e6"],
            f"--start {INT64_MAX - 5} with -n 1000000 goes past the last deal index, {MAX}",
        ),
    ],
)
def test_run_past_int64_is_refused_in_one_line(tmp_path, args, message):
    result = sim("calc", *args, "--out", tmp_path / "r.parquet")
    assert result.exit_code == 2
    assert result.output.strip() == f"Error: {message}"
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("option", ["--deal", "--seed"])
def test_show_past_int64_is_refused_in_one_line(option):
    result = sim("show", "calc", option, 2**63)
    assert result.exit_code == 2
    assert result.output.strip() == f"Error: Invalid value for '{option}': '{2**63}' is above {MAX}"


def test_the_last_deals_of_the_largest_seed_play_with_their_own_numbers(tmp_path):
    out = tmp_path / "r.parquet"
    result = sim("calc", "--seed", INT64_MAX, "--start", INT64_MAX - 2, "-n", 3,
                 "--workers", 1, "--out", out, "-q")  # fmt: skip
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert table.column("deal").to_pylist() == [INT64_MAX - 2, INT64_MAX - 1, INT64_MAX]
    assert set(table.column("seed").to_pylist()) == {INT64_MAX}
    shown = sim("show", "calc", "--seed", INT64_MAX, "--deal", INT64_MAX, "--final")
    assert shown.exit_code == 0
    assert f"seed {INT64_MAX} · deal {INT64_MAX}" in shown.output
