"""`sim report` draws a policy's win rate against a swept parameter, with its interval."""

import json

import pytest
from conftest import sim
from test_compare import write_result
from test_report import PNG_MAGIC, Page, decoded_png

from sim.engine.analysis.inputs import load_runs
from sim.engine.analysis.report import PNG_MARK
from sim.engine.analysis.sweeps import MIN_SWEEP_VALUES, sweep_series

SWEEP_PLOT = "planner-depth_weight-sweep.png"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A real sweep of planner's depth_weight, and a greedy run on the same deals."""
    folder = tmp_path_factory.mktemp("results")
    common = ("-n", 200, "--seed", 3, "--workers", 1, "-q")
    swept = sim("calc", "-p", "planner", "--param", "depth_weight=0,2,4", *common,
                "--out", folder / "sweep")  # fmt: skip
    assert swept.exit_code == 0, swept.output
    alone = sim("calc", "-p", "greedy", *common, "--out", folder / "greedy.parquet")
    assert alone.exit_code == 0, alone.output
    return folder


def sweep_figures(page):
    return [image for image in page.images if "against depth_weight" in image["alt"]]


def test_html_report_embeds_the_sweep_plot_named_after_its_parameter(results, tmp_path):
    out = tmp_path / "report.html"
    result = sim("report", results, "--out", out)
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    (figure,) = sweep_figures(page)
    assert figure["alt"] == (
        "calc · wastes=4: Win rate of planner against depth_weight, 95% Wilson intervals"
    )
    assert decoded_png(figure["src"]).startswith(PNG_MAGIC)
    assert f"<figcaption>{figure['alt']}</figcaption>" in text
    assert "Parameter sweeps" in page.headings


def test_markdown_report_writes_the_sweep_plot_beside_it(results, tmp_path):
    out = tmp_path / "week.md"
    assert sim("report", results, "--out", out).exit_code == 0
    plot = tmp_path / "week" / SWEEP_PLOT
    assert plot.read_bytes().startswith(PNG_MAGIC)
    assert PNG_MARK in plot.read_bytes()[:4096]  # a plot the next report may replace
    caption = "Win rate of planner against depth_weight, 95% Wilson intervals"
    assert f"{caption}](week/{SWEEP_PLOT})" in out.read_text()


def test_the_plotted_points_are_the_win_rates_compare_gives_at_each_value(results):
    compared = sim("compare", results, "--format", "json")
    assert compared.exit_code == 0, compared.output
    rows = {row["run"]: row for row in json.loads(compared.stdout)["runs"]}
    (sweep,) = sweep_series(load_runs([results]))
    assert (sweep.policy, sweep.parameter) == ("planner", "depth_weight")
    (line,) = sweep.lines
    assert line.others == (("king_pile", 1),)
    assert [point.value for point in line.points] == [0.0, 2.0, 4.0]
    for point in line.points:
        row = rows[point.run]
        assert row["params"] == f"depth_weight={point.value} king_pile=1"
        figures = (row["win_rate"], row["win_rate_low"], row["win_rate_high"])
        assert (point.win_rate, point.low, point.high) == pytest.approx(figures, rel=1e-12)


def test_two_reports_of_a_sweep_are_byte_identical(results, tmp_path):
    for suffix in ("html", "md"):
        first, second = tmp_path / f"1.{suffix}", tmp_path / f"2.{suffix}"
        assert sim("report", results, "--out", first).exit_code == 0
        assert sim("report", results, "--out", second).exit_code == 0
        named = first.read_text().replace("](1/", "](2/").replace("1-deals/", "2-deals/")
        assert named == second.read_text()
    assert (tmp_path / "1" / SWEEP_PLOT).read_bytes() == (tmp_path / "2" / SWEEP_PLOT).read_bytes()


def planner_runs(folder, settings, outcome=None):
    """A planner run per setting of its parameters, on deals 0..19, each winning a share
    of them that grows with its position in settings."""
    paths = []
    for i, params in enumerate(settings):
        outcomes = outcome or ["won"] * (i + 1) + ["lost"] * (19 - i)
        name = "-".join(f"{k}{v}" for k, v in params.items())
        paths.append(write_result(folder / f"{name}.parquet", "planner", outcome=outcomes,
                                  params=params))  # fmt: skip
    return paths


def test_no_sweep_plot_without_a_sweep(results, tmp_path):
    greedy = results / "greedy.parquet"
    too_few = planner_runs(tmp_path, [{"depth": d} for d in range(MIN_SWEEP_VALUES - 1)])
    for inputs in ([greedy], [greedy, *too_few]):
        out = tmp_path / "r.md"
        assert sim("report", *inputs, "--out", out, "--overwrite").exit_code == 0
        assert "-sweep.png" not in out.read_text() and "Parameter sweeps" not in out.read_text()
        assert not list((tmp_path / "r").glob("*sweep*"))
        html = tmp_path / "r.html"
        assert sim("report", *inputs, "--out", html, "--overwrite").exit_code == 0
        page = Page(html.read_text())
        assert sweep_figures(page) == [] and "Parameter sweeps" not in page.headings


def test_each_parameter_of_a_grid_gets_a_plot_with_a_line_per_setting_of_the_others(tmp_path):
    grid = [{"depth": d, "width": w, "king": 1} for w in (8, 4) for d in (3, 1, 2)]
    sweeps = sweep_series(load_runs(planner_runs(tmp_path, grid)))
    assert [sweep.parameter for sweep in sweeps] == ["depth"]  # width takes two values only
    lines = sweeps[0].lines
    assert [line.setting for line in lines] == ["width=4 king=1", "width=8 king=1"]
    assert [[point.value for point in line.points] for line in lines] == [[1.0, 2.0, 3.0]] * 2
    width_four = [point.win_rate for point in lines[0].points]
    assert width_four == [5 / 20, 6 / 20, 4 / 20]  # the runs' positions in grid: 4, 5, 3
    grid.append({"depth": 1, "width": 16, "king": 1})  # a third width, at depth 1 only
    sweeps = sweep_series(load_runs(planner_runs(tmp_path, grid)))
    assert [sweep.parameter for sweep in sweeps] == ["depth", "width"]
    assert len(sweeps[0].lines) == 2  # width 16 has one depth: no line along depth
    (line,) = sweeps[1].lines
    assert line.setting == "depth=1 king=1"
    assert [point.value for point in line.points] == [4.0, 8.0, 16.0]


def test_a_sweep_of_a_policy_that_may_give_up_is_over_its_decided_deals(tmp_path):
    outcome = ["won"] * 3 + ["unknown"] * 5 + ["lost"] * 12
    runs = load_runs(planner_runs(tmp_path, [{"nodes": n} for n in (10, 100, 1000)], outcome))
    (sweep,) = sweep_series(runs)
    assert [point.win_rate for point in sweep.lines[0].points] == [3 / 15] * 3


def test_a_markdown_report_without_the_sweep_removes_its_earlier_sweep_plot(results, tmp_path):
    out = tmp_path / "r.md"
    assert sim("report", results, "--out", out).exit_code == 0
    assert (tmp_path / "r" / SWEEP_PLOT).exists()
    kept = sim("report", results / "greedy.parquet", "--out", out, "--overwrite")
    assert kept.exit_code == 0, kept.output
    assert not (tmp_path / "r" / SWEEP_PLOT).exists()


def test_a_file_of_the_sweep_plots_name_that_the_report_did_not_write_is_kept(results, tmp_path):
    mine = tmp_path / "r" / SWEEP_PLOT
    mine.parent.mkdir()
    mine.write_bytes(b"mine")
    result = sim("report", results, "--out", tmp_path / "r.md", "--overwrite")
    assert result.exit_code == 1
    assert "was not written by sim report" in result.output
    assert mine.read_bytes() == b"mine"
