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

FORMATS = ("table", "csv", "parquet", "json", "markdown")
SUFFIX_FORMATS = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".md": "markdown"}
ABOUT_KEY = b"sim_compare"
MISSING = "–"
FIGURE = re.compile(r"^[+\-<]?\d")


def format_for(path, chosen=None):
    """The format asked for, else the one the output's suffix names, else the table."""
    if chosen:
        return chosen
    if path is None:
        return "table"
    return SUFFIX_FORMATS.get(path.suffix.lower(), "table")


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


def p_value(p):
    if p is None or pd.isna(p):
        return MISSING
    if p == 0:
        return "<1e-300"
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


def summary_block(table):
    """Headers, rows and notes of the per-run figures."""
    shares = [c for c in table.columns if c.endswith("_share")]
    means = [c for c in table.columns if c.endswith("_mean") and c not in ("score_mean",)]
    pooled = "files" in table and (table["files"] > 1).any()
    headers = ["run"] + (["files"] if pooled else []) + ["deals"]
    headers += ["decided"] if "decided" in table else []
    headers += ["wins", "win rate", "95% CI"]
    headers += [c.removesuffix("_share") for c in shares]
    headers += ["mean score", "95% CI"] + [
        "mean " + c.removesuffix("_mean").replace("_", " ") for c in means
    ]
    rows = []
    for _, r in table.iterrows():
        row = [r["run"]] + ([count(r["files"])] if pooled else []) + [count(r["deals"])]
        row += [count(r["decided"])] if "decided" in table else []
        row += [count(r["wins"]), percent(r["win_rate"])]
        row.append(span(r["win_rate_low"], r["win_rate_high"], percent))
        row += [percent(r[c]) for c in shares]
        row += [number(r["score_mean"]), span(r["score_low"], r["score_high"], number)]
        row += [number(r[c]) for c in means]
        rows.append(row)
    notes = []
    if "decided" in table:
        notes.append("win rate over decided deals; an unknown outcome is neither won nor lost")
    return headers, rows, notes


def paired_block(table):
    """Headers, rows and notes of the paired comparison with the baseline."""
    baseline = table.attrs.get("baseline", "")
    others = table[table["baseline"].fillna("") != ""]
    headers = ["run", "paired"]
    headers += ["undecided"] if "undecided_pairs" in table else []
    headers += ["both won", "run only", f"{baseline} only", "neither"]
    headers += ["difference", "95% CI", "McNemar p"]
    rows, notes = [], []
    base_deals = table.loc[table["run"] == baseline, "deals"].iloc[0]
    for _, r in others.iterrows():
        row = [r["run"], count(r["paired"])]
        row += [count(r["undecided_pairs"])] if "undecided_pairs" in table else []
        row += [count(r[c]) for c in ("both_won", "only_policy", "only_baseline", "neither")]
        row += [points(r["win_rate_diff"]), span(r["diff_low"], r["diff_high"], points)]
        row.append(p_value(r["mcnemar_p"]))
        rows.append(row)
        if r["paired"] != r["deals"] or r["paired"] != base_deals:
            notes.append(
                f"{r['run']} played {r['deals']:,} deals and {baseline} {base_deals:,}: "
                f"{r['paired']:,} deals paired"
            )
    notes.append(
        f"difference = run − {baseline} in win rate on the paired deals; "
        "95% CI: Newcombe hybrid score interval; p: exact McNemar test"
    )
    return headers, rows, notes


def title(table):
    rules = table["rules"].unique()
    rules_text = rules[0] if len(rules) == 1 else "rules differ between runs"
    return " · ".join(x for x in (table.attrs.get("game", ""), rules_text) if x)


def blocks(table):
    result = [("", *summary_block(table))]
    if table.attrs.get("baseline"):
        result.append((f"paired with {table.attrs['baseline']}", *paired_block(table)))
    return result


def figure_columns(headers, rows):
    """Per column, whether it holds figures (aligned right) rather than text."""
    columns = list(zip(headers, *rows, strict=True))
    return [
        i > 0 and all(FIGURE.match(str(cell)) or cell == MISSING for cell in column[1:])
        for i, column in enumerate(columns)
    ]


def to_text(table):
    """Aligned columns for a terminal: text left, figures right."""
    lines = [title(table)]
    for heading, headers, rows, notes in blocks(table):
        if heading:
            lines += ["", heading]
        widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows, strict=True)]
        right = figure_columns(headers, rows)
        for row in [headers, *rows]:
            cells = [
                str(cell).rjust(width) if is_figure else str(cell).ljust(width)
                for cell, width, is_figure in zip(row, widths, right, strict=True)
            ]
            lines.append("  ".join(cells).rstrip())
        lines += [f"  {note}" for note in notes]
    return "\n".join(lines) + "\n"


def to_markdown(table, heading_level=2):
    lines = [f"{'#' * heading_level} {title(table)}"]
    for heading, headers, rows, notes in blocks(table):
        if heading:
            lines += ["", f"{'#' * (heading_level + 1)} {heading}"]
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
