"""`sim report`: one self-contained HTML page, or Markdown with its plots beside it."""

import re
from html.parser import HTMLParser

import pytest
from conftest import sim
from test_compare import MIXED_GROUPS, known_pair, mixed_folder, write_result

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PLOTS = ("win_rate", "scores", "reach", "difference")


class Page(HTMLParser):
    """The images, tables (as rows of cell texts) and headings of an HTML page."""

    def __init__(self, text):
        super().__init__()
        self.images, self.tables, self.headings, self.external = [], [], [], []
        self._cell = self._heading = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append(attrs)
        if tag in ("link", "script") and (attrs.get("href") or attrs.get("src")):
            self.external.append(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag in ("h1", "h2", "h3"):
            self._heading = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None
        elif tag in ("h1", "h2", "h3"):
            self.headings.append(self._heading)
            self._heading = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._heading is not None:
            self._heading += data


def decoded_png(src):
    import base64

    prefix = "data:image/png;base64,"
    assert src.startswith(prefix)
    return base64.b64decode(src[len(prefix) :], validate=True)


def test_html_report_embeds_every_plot_and_the_tables(tmp_path):
    a, b = known_pair(tmp_path)
    out = tmp_path / "report.html"
    result = sim("report", a, b, "--out", out)
    assert result.exit_code == 0, result.output
    page = Page(out.read_text(encoding="utf-8"))
    assert len(page.images) == len(PLOTS)
    assert all(decoded_png(image["src"]).startswith(PNG_MAGIC) for image in page.images)
    assert all(image["alt"] for image in page.images)
    assert page.external == []
    runs, paired, inputs = page.tables
    assert runs[0][:5] == ["run", "deals", "wins", "win rate", "95% CI"]
    assert [row[0] for row in runs[1:]] == ["a", "b"]
    # the baseline defaults to the first run: b is paired with a
    assert paired[0][:6] == ["run", "paired", "both won", "run only", "a only", "neither"]
    assert paired[1][:6] == ["b", "20", "3", "2", "5", "10"]
    assert [row[2] for row in inputs[1:]] == ["a.parquet", "b.parquet"]
    assert page.headings[:3] == ["calc report: a, b", "calc · wastes=4 · 2 runs, 2 files", "Runs"]
    assert "Paired with a" in page.headings


def test_report_baseline_can_be_chosen(tmp_path):
    a, b = known_pair(tmp_path)
    out = tmp_path / "report.html"
    assert sim("report", a, b, "--out", out, "--baseline", "b").exit_code == 0
    paired = Page(out.read_text()).tables[1]
    assert paired[1][:6] == ["a", "20", "3", "5", "2", "10"]


def test_report_baseline_may_name_a_policy_and_some_of_its_parameters(tmp_path):
    folder = mixed_folder(tmp_path / "results")
    out = tmp_path / "report.html"
    assert sim("report", folder, "--out", out, "--baseline", "planner depth=2.0").exit_code == 0
    assert "Paired with planner depth=2" in Page(out.read_text()).headings


def test_markdown_report_writes_its_plots_in_a_folder_named_after_it(tmp_path):
    a, b = known_pair(tmp_path)
    out = tmp_path / "week.md"
    assert sim("report", a, b, "--out", out).exit_code == 0
    text = out.read_text()
    for name in PLOTS:
        assert f"](week/{name}.png)" in text
        assert (tmp_path / "week" / f"{name}.png").read_bytes().startswith(PNG_MAGIC)
    assert "| run | paired | both won |" in text


def test_report_is_byte_identical_across_runs(tmp_path):
    a, b = known_pair(tmp_path)
    first, second = tmp_path / "1.html", tmp_path / "2.html"
    assert sim("report", a, b, "--out", first).exit_code == 0
    assert sim("report", a, b, "--out", second).exit_code == 0
    assert first.read_bytes() == second.read_bytes()


def test_a_single_run_has_no_paired_section(tmp_path):
    a, _ = known_pair(tmp_path)
    out = tmp_path / "one.html"
    assert sim("report", a, "--out", out).exit_code == 0
    page = Page(out.read_text())
    assert len(page.images) == 3 and len(page.tables) == 2


def test_runs_of_other_rules_are_reported_apart_and_not_paired(tmp_path):
    a, _ = known_pair(tmp_path)
    w3 = write_result(tmp_path / "w3.parquet", "c", [True, False], rules={"wastes": 3})
    out = tmp_path / "mixed.html"
    assert sim("report", a, w3, "--out", out).exit_code == 0
    page = Page(out.read_text())
    assert "calc · wastes=4 · 1 run, 1 file" in page.headings
    assert "calc · wastes=3 · 1 run, 1 file" in page.headings
    assert not any(heading.startswith("Paired") for heading in page.headings)


@pytest.mark.parametrize(
    "name, code, message",
    [
        ("report.pdf", 2, "Error: {out}: a report is .html or .md"),  # as typed
        ("report.html", 1, "Error: {out} exists; use --overwrite to replace it"),
    ],
)
def test_bad_outputs_are_refused_in_one_line(tmp_path, name, code, message):
    a, _ = known_pair(tmp_path)
    out = tmp_path / name
    if name.endswith(".html"):
        out.write_text("mine")
    result = sim("report", a, "--out", out)
    assert result.exit_code == code
    assert result.output.strip() == message.format(out=out)
    assert not out.exists() or out.read_text() == "mine"


def test_bad_inputs_write_no_report(tmp_path):
    from test_compare import bad_inputs

    for args, line in bad_inputs(tmp_path):
        for out in (tmp_path / "r.html", tmp_path / "r.md"):
            result = sim("report", *args, "--out", out)
            assert result.exit_code == 1, (args, result.output)
            assert len(result.output.strip().splitlines()) == 1
            if line is not None:
                assert result.output.strip() == line
            assert not out.exists() and not (tmp_path / "r").exists()


def test_markdown_overwrite_replaces_only_the_reports_own_plots(tmp_path):
    a, b = known_pair(tmp_path)
    out = tmp_path / "r.md"
    assert sim("report", a, b, "--out", out).exit_code == 0
    assert (tmp_path / "r" / "difference.png").exists()
    (tmp_path / "r" / "notes.txt").write_text("mine")
    refused = sim("report", a, "--out", out)
    assert refused.output.strip() == f"Error: {out} exists; use --overwrite to replace it"
    assert sim("report", a, "--out", out, "--overwrite").exit_code == 0
    assert "difference.png" not in out.read_text()
    assert (tmp_path / "r" / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [
        "notes.txt",  # the earlier report's difference.png, no longer shown, is gone
        "reach.png",
        "scores.png",
        "win_rate.png",
    ]


def test_a_plot_name_holding_someone_elses_file_is_never_offered_for_overwrite(tmp_path):
    a, _ = known_pair(tmp_path)
    out, mine = tmp_path / "y.md", tmp_path / "y" / "win_rate.png"
    mine.parent.mkdir()
    mine.write_bytes(b"mine")
    line = (
        f"Error: {mine} was not written by sim report; it is never replaced "
        "(name the report otherwise)"
    )
    for extra in ([], ["--overwrite"]):
        result = sim("report", a, "--out", out, *extra)
        assert (result.exit_code, result.output.strip()) == (1, line)
    assert mine.read_bytes() == b"mine" and not out.exists()


def test_markdown_overwrite_removes_only_the_earlier_reports_plots(tmp_path):
    """Plots of groups the new report no longer has go; a plot sim report wrote that the
    earlier report did not show, or a file of a shown plot's name it did not write, stays."""
    folder = mixed_folder(tmp_path / "results")
    out, plots = tmp_path / "r.md", tmp_path / "r"
    assert sim("report", folder, "--out", out).exit_code == 0
    assert len(list(plots.iterdir())) == 15
    (plots / "mine-win_rate.png").write_bytes((plots / "calc-wastes3-win_rate.png").read_bytes())
    (plots / "jokers-max_moves1000-reach.png").write_bytes(PNG_MAGIC + b"someone else's")
    result = sim("report", folder / "calc" / "greedy.parquet", "--out", out, "--overwrite")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in plots.iterdir()) == [
        "jokers-max_moves1000-reach.png",
        "mine-win_rate.png",
        "reach.png",
        "scores.png",
        "win_rate.png",
    ]


def compare_blocks(text):
    """{group heading: [rows of cells]} of sim compare's table, cells split on 2+ spaces."""
    blocks, heading = {}, None
    for line in text.splitlines():
        if " · " in line:
            heading = line
            blocks[heading] = []
        elif line and not line.startswith(("  ", "paired with")):
            blocks[heading].append(re.split(r"\s{2,}", line.strip()))
    return blocks


def report_blocks(page):
    """The same from a report page: each group's tables, its heading before them."""
    blocks, tables = {}, iter(page.tables)
    for heading in page.headings:
        if " · " in heading and not heading.startswith("Report"):
            blocks[heading] = []
            current = heading
        elif heading in ("Runs",) or heading.startswith("Paired with"):
            blocks[current] += next(tables)
    return blocks


@pytest.mark.parametrize("baseline", [None, "greedy"])
def test_report_and_compare_show_the_same_groups_and_figures(tmp_path, baseline):
    folder = mixed_folder(tmp_path / "results")
    chosen = ["--baseline", baseline] if baseline else []
    compared = sim("compare", folder, *chosen)
    out = tmp_path / "mixed.html"
    reported = sim("report", folder, "--out", out, *chosen)
    assert compared.exit_code == 0 and reported.exit_code == 0, reported.output
    from_compare = compare_blocks(compared.stdout)
    page = Page(out.read_text())
    assert list(from_compare) == MIXED_GROUPS
    assert report_blocks(page) == from_compare
    assert page.headings[0] == (
        "Report of 8 runs: calc · wastes=4; calc · wastes=3; jokers · max_moves=1000; "
        "montana · redeals=2 max_moves=5000"
    )
    inputs = page.tables[-1]
    assert inputs[0] == ["game · rules", "run", "file", "seed", "first deal", "deals", "complete",
                         "layout"]  # fmt: skip
    assert ["montana · redeals=2 max_moves=5000", "first", "montana/first-2.parquet", "0", "20",
            "20", "yes", "old"] in inputs  # fmt: skip
    assert len(inputs) == 1 + 10  # the hidden folder's file is not read
    assert reported.stderr.count("note: ") == compared.stderr.count("note: ") == 1


def test_markdown_report_of_several_groups_names_each_groups_plots(tmp_path):
    folder = mixed_folder(tmp_path / "results")
    out = tmp_path / "all.md"
    assert sim("report", folder, "--out", out).exit_code == 0
    names = sorted(p.name for p in (tmp_path / "all").iterdir())
    assert names == sorted(
        f"{group}-{plot}.png"
        for group, plots in [
            ("calc-wastes4", PLOTS),
            ("calc-wastes3", PLOTS[:3]),
            ("jokers-max_moves1000", PLOTS),
            ("montana-redeals2-max_moves5000", PLOTS),
        ]
        for plot in plots
    )
    text = out.read_text()
    assert "](all/montana-redeals2-max_moves5000-difference.png)" in text
    assert "## calc · wastes=3 · 1 run, 1 file" in text


def test_a_run_that_never_wins_gets_a_report_and_an_interval_from_exactly_zero(tmp_path):
    from sim.engine.stats import wilson_interval

    assert wilson_interval(0, 1000)[0] == 0.0 and wilson_interval(1000, 1000)[1] == 1.0
    out = tmp_path / "never.parquet"
    assert sim("calc", "-p", "random", "--wastes", 1, "-n", 300, "-q", "--out", out).exit_code == 0
    result = sim("report", out, "--out", tmp_path / "r.html")
    assert result.exit_code == 0, result.output
