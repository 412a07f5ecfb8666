"""The comparison table as people read it (terminal, Markdown) and as programs read it
(CSV, Parquet, JSON). Machine formats keep every column at full precision; the readable
ones round: percentages to 2-3 significant digits, counts with thousands separators."""

import io
import json
import math
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sim.engine.analysis.output import check_suffix
from sim.engine.compressed import is_compressed_name
from sim.engine.run.request import OTHER_FORMATS

FORMATS = ("table", "csv", "parquet", "json", "markdown")
SUFFIX_FORMATS = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".md": "markdown",
}
# Each format's title and the suffix that names it, as an --out name that does not fit
# is told.
KINDS = {
    "table": ("a text table", ".txt"),
    "csv": ("CSV", ".csv"),
    "parquet": ("Parquet", ".parquet"),
    "json": ("JSON", ".json"),
    "markdown": ("Markdown", ".md"),
}
# Names that promise a format (None: one compare does not write): the comparison is
# never written under the name of another. A .txt holds any text, the table by default.
PROMISED = {s: f for s, f in OTHER_FORMATS.items() if s != ".txt"} | SUFFIX_FORMATS
ABOUT_KEY = b"sim_compare"
MISSING = "–"
FIGURE = re.compile(r"^[+\-<]?\d")


def format_for(path, chosen=None):
    """The format asked for, else the one the output's suffix names (before a
    compression suffix, which check_out_name refuses), else the table."""
    if chosen:
        return chosen
    if path is None:
        return "table"
    plain = path.with_suffix("") if is_compressed_name(path) else path
    return SUFFIX_FORMATS.get(plain.suffix.lower(), "table")


def check_out_name(out, fmt, chosen):
    """Refuse an --out whose name promises another format than fmt, or a compression."""
    writer = f"--format {chosen}" if chosen else "compare"
    check_suffix(out, fmt, writer, PROMISED, KINDS, "--format")


def percent(share, signed=False):
    """45.12%, 1.58%, 0.440%, 0.0192%: two decimals from 1% up, three significant below."""
    if share is None or pd.isna(share):
        return MISSING
    value = 100.0 * share
    sign = "+" if signed and value > 0 else ""
    if value == 0 or abs(value) in (100.0,):
        return f"{sign}{value:.0f}%"
    if abs(value) >= 1:
        return f"{sign}{value:.2f}%"
    digits = max(3, 2 - math.floor(math.log10(abs(value))))
    return f"{sign}{value:.{digits}f}%"


def points(share):
    """A difference of two rates in percentage points, signed."""
    return percent(share, signed=True).replace("%", " pp")


def number(value):
    """A mean: 2 decimals below 100, 1 below 1,000, then whole with separators."""
    if value is None or pd.isna(value):
        return MISSING
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.2f}"


def count(value):
    return MISSING if value is None or pd.isna(value) else f"{int(value):,}"


def p_value(p, log10_p=None):
    """0.412, 4.0e-28; below the smallest float, from its log10: 9.9e-1509 (or <1e-300)."""
    if p is None or pd.isna(p):
        return MISSING
    if p == 0:
        if log10_p is None or pd.isna(log10_p) or math.isinf(log10_p):
            return "<1e-300"
        exponent = math.floor(log10_p)
        mantissa = round(10 ** (log10_p - exponent), 1)
        if mantissa >= 10:
            mantissa, exponent = mantissa / 10, exponent + 1
        return f"{mantissa:.1f}e{exponent}"
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def span(low, high, show):
    """`0.365 – 0.530%`: the unit once, at the end."""
    if pd.isna(low) or pd.isna(high):
        return MISSING
    left, right = show(low), show(high)
    for unit in ("%", " pp"):
        if left.endswith(unit) and right.endswith(unit):
            left = left.removesuffix(unit)
    return f"{left} – {right}"


def group_tables(table):
    """The rows of each (game, rules) group, groups in their order in the table."""
    keys = list(zip(table["game"], table["rules"], strict=True))
    result = []
    for key in dict.fromkeys(keys):
        part = table[[k == key for k in keys]]
        part.attrs = table.attrs
        result.append(part)
    return result


def _shown(table, column):
    """Whether a share or mean column tells anything about these runs: not all empty, and
    for an outcome share, not all zero."""
    values = pd.to_numeric(table[column], errors="coerce")
    if column.endswith("_share"):
        return bool((values.fillna(0) > 0).any())
    return bool(values.notna().any())


def has_unknown(table):
    return "decided" in table and bool((table["decided"] < table["deals"]).any())


def summary_block(table):
    """Headers, rows and notes of the per-run figures of one group."""
    shares = [c for c in table.columns if c.endswith("_share") and _shown(table, c)]
    means = [
        c for c in table.columns if c.endswith("_mean") and c != "score_mean" and _shown(table, c)
    ]
    pooled = "files" in table and (table["files"] > 1).any()
    decided = has_unknown(table)
    bound = "winnable_win_rate" in table and bool(table["winnable_win_rate"].notna().any())
    headers = ["run"] + (["files"] if pooled else []) + ["deals"]
    headers += ["decided"] if decided else []
    headers += ["wins", "win rate", "95% CI"]
    headers += ["winnable", "won of winnable", "95% CI"] if bound else []
    headers += [c.removesuffix("_share") for c in shares]
    headers += ["mean score", "95% CI"] + [
        "mean " + c.removesuffix("_mean").replace("_", " ") for c in means
    ]
    rows = []
    for _, r in table.iterrows():
        row = [r["run"]] + ([count(r["files"])] if pooled else []) + [count(r["deals"])]
        row += [count(r["decided"])] if decided else []
        row += [count(r["wins"]), percent(r["win_rate"])]
        row.append(span(r["win_rate_low"], r["win_rate_high"], percent))
        if bound:
            row += [count(r["winnable"]), percent(r["winnable_win_rate"])]
            row.append(span(r["winnable_low"], r["winnable_high"], percent))
        row += [percent(r[c]) for c in shares]
        row += [number(r["score_mean"]), span(r["score_low"], r["score_high"], number)]
        row += [number(r[c]) for c in means]
        rows.append(row)
    notes = []
    if decided:
        notes.append("win rate over decided deals; an unknown outcome is neither won nor lost")
    if bound:
        bounds = table["bound"].dropna().iloc[0]
        budget = "their budgets" if " or " in bounds else "its budget"
        notes.append(
            f"winnable: the deals won by {bounds}, exact within {budget} (a deal left "
            "unknown is not counted); won of winnable: each run's win rate among them"
        )
    return headers, rows, notes


def baseline_of(table):
    """The label of the baseline of one group's rows, or "" when the group is not paired."""
    names = [name for name in table["baseline"] if isinstance(name, str) and name]
    return names[0] if names else ""


def paired_block(table):
    """Headers, rows and notes of the paired comparison of one group with its baseline."""
    baseline = baseline_of(table)
    others = table[table["baseline"] == baseline]
    undecided = "undecided_pairs" in table and bool((others["undecided_pairs"] > 0).any())
    headers = ["run", "paired"]
    headers += ["undecided"] if undecided else []
    headers += ["both won", "run only", f"{baseline} only", "neither"]
    headers += ["difference", "95% CI", "McNemar p"]
    rows, notes = [], []
    base_deals = table.loc[table["run"] == baseline, "deals"].iloc[0]
    for _, r in others.iterrows():
        row = [r["run"], count(r["paired"])]
        row += [count(r["undecided_pairs"])] if undecided else []
        row += [count(r[c]) for c in ("both_won", "only_policy", "only_baseline", "neither")]
        row += [points(r["win_rate_diff"]), span(r["diff_low"], r["diff_high"], points)]
        row.append(p_value(r["mcnemar_p"], r.get("mcnemar_log10_p")))
        rows.append(row)
        if r["paired"] != r["deals"] or r["paired"] != base_deals:
            notes.append(
                f"{r['run']} played {r['deals']:,} deals and {baseline} {base_deals:,}: "
                f"{r['paired']:,} deals paired"
            )
    if undecided:
        notes.append("undecided: paired deals whose outcome is unknown in either run, left out")
    notes.append(
        f"difference = run − {baseline} in win rate on the paired deals; "
        "95% CI: Newcombe hybrid score interval; p: exact McNemar test"
    )
    return headers, rows, notes


def unpaired_note(table):
    """Why a group of several runs has no paired comparison, or "" when it has one."""
    if len(table) < 2 or baseline_of(table):
        return ""
    return f"not paired: no run here is the baseline {table.attrs.get('baseline', '')!r}"


def title(table):
    """`calc · wastes=4 · 3 runs, 4 files`: the group, and what was pooled into it."""
    game, rules = table["game"].iloc[0], table["rules"].iloc[0]
    files = _group_files(table)
    runs = f"{len(table)} run{'s' if len(table) != 1 else ''}"
    return " · ".join(x for x in (game, rules, f"{runs}, {files} file{'s' * (files != 1)}") if x)


def _group_files(table):
    """The files pooled into the group's runs: from its column, so that a table read back
    from CSV, which keeps no `about`, is headed as it was printed."""
    return int(table["group_files"].iloc[0])


def blocks(table):
    """(heading, headers, rows, notes) of one group: its runs, then its paired comparison."""
    result = [("", *summary_block(table))]
    if baseline_of(table):
        result.append((f"paired with {baseline_of(table)}", *paired_block(table)))
    elif unpaired_note(table):
        result.append(("", [], [], [unpaired_note(table)]))
    return result


def figure_columns(headers, rows):
    """Per column, whether it holds figures (aligned right) rather than text."""
    columns = list(zip(headers, *rows, strict=True))
    return [
        i > 0 and all(FIGURE.match(str(cell)) or cell == MISSING for cell in column[1:])
        for i, column in enumerate(columns)
    ]


def to_text(table):
    """Aligned columns for a terminal, one block per group: text left, figures right."""
    lines = []
    for part in group_tables(table):
        lines += [""] if lines else []
        lines.append(title(part))
        for heading, headers, rows, notes in blocks(part):
            if heading:
                lines += ["", heading]
            if headers:
                lines += _aligned(headers, rows)
            lines += [f"  {note}" for note in notes]
    return "\n".join(lines) + "\n"


def _aligned(headers, rows):
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows, strict=True)]
    right = figure_columns(headers, rows)
    lines = []
    for row in [headers, *rows]:
        cells = [
            str(cell).rjust(width) if is_figure else str(cell).ljust(width)
            for cell, width, is_figure in zip(row, widths, right, strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def to_markdown(table, heading_level=2):
    lines = []
    for part in group_tables(table):
        lines += [""] if lines else []
        lines.append(f"{'#' * heading_level} {title(part)}")
        for heading, headers, rows, notes in blocks(part):
            if heading:
                lines += ["", f"{'#' * (heading_level + 1)} {heading}"]
            if headers:
                lines += ["", markdown_table(headers, rows)]
            if notes:
                lines += [""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def markdown_table(headers, rows):
    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    right = figure_columns(headers, rows)
    rule = "|" + "|".join("---:" if is_figure else ":---" for is_figure in right) + "|"
    return "\n".join([line(headers), rule] + [line(row) for row in rows])


def to_json(table):
    records = json.loads(table.to_json(orient="records", double_precision=15))
    return json.dumps({"about": table.attrs, "runs": records}, indent=2, ensure_ascii=False) + "\n"


def to_csv(table):
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, float_format="%.15g", lineterminator="\n")
    return buffer.getvalue()


def write_parquet(table, path):
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    about = {ABOUT_KEY: json.dumps(table.attrs).encode()}
    arrow = arrow.replace_schema_metadata((arrow.schema.metadata or {}) | about)
    pq.write_table(arrow, path)


def render(table, fmt):
    """The text of a readable or text format."""
    return {"table": to_text, "csv": to_csv, "json": to_json, "markdown": to_markdown}[fmt](table)
