"""Reports of runs: one self-contained HTML page, or Markdown with its plots beside it.

The plots are drawn with matplotlib's object API on the Agg canvas under a fixed style
(matplotlib's defaults, whatever the user's matplotlibrc says), and saved without the
software stamp, so the same inputs give byte-identical images and pages.
"""

import base64
import html
import io
import os
import re
from pathlib import Path

import numpy as np
from matplotlib import style
from matplotlib.figure import Figure

from sim.engine.analysis import formats
from sim.engine.analysis.compare import baselines, comparison, ranked
from sim.engine.analysis.inputs import CONVERT_HINT, AnalysisError, groups_of
from sim.engine.analysis.intervals import mean_interval
from sim.engine.analysis.output import check_writable, write_together
from sim.engine.analysis.report_deals import (
    DEFAULT_LIMIT,
    deal_lists,
    html_lists,
    markdown_lists,
    page_writes,
)
from sim.engine.analysis.sweeps import PLOT_SUFFIX, sweep_figure, sweep_series
from sim.engine.compressed import is_compressed_name
from sim.engine.games import registered_games
from sim.engine.run.stop_signals import Stopped

STYLE = {
    "figure.figsize": (8.0, 4.5),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 10,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "svg.hashsalt": "sim-report",
}
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip
PNG_METADATA = {"Software": None, "Source": "sim report"}  # marks the files it may replace
PNG_MARK = b"tEXtSource\x00sim report"
SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown"}


def writer_for(out):
    out = Path(out)
    if is_compressed_name(out) and out.with_suffix("").suffix.lower() in SUFFIXES:
        plain = out.with_suffix("")
        raise AnalysisError(f"--out {out}: a report is written uncompressed; write {plain}")
    kind = SUFFIXES.get(out.suffix.lower())
    if kind is None:
        raise AnalysisError(f"{out}: a report is .html or .md")
    return write_html if kind == "html" else write_markdown


# Every plot a report can draw for a group, beside one per parameter sweep (named
# `<policy>-<parameter>-sweep`); a Markdown report writes these (and only these) files,
# prefixed by the group's name when the report has several groups.
PLOT_NAMES = ("win_rate", "scores", "reach", "difference")


def plots_folder(out):
    """Where a Markdown report's images go: a folder named after it (report.md -> report/)."""
    out = Path(out)
    return out.with_suffix("")


def plot_prefixes(runs=None):
    """Per group of runs, how its plot files begin: "" for a report of one group, else the
    group's name (`calc-wastes4-`)."""
    groups = groups_of(runs) if runs else []
    if len(groups) < 2:
        return [""] * max(len(groups), 1)
    prefixes = []
    for group in groups:
        slug = re.sub(r"[^A-Za-z0-9_.]+", "-", f"{group.game} {group.rules}".replace("=", ""))
        slug = slug.strip("-") or "group"
        prefix, number = f"{slug}-", 2
        while prefix in prefixes:
            prefix, number = f"{slug}-{number}-", number + 1
        prefixes.append(prefix)
    return prefixes


def plot_paths(out, runs=None):
    """The files a Markdown report of runs may write beside it: report/<plot>.png, or
    report/<group>-<plot>.png for a report of several groups."""
    folder = plots_folder(out)
    groups = groups_of(runs) if runs else [None]
    return [
        folder / f"{prefix}{name}.png"
        for prefix, group in zip(plot_prefixes(runs), groups, strict=True)
        for name in _plot_names(group)
    ]


def _plot_names(group):
    sweeps = sweep_series(group.runs) if group else []
    return PLOT_NAMES + tuple(sweep.name for sweep in sweeps)


def check_outputs(out, overwrite, runs=None):
    """Refuse, before any work, a report that would replace what it must not; with runs,
    the plot files a Markdown report of them writes too.

    A Markdown report's folder may already hold other files: they are left alone, and
    only the report's own plot files are replaced (with --overwrite)."""
    if runs is None:
        check_writable(out, overwrite)
    if Path(out).suffix.lower() != ".md":
        return
    folder = plots_folder(out)
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise AnalysisError(f"{folder} exists and is not a folder; the report's plots go there")
        if runs is None:
            return
        for path in plot_paths(out, runs):
            # Before the --overwrite check: a file that is not the report's own is never
            # replaced, and --overwrite must not be offered for it.
            if path.is_file() and not _written_by_report(path):
                raise AnalysisError(
                    f"{path} was not written by sim report; it is never replaced "
                    "(name the report otherwise)"
                )
            check_writable(path, overwrite, what="a plot of the report")


def _written_by_report(path):
    """Whether a file is a plot sim report wrote: a regular file with its mark (PNG_MARK,
    within the PNG's first chunks)."""
    if path.is_symlink() or not path.is_file():
        return False
    with open(path, "rb") as file:
        return PNG_MARK in file.read(4096)


def earlier_plots(out):
    """The plot files that the Markdown report at out shows from its folder and that sim
    report wrote (their mark says so): the report names what it wrote, so a file of the
    folder that it does not show, even a plot, is never taken for one of its own."""
    out, folder = Path(out), plots_folder(out)
    if not out.is_file() or not folder.is_dir():
        return []
    plot = rf"[A-Za-z0-9_.\-]*(?:{'|'.join((*PLOT_NAMES, PLOT_SUFFIX))})\.png"
    link = re.compile(rf"!\[.*\]\({re.escape(folder.name)}/({plot})\)")
    text = out.read_text(encoding="utf-8", errors="replace")
    names = dict.fromkeys(m.group(1) for m in map(link.fullmatch, text.splitlines()) if m)
    return [folder / name for name in names if _written_by_report(folder / name)]


class Report:
    """What a report shows: the comparison table, and per (game, rules) group its part of
    the table and its plots. The table is sim compare's, with the same baselines."""

    def __init__(self, runs, baseline_name=None):
        self.runs = runs
        self.table = ranked(comparison(runs, baseline_name))  # as sim compare lists them
        groups = groups_of(runs)
        parts = formats.group_tables(self.table)
        chosen = baselines(groups, baseline_name)
        self.groups = [
            GroupReport(group, part, base, prefix)
            for group, part, base, prefix in zip(
                groups, parts, chosen, plot_prefixes(runs), strict=True
            )
        ]

    @property
    def title(self):
        if len(self.groups) == 1:
            (group,) = self.groups
            return f"{group.game} report: {', '.join(run.label for run in group.runs)}"
        return f"Report of {len(self.runs)} runs: {'; '.join(g.name for g in self.groups)}"


class GroupReport:
    """The part of a report about one game under one set of rules."""

    def __init__(self, group, table, baseline, prefix=""):
        self.game, self.runs, self.table = group.game, group.runs, table
        self.name = group.title  # what the plots say
        self.heading = formats.title(table)  # what sim compare heads the group with
        self.baseline = baseline
        self.paired = baseline is not None and len(self.runs) > 1
        self.prefix = prefix
        self.colors = {run.label: COLORS[i % len(COLORS)] for i, run in enumerate(self.runs)}
        self.sweeps = sweep_series(self.runs)
        self.plots = self._draw()

    def file_name(self, plot):
        """A plot's file name in a Markdown report's folder."""
        return f"{self.prefix}{plot}.png"

    def _draw(self):
        with style.context(["default", STYLE]):
            plots = {
                "win_rate": (
                    "Win rate per run, with 95% Wilson intervals",
                    self._win_rate_figure(),
                ),
                **{sweep.name: self._sweep_plot(sweep) for sweep in self.sweeps},
                "scores": ("Distribution of scores", self._scores_figure()),
                "reach": ("Share of deals reaching each score", self._reach_figure()),
            }
            if self.paired:
                plots["difference"] = (
                    f"Difference in win rate with {self.baseline.label}, paired deals",
                    self._difference_figure(),
                )
            return {
                name: (f"{self.name}: {caption}", _png(figure))
                for name, (caption, figure) in plots.items()
            }

    def _win_rate_figure(self):
        table = self.table
        figure = Figure(figsize=(8.0, 1.5 + 0.45 * len(table)))
        axes = figure.subplots()
        y = np.arange(len(table))[::-1]
        rate = 100 * table["win_rate"].to_numpy(float)
        low = 100 * table["win_rate_low"].to_numpy(float)
        high = 100 * table["win_rate_high"].to_numpy(float)
        for i, label in enumerate(table["run"]):
            if np.isnan(rate[i]):
                continue
            axes.errorbar(
                rate[i], y[i], xerr=[[rate[i] - low[i]], [high[i] - rate[i]]], fmt="o",
                color=self.colors[label], capsize=4, markersize=6,
            )  # fmt: skip
            axes.annotate(
                formats.percent(rate[i] / 100), (high[i], y[i]), xytext=(6, 0),
                textcoords="offset points", va="center", fontsize=9,
            )  # fmt: skip
        axes.set_yticks(y, table["run"])
        axes.set_ylim(-0.7, len(table) - 0.3)
        axes.set_xlim(left=0, right=max(np.nan_to_num(high).max() * 1.2, 1e-3))
        axes.set_xlabel(self._rate_label())
        axes.set_title(f"{self.name}\nwin rate per run (95% Wilson interval)")
        figure.tight_layout()
        return figure

    def _rate_label(self):
        decided = "decided deals" if formats.has_unknown(self.table) else "deals"
        return f"win rate, % of {decided}"

    def _sweep_plot(self, sweep):
        caption = f"Win rate of {sweep.policy} against {sweep.parameter}, 95% Wilson intervals"
        return caption, sweep_figure(sweep, self.name, self._rate_label(), COLORS)

    def _score_meaning(self):
        """`score (cards on the foundations)`, from the game's description of the column.

        The game's declaration is enough (engine.games): its compiled rules stay unloaded."""
        game = registered_games().get(self.game)
        meaning = next((c.help for c in game.columns if c.name == "score"), "") if game else ""
        meaning = meaning.split(",")[0].strip()
        return f"score ({meaning})" if meaning else "score"

    def _score_range(self):
        low = min(int(run.score.min()) for run in self.runs if run.deals)
        high = max(int(run.score.max()) for run in self.runs if run.deals)
        return np.arange(low, high + 1)

    def _score_counts(self, run, scores):
        return np.bincount(run.score.astype(np.int64) - scores[0], minlength=len(scores))

    def _scores_figure(self):
        figure = Figure()
        axes = figure.subplots()
        scores = self._score_range()
        for run in self.runs:
            share = 100 * self._score_counts(run, scores) / max(run.deals, 1)
            mean = formats.number(mean_interval(run.score)[0])
            axes.plot(scores, share, drawstyle="steps-mid", color=self.colors[run.label],
                      label=f"{run.label} (mean {mean})")  # fmt: skip
        axes.set_xlabel(self._score_meaning())
        axes.set_ylabel("share of deals, %")
        axes.set_title(f"{self.name}\ndistribution of final scores")
        axes.set_ylim(bottom=0)
        axes.legend()
        figure.tight_layout()
        return figure

    def _reach_figure(self):
        figure = Figure()
        axes = figure.subplots()
        scores = self._score_range()
        for run in self.runs:
            at_least = np.cumsum(self._score_counts(run, scores)[::-1])[::-1]
            share = 100 * at_least / max(run.deals, 1)
            shown = share > 0
            axes.plot(scores[shown], share[shown], marker=".", color=self.colors[run.label],
                      label=run.label)  # fmt: skip
        axes.set_yscale("log")
        axes.set_xlabel(self._score_meaning().replace("score", "score reached", 1))
        axes.set_ylabel("deals reaching at least this score, % (log scale)")
        axes.set_title(f"{self.name}\nhow far each run got")
        axes.legend()
        figure.tight_layout()
        return figure

    def _difference_figure(self):
        others = self.table[self.table["baseline"] == self.baseline.label]
        figure = Figure(figsize=(8.0, 1.7 + 0.45 * len(others)))
        axes = figure.subplots()
        y = np.arange(len(others))[::-1]
        diff = 100 * others["win_rate_diff"].to_numpy(float)
        low = 100 * others["diff_low"].to_numpy(float)
        high = 100 * others["diff_high"].to_numpy(float)
        for i, label in enumerate(others["run"]):
            if np.isnan(diff[i]):
                continue
            axes.errorbar(
                diff[i], y[i], xerr=[[diff[i] - low[i]], [high[i] - diff[i]]], fmt="o",
                color=self.colors[label], capsize=4, markersize=6,
            )  # fmt: skip
            axes.annotate(
                formats.points(diff[i] / 100), (high[i], y[i]), xytext=(6, 0),
                textcoords="offset points", va="center", fontsize=9,
            )  # fmt: skip
        axes.axvline(0, color="black", linewidth=0.8)
        axes.set_yticks(y, others["run"])
        axes.set_ylim(-0.7, len(others) - 0.3)
        axes.set_xlabel(f"win rate minus {self.baseline.label}'s, percentage points")
        axes.set_title(
            f"{self.name}\npaired difference with {self.baseline.label} (95% Newcombe interval)"
        )
        figure.tight_layout()
        return figure


def _png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata=PNG_METADATA)
    return buffer.getvalue()


def write_html(runs, out, baseline_name=None, overwrite=False, deal_pages=DEFAULT_LIMIT):
    """report.html, and beside it the replay pages of the deals worth a look
    (engine.analysis.report_deals: at most deal_pages of each kind per group)."""
    report = Report(runs, baseline_name)
    _find_deals(report, out, overwrite, deal_pages)
    page = html_page(report)
    writes = [(Path(out), lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))]
    write_together(writes + page_writes(report.deal_lists))
    return Path(out)


def _find_deals(report, out, overwrite, limit):
    report.out = Path(out)
    report.deal_lists = deal_lists(report, out, overwrite, limit)


def write_markdown(runs, out, baseline_name=None, overwrite=False, deal_pages=DEFAULT_LIMIT):
    """report.md, and its plots as report/<name>.png (report/<group>-<name>.png when the
    runs are of several games or rules).

    Each plot file replaces only a file of the same name, and the plots of the report it
    replaces that it does not draw again are removed, so the folder matches it; nothing
    else in the folder is touched, so a report named after a folder of results never
    harms them."""
    out = Path(out)
    report = Report(runs, baseline_name)
    _find_deals(report, out, overwrite, deal_pages)
    folder = plots_folder(out)
    images = {
        (i, name): f"{folder.name}/{part.file_name(name)}"
        for i, part in enumerate(report.groups)
        for name in part.plots
    }
    text = markdown_page(report, images)
    writes = [
        (folder / part.file_name(name), _bytes_writer(png))
        for part in report.groups
        for name, (_, png) in part.plots.items()
    ]
    writes.append((out, lambda tmp: Path(tmp).write_text(text, encoding="utf-8")))
    writes += page_writes(report.deal_lists)
    drawn = {path for path, _ in writes}
    stale = [path for path in earlier_plots(out) if path not in drawn]
    try:
        write_together(writes)
    except Stopped as stopped:
        if stopped.written:  # the new report is in place: its folder must match it
            _remove(stale)
        raise
    _remove(stale)
    return out


def _remove(paths):
    for path in paths:
        path.unlink(missing_ok=True)


def _bytes_writer(data):
    return lambda tmp: Path(tmp).write_bytes(data)


def _inputs_rows(report):
    files = [Path(path) for run in report.runs for path in run.files]
    base = Path(os.path.commonpath([path.parent.absolute() for path in files]))
    old = any(run.old_files for run in report.runs)
    rows = []
    for part in report.groups:
        for run in part.runs:
            for path, meta in zip(run.files, run.metas, strict=True):
                row = [
                    part.name,
                    run.label,
                    Path(path).absolute().relative_to(base).as_posix(),
                    str(meta.get("seed", "")),
                    formats.count(meta.get("start")),
                    formats.count(meta.get("n_done")),
                    "yes" if meta.get("completed", True) else "no",
                ]
                rows.append(row + (["old" if path in run.old_files else "current"] if old else []))
    headers = ["game · rules", "run", "file", "seed", "first deal", "deals", "complete"]
    notes = [OLD_NOTE] if old else []
    return headers + (["layout"] if old else []), rows, notes


OLD_NOTE = (
    "layout old: written before rows carried game, rules and params; read by the file's "
    f"run description ({CONVERT_HINT} converts one)"
)


def _sections(report):
    """(level, heading, kind, content) in page order; kind is table, plot or note, and a
    plot's content is (group number, plot name)."""
    sections = []
    for i, part in enumerate(report.groups):
        sections.append((2, part.heading, "note", ""))
        headers, rows, notes = formats.summary_block(part.table)
        sections.append((3, "Runs", "table", (headers, rows, notes)))
        sections.append((3, "", "plot", (i, "win_rate")))
        for number, sweep in enumerate(part.sweeps):
            heading = "" if number else "Parameter sweeps"
            sections.append((3, heading, "plot", (i, sweep.name)))
        sections.append((3, "Scores", "plot", (i, "scores")))
        sections.append((3, "", "plot", (i, "reach")))
        if part.paired:
            headers, rows, notes = formats.paired_block(part.table)
            heading = f"Paired with {part.baseline.label}"
            sections.append((3, heading, "table", (headers, rows, notes)))
            sections.append((3, "", "plot", (i, "difference")))
        elif formats.unpaired_note(part.table):
            sections.append((3, "Paired comparison", "note", formats.unpaired_note(part.table)))
        if getattr(report, "deal_lists", None) and report.deal_lists[i]:
            sections.append((3, "", "deals", i))
    sections.append((2, "Inputs", "table", _inputs_rows(report)))
    return sections


CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; color: #222;
       padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #ddd; text-align: right; }
th.text, td.text { text-align: left; }
th { border-bottom: 2px solid #999; }
figure { margin: 1rem 0; } img { max-width: 100%; }
figcaption, .note { color: #555; font-size: 0.9rem; }
"""


def html_page(report):
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(report.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{e(report.title)}</h1>",
    ]
    for level, heading, kind, content in _sections(report):
        if heading:
            parts.append(f"<h{level}>{e(heading)}</h{level}>")
        if kind == "table":
            parts.append(_html_table(*content))
        elif kind == "plot":
            group, name = content
            caption, png = report.groups[group].plots[name]
            data = base64.b64encode(png).decode("ascii")
            parts.append(
                f'<figure><img alt="{e(caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{e(caption)}</figcaption></figure>"
            )
        elif kind == "deals":
            parts.append(html_lists(report.deal_lists[content], report.out))
        elif content:
            parts.append(f'<p class="note">{e(content)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_table(headers, rows, notes):
    e = html.escape
    text = [not figure for figure in formats.figure_columns(headers, rows)]

    def cells(tag, values):
        return "".join(
            f'<{tag} class="text">{e(str(v))}</{tag}>' if is_text else f"<{tag}>{e(str(v))}</{tag}>"
            for v, is_text in zip(values, text, strict=True)
        )

    head = f"<tr>{cells('th', headers)}</tr>"
    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    notes_html = "".join(f'<p class="note">{e(note)}</p>' for note in notes)
    return f"<table><thead>{head}</thead><tbody>{body}</tbody></table>{notes_html}"


def markdown_page(report, images):
    lines = [f"# {report.title}"]
    for level, heading, kind, content in _sections(report):
        if heading:
            lines += ["", f"{'#' * level} {heading}"]
        if kind == "table":
            headers, rows, notes = content
            lines += ["", formats.markdown_table(headers, rows)]
            lines += [""] + [f"- {note}" for note in notes] if notes else []
        elif kind == "plot":
            group, name = content
            caption, _ = report.groups[group].plots[name]
            lines += ["", f"![{caption}]({images[content]})"]
        elif kind == "deals":
            lines += markdown_lists(report.deal_lists[content], report.out)
        elif content:
            lines += ["", content]
    return "\n".join(lines) + "\n"
