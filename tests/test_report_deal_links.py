"""`sim report` links the deals worth a look to replay pages written beside it: deals
the best run lost, and deals only one of two paired runs won."""

import json
import re

import pyarrow.parquet as pq
import pytest
from conftest import sim

LINK = re.compile(r'<a href="(report-deals/[^"]+)">([^<]+)</a>')
DATA = re.compile(r'<script type="application/json" id="deal-data">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    greedy, planner = folder / "greedy.parquet", folder / "planner.parquet"
    assert sim("calc", "-p", "greedy", "-n", 80, "--out", greedy, "-q").exit_code == 0
    args = ["calc", "-p", "planner", "-n", 80, "--out", planner, "-q"]
    assert sim(*args, "--log-moves", folder / "planner.jsonl").exit_code == 0
    return greedy, planner


def rows(path):
    table = pq.read_table(path).to_pydict()
    columns = (table["deal"], table["won"], table["score"])
    return {deal: (won, score) for deal, won, score in zip(*columns, strict=True)}


def page_data(path):
    text = path.read_text(encoding="utf-8")
    return json.loads(DATA.search(text).group(1).replace("<\\/", "</"))


def test_the_report_links_deals_worth_a_look_to_their_replay_pages(tmp_path, two_runs):
    greedy, planner = two_runs
    out = tmp_path / "report.html"
    result = sim("report", greedy, planner, "--out", out, "--deal-pages", 3)
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "<h3>Lost by planner, the best win rate</h3>" in text
    assert "<h3>Won by only one of greedy and another run</h3>" in text
    links = LINK.findall(text)
    lost = [
        (href, label) for href, label in links if label.startswith("planner") and "lost" in label
    ]
    assert 1 <= len(lost) <= 3 + 3  # the best run's losses, and its side of split deals
    by_run = {"greedy": rows(greedy), "planner": rows(planner)}
    for href, label in links:
        page = tmp_path / href
        assert page.is_file()
        run, where = label.split(": ")
        deal = int(re.search(r"deal (\d+)", where).group(1))
        won, score = by_run[run][deal]
        data = page_data(page)
        assert data["outcome"].startswith(("won" if won else "lost") + f" · score {score} ")
        assert data["title"] == f"Calculation · seed 0 · deal {deal} · policy {run}"
    split = [label for _, label in links if "won" in label.split(": ")[1]]
    assert split, "a deal only one of the two won has the winner's page too"


def test_the_lost_deals_are_the_best_runs_nearest_misses(tmp_path, two_runs):
    greedy, planner = two_runs
    out = tmp_path / "report.html"
    assert sim("report", greedy, planner, "--out", out, "--deal-pages", 2).exit_code == 0
    text = out.read_text(encoding="utf-8")
    section = text.split("<h3>Lost by planner, the best win rate</h3>")[1].split("</ul>")[0]
    scores = [int(s) for s in re.findall(r"score (\d+)", section)]
    best_losses = sorted((s for won, s in rows(planner).values() if not won), reverse=True)
    assert scores == best_losses[:2]


def test_a_markdown_report_links_the_same_pages(tmp_path, two_runs):
    out = tmp_path / "report.md"
    assert sim("report", *two_runs, "--out", out, "--deal-pages", 1).exit_code == 0
    links = re.findall(r"\]\((report-deals/[^)]+\.html)\)", out.read_text(encoding="utf-8"))
    assert links and all((tmp_path / link).is_file() for link in links)


def test_no_deal_pages_when_asked_for_none(tmp_path, two_runs):
    out = tmp_path / "report.html"
    assert sim("report", *two_runs, "--out", out, "--deal-pages", 0).exit_code == 0
    assert "report-deals/" not in out.read_text(encoding="utf-8")
    assert not (tmp_path / "report-deals").exists()


def test_deal_pages_are_replaced_only_with_overwrite(tmp_path, two_runs):
    out = tmp_path / "report.html"
    assert sim("report", *two_runs, "--out", out, "--deal-pages", 1).exit_code == 0
    out.unlink()
    # The same pages again (another report of the same runs) are already there: kept.
    assert sim("report", *two_runs, "--out", out, "--deal-pages", 1).exit_code == 0
    out.unlink()
    page = sorted((tmp_path / "report-deals").glob("*.html"))[0]
    page.write_text("mine")
    result = sim("report", *two_runs, "--out", out, "--deal-pages", 1)
    assert result.exit_code == 1
    assert "exists; use --overwrite to replace it" in result.output
    assert page.read_text() == "mine"
    assert sim("report", *two_runs, "--out", out, "--deal-pages", 1, "--overwrite").exit_code == 0
    assert page.read_text() != "mine"
