"""The findings of the documentation: tables and plots made from the published runs' counts.

The published runs are long (the Montana solver's took hours on two cores) and their
result files are not kept in the repository. What the findings need of them is kept
instead, in two small files beside this script:

- findings/runs.csv: one line per run: the table it belongs to, its game, rules, policy
  and parameters, seed, deals, and how many were won, proved unwinnable, left unknown
  and capped; the mean score; the speed as measured (text: it comes from `sim bench`
  and the benchmark scripts, not from the run).
- findings/scores.csv: how many deals of a run ended at each score, for the runs whose
  rows were at hand (the heuristics': a minute or two to play again).

From those this script computes every win rate with its 95% Wilson interval, writes the
Markdown tables the pages include (findings/TABLE.md), the headline table of README.md
(between its `findings:headline` markers) and the plots (img/findings-*.png):

    python docs/findings.py                  # tables, README block and plots: a few seconds
    python docs/findings.py --check          # exit 1 if a committed table is not the data's
    python docs/findings.py --record TABLE FILE.parquet...   # runs from result files, then all

`--record` reads result files (one run per setting in them, its deals counted once),
adds or replaces their lines in the data files under TABLE, and writes everything again.
The plots carry the hash of the data they were drawn from (the PNG text key `Data`), so a
test can tell a plot drawn from other data without comparing pixels.
"""

import argparse
import csv
import hashlib
import io
import math
import re
import sys
from dataclasses import dataclass, fields
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "findings"
RUNS = DATA / "runs.csv"
SCORES = DATA / "scores.csv"
IMAGES = HERE / "img"
README = ROOT / "README.md"
HEADLINE_START = "<!-- findings:headline (made by docs/findings.py: do not edit) -->"
HEADLINE_END = "<!-- /findings:headline -->"
DASH = "—"
GAME_TITLES = {"calc": "Calculation", "montana": "Montana", "jokers": "Jokers"}
PILES = {"wastes=4": "4 piles", "wastes=3": "3 piles"}


@dataclass
class Run:
    """One published run: its counts, as findings/runs.csv holds them."""

    table: str
    game: str
    rules: str
    policy: str
    params: str
    seed: int
    deals: int
    won: int
    unwinnable: int
    unknown: int
    capped: int
    mean_score: str  # as published, "" when none was
    speed: str  # as measured, in words

    def __post_init__(self):
        for name in ("seed", "deals", "won", "unwinnable", "unknown", "capped"):
            setattr(self, name, int(getattr(self, name)))

    @property
    def key(self):
        return (self.table, self.game, self.rules, self.policy, self.params, self.seed)

    @property
    def proved_lost(self):
        """Deals an exact policy proved lost: all it neither won nor left undecided (those
        with no legal move at all end `lost` before any search)."""
        return self.deals - self.won - self.unknown - self.capped


COLUMNS = [f.name for f in fields(Run)]
SCORE_COLUMNS = ["game", "rules", "policy", "params", "seed", "score", "deals"]


def read_runs(path=RUNS):
    with open(path, newline="") as file:
        return [Run(**row) for row in csv.DictReader(file)]


def read_scores(path=SCORES):
    """{(game, rules, policy, params, seed): {score: deals}}."""
    scores = {}
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            key = (row["game"], row["rules"], row["policy"], row["params"], int(row["seed"]))
            scores.setdefault(key, {})[int(row["score"])] = int(row["deals"])
    return scores


def data_hash():
    """A short hash of the data files: what a plot says it was drawn from."""
    digest = hashlib.sha256(RUNS.read_bytes() + SCORES.read_bytes())
    return digest.hexdigest()[:16]


# Numbers as the tables print them.


def wilson(wins, deals, z=1.959964):
    """The 95% Wilson score interval of wins out of deals, as sim compare gives it."""
    from sim.engine.stats import wilson_interval

    return wilson_interval(wins, deals, z)


def percent(share):
    """45.12%, 1.58%, 0.440%, 0.0192%: as sim compare prints a rate."""
    from sim.engine.analysis.formats import percent as product_percent

    return product_percent(share)


def rate(wins, deals, bold=False):
    """`90.76% (90.18–91.31%)`: a share with its 95% Wilson interval."""
    low, high = wilson(wins, deals)
    share = percent(wins / deals)
    share = f"**{share}**" if bold else share
    return f"{share} ({percent(low)[:-1]}–{percent(high)})"


def count(value):
    return f"{value:,}"


def markdown_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def policy_label(run):
    name = f"`{run.policy}`"
    return f"{name}, {run.params}" if run.params else name


# The tables, one function each: runs of the table in data order -> Markdown.


def heuristics_by_piles(runs, speed_header):
    """Calculation: one line per policy, its four-pile and three-pile runs side by side."""
    policies = list(dict.fromkeys(run.policy for run in runs))
    rows = []
    for policy in policies:
        row = [f"`{policy}`"]
        speeds = []
        for rules in PILES:
            run = next((r for r in runs if r.policy == policy and r.rules == rules), None)
            if run is None:
                row += [DASH, DASH]
                continue
            strong = run.table == "calc-strong" and policy in BOLD_POLICIES
            cell = rate(run.won, run.deals, bold=strong)
            if policy in EXACT_POLICIES:
                cell += f", {outcome_words(run)}"
            row += [cell, run.mean_score or DASH]
            speeds.append((PILES[rules], run.speed))
        row.append(joined_speeds(speeds))
        rows.append(row)
    headers = ["policy", "4 piles: win rate (95% CI)", "mean score"]
    headers += ["3 piles: win rate (95% CI)", "mean score", speed_header]
    return markdown_table(headers, rows)


def joined_speeds(speeds):
    """One speed when the runs share it, else each with its rules: `4 piles: 23; 3 piles: 29`."""
    distinct = list(dict.fromkeys(speed for _, speed in speeds if speed))
    if len(distinct) <= 1:
        return distinct[0] if distinct else DASH
    return "; ".join(f"{rules}: {speed}" for rules, speed in speeds if speed)


def outcome_words(run):
    """`none unknown, none proved lost`; counts where there are some."""

    def said(number, what):
        return f"none {what}" if number == 0 else f"{count(number)} {what}"

    return f"{said(run.unknown, 'unknown')}, {said(run.proved_lost, 'proved lost')}"


BOLD_POLICIES = {"mc", "oracle"}
EXACT_POLICIES = {"oracle"}


def calc_heuristics(runs):
    return heuristics_by_piles(runs, "deals/s per core")


def calc_strong(runs):
    return heuristics_by_piles(runs, "deals/s, 2 workers")


def montana_table(runs):
    rows = []
    for run in runs:
        bold = run.policy in ("search", "solver")
        rows.append([
            policy_label(run), count(run.seed), count(run.deals), rate(run.won, run.deals, bold),
            run.mean_score or DASH, count(run.capped), run.speed or DASH,
        ])  # fmt: skip
    headers = ["policy", "seed", "deals", "won (95% CI)", "mean score (0..48)", "capped"]
    return markdown_table(headers + ["deals/s per core"], rows)


def setting_words(params):
    """`final=30`, `final=0`, without the beam; "default" for the policy as it comes."""
    if not params:
        return "default"
    pairs, _, words = params.partition(", ")
    return f"`{pairs}`" + (f", {words}" if words else "")


def montana_gaps(runs):
    """Montana without redeals: the solver's outcomes, one column per budget."""
    headers = ["outcome"] + [setting_words(run.params) for run in runs]

    def line(label, number_of):
        cells = []
        for i, run in enumerate(runs):
            number = number_of(run)
            bold = i == 0 and label != "unknown"
            cells.append(f"{count(number)}, {rate(number, run.deals, bold=bold)}")
        return [label, *cells]

    rows = [
        line("won", lambda run: run.won),
        line("lost, proved", lambda run: run.proved_lost),
        line("unknown", lambda run: run.unknown),
        line("decided", lambda run: run.deals - run.unknown),
    ]
    default = runs[0]
    return markdown_table(headers, rows) + (
        f"\nSo between {percent(default.won / default.deals)} and "
        f"{percent((default.deals - default.proved_lost) / default.deals)} of these deals can be "
        f"won (the won share, and all but the proved losses), with "
        f"{percent(default.unknown / default.deals)} of them undecided.\n"
    )


def jokers_table(runs):
    rows = []
    for run in runs:
        exact = run.unwinnable or run.unknown
        ends = f"{rate(run.proved_lost, run.deals)} proved lost" if exact else "the rest (resigned)"
        unknown = rate(run.unknown, run.deals) if exact else DASH
        bold = run.policy == "solver"
        rows.append([
            f"`{run.policy}`", f"{count(run.deals)} (seed {run.seed})",
            rate(run.won, run.deals, bold), ends, unknown,
            run.mean_score or DASH, run.speed or DASH,
        ])  # fmt: skip
    headers = ["policy", "deals", "won (95% CI)", "lost", "unknown", "mean score"]
    return markdown_table(headers + ["speed"], rows)


TABLES = {
    "calc-heuristics": calc_heuristics,
    "calc-strong": calc_strong,
    "montana": montana_table,
    "montana-gaps": montana_gaps,
    "jokers": jokers_table,
}


# The headline: the best player of each game, and what bounds it.

HEADLINE = (
    # (title, (table, policy, rules) of the player, (table, policy, rules) of its bound)
    ("Calculation, 4 waste piles", ("calc-strong", "mc", "wastes=4"),
     ("calc-strong", "oracle", "wastes=4")),
    ("Calculation, 3 waste piles", ("calc-strong", "mc", "wastes=3"),
     ("calc-strong", "oracle", "wastes=3")),
    ("Montana, 2 redeals", ("montana", "solver", "redeals=2 max_moves=5000"), None),
    ("Montana without redeals (Gaps)", ("montana-gaps", "solver", "redeals=0 max_moves=5000"),
     ("montana-gaps", "solver", "redeals=0 max_moves=5000")),
    ("Jokers", ("jokers", "solver", "max_moves=2000"), ("jokers", "solver", "max_moves=2000")),
)  # fmt: skip


def find(runs, table, policy, rules):
    """The first run of table with that policy and rules (a table's default comes first)."""
    return next(r for r in runs if (r.table, r.policy, r.rules) == (table, policy, rules))


def bound_words(player, bound, runs):
    """What bounds the player's win rate: the share of deals that can be won at all."""
    if bound is None:
        search = find(runs, "montana", "search", player.rules)
        return (
            f"none exact (redeals are random); `search`, which looks ahead within a budget: "
            f"{rate(search.won, search.deals)}"
        )
    run = find(runs, *bound)
    if run.policy == "oracle":
        return (
            f"`oracle`, told the stock order: {rate(run.won, run.deals)} can be won "
            f"({outcome_words(run)})"
        )
    if run.unknown == 0:
        return f"exact: the solver's wins are the winnable deals ({outcome_words(run)})"
    most = run.deals - run.proved_lost
    return (
        f"between {percent(run.won / run.deals)} and {percent(most / run.deals)} can be won: "
        f"{percent(run.proved_lost / run.deals)} proved lost, {percent(run.unknown / run.deals)}"
        f" undecided"
    )


def headline(runs):
    rows = []
    for title, player, bound in HEADLINE:
        run = find(runs, *player)
        label = f"`{run.policy}`"
        seed = f"{count(run.deals)} (seed {run.seed})"
        rows.append([title, label, seed, rate(run.won, run.deals, bold=True),
                     bound_words(run, bound, runs)])  # fmt: skip
    headers = ["game", "best player", "deals", "won (95% CI)", "upper bound"]
    return markdown_table(headers, rows)


def tables(runs):
    """{file name: Markdown} of every table, the headline among them."""
    made = {"headline.md": headline(runs)}
    for name, make in TABLES.items():
        made[f"{name}.md"] = make([run for run in runs if run.table == name])
    return made


def readme_with_headline(readme, table):
    """README.md's text with the table between its findings markers."""
    pattern = re.compile(re.escape(HEADLINE_START) + r"\n.*?" + re.escape(HEADLINE_END), re.S)
    if not pattern.search(readme):
        raise SystemExit(f"README.md has no {HEADLINE_START} ... {HEADLINE_END} block")
    return pattern.sub(lambda _: f"{HEADLINE_START}\n{table}{HEADLINE_END}", readme)


# The plots.

PLOTS = {
    "calc": ("calc-heuristics", "calc-strong"),
    "montana": ("montana", "montana-gaps"),
    "jokers": ("jokers",),
}


def plot_files():
    """{file name: what draws it} of every plot."""
    plots = {}
    for game, tables_of_game in PLOTS.items():
        plots[f"findings-{game}-win-rates.png"] = (win_rate_figure, game, tables_of_game)
        plots[f"findings-{game}-scores.png"] = (scores_figure, game, tables_of_game)
    return plots


def run_label(run):
    rules = {"wastes=4": "4 piles", "wastes=3": "3 piles"}.get(run.rules, "")
    if run.rules.startswith("redeals=0"):
        rules = "no redeals"
    words = [run.policy, run.params, rules, f"{count(run.deals)} deals"]
    return ", ".join(word for word in words if word)


def percent_tick(value, _):
    """A log axis's tick as a plain share: 0.0001%, 0.01%, 1%, 100%."""
    return f"{value:.10f}".rstrip("0").rstrip(".") + "%"


def log_floor(runs):
    """The left end of a log axis of win rates in %: the power of ten at or below every
    interval's low end (a tenth of the high end where nothing was won)."""
    ends = []
    for run in runs:
        low, high = wilson(run.won, run.deals)
        ends.append(100 * low if run.won else 10 * high)
    return 10.0 ** math.floor(math.log10(min(ends)))


def win_rate_figure(runs, scores, game, table_names):
    """Each run's win rate with its 95% Wilson interval, on a log scale: the rates run from
    one deal in a million to all of them."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from sim.engine.analysis.report import COLORS

    shown = [run for name in table_names for run in runs if run.table == name]
    rules = list(dict.fromkeys(run.rules for run in shown))
    figure = Figure(figsize=(8.0, 1.4 + 0.38 * len(shown)))
    axes = figure.subplots()
    left = log_floor(shown)
    for i, run in enumerate(shown):
        y = len(shown) - 1 - i
        low, high = wilson(run.won, run.deals)
        color = COLORS[rules.index(run.rules) % len(COLORS)]
        if run.won == 0:  # nothing to place on a log scale: the interval alone
            axes.plot([left, 100 * high], [y, y], color=color, linewidth=1.5)
            axes.annotate("0 won", (100 * high, y), xytext=(6, 0), textcoords="offset points",
                          va="center", fontsize=8)  # fmt: skip
            continue
        share = 100 * run.won / run.deals
        errors = [[share - 100 * low], [100 * high - share]]
        axes.errorbar(share, y, xerr=errors, fmt="o", color=color, capsize=3, markersize=5)
        axes.annotate(percent(run.won / run.deals), (100 * high, y), xytext=(6, 0),
                      textcoords="offset points", va="center", fontsize=8)  # fmt: skip
    axes.set_xscale("log")
    axes.set_xlim(left, 400)
    axes.xaxis.set_major_formatter(FuncFormatter(percent_tick))
    axes.set_yticks(range(len(shown))[::-1], [run_label(run) for run in shown], fontsize=8)
    axes.set_ylim(-0.7, len(shown) - 0.3)
    axes.set_xlabel("deals won (log scale)")
    axes.set_title(f"{GAME_TITLES[game]}: win rate per policy (95% Wilson interval)")
    figure.tight_layout()
    return figure


def scores_figure(runs, scores, game, table_names):
    """The share of deals reaching at least each score, for the runs whose scores are kept."""
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from sim.engine.analysis.report import COLORS

    figure = Figure()
    axes = figure.subplots()
    shown = [run for name in table_names for run in runs if run.table == name]
    policies = list(dict.fromkeys(run.policy for run in shown))
    for run in shown:
        counts = scores.get((run.game, run.rules, run.policy, run.params, run.seed))
        if not counts:
            continue
        points = np.array(sorted(counts.items()))
        reached = 100 * np.cumsum(points[::-1, 1])[::-1] / points[:, 1].sum()
        color = COLORS[policies.index(run.policy) % len(COLORS)]
        line = "--" if run.rules in HARDER_RULES else "-"
        axes.plot(points[:, 0], reached, line, marker=".", markersize=3, color=color,
                  label=run_label(run))  # fmt: skip
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter(FuncFormatter(percent_tick))
    axes.set_xlabel(SCORE_MEANING[game])
    axes.set_ylabel("deals reaching at least this score")
    axes.set_title(f"{GAME_TITLES[game]}: how far each policy gets")
    axes.legend(fontsize=8)
    figure.tight_layout()
    return figure


HARDER_RULES = ("wastes=3", "redeals=0 max_moves=5000")  # drawn dashed
SCORE_MEANING = {
    "calc": "score reached: cards on the foundations",
    "montana": "score reached: cards in kept runs (0..48)",
    "jokers": "score reached: cards on the foundations",
}


def png(figure, data):
    """The figure as PNG bytes: the same data give the same bytes (no software stamp)."""
    buffer = io.BytesIO()
    metadata = {"Software": None, "Source": "docs/findings.py", "Data": data}
    figure.savefig(buffer, format="png", metadata=metadata)
    return buffer.getvalue()


def draw(runs, scores, data):
    """{file name: PNG bytes} of every plot."""
    from matplotlib import style

    from sim.engine.analysis.report import STYLE

    drawn = {}
    with style.context(["default", STYLE]):
        for name, (make, game, table_names) in plot_files().items():
            drawn[name] = png(make(runs, scores, game, table_names), data)
    return drawn


# Recording runs from result files.


def record(table, paths):
    """Add or replace, under table, the runs of the result files given (their counts and
    score distributions), in the data files."""
    import pyarrow.parquet as pq

    runs, scores = read_runs(), read_scores()
    for path in paths:
        rows = pq.read_table(path).to_pandas()
        rows = rows.drop_duplicates(["setting", "seed", "deal"])
        for (_, seed), part in rows.groupby(["setting", "seed"], observed=True):
            first = part.iloc[0]
            outcomes = part["outcome"].astype(str).value_counts()
            found = Run(
                table, str(first["game"]), str(first["rules"]), str(first["policy"]),
                changed_params(str(first["game"]), str(first["policy"]), str(first["params"])),
                int(seed), len(part), int(part["won"].sum()),
                int(outcomes.get("unwinnable", 0)), int(outcomes.get("unknown", 0)),
                int(outcomes.get("capped", 0)), f"{part['score'].mean():.2f}", "",
            )  # fmt: skip
            earlier = next((run for run in runs if run.key == found.key), None)
            if earlier is not None:
                found.speed = earlier.speed
                runs[runs.index(earlier)] = found
            else:
                runs.append(found)
            key = (found.game, found.rules, found.policy, found.params, found.seed)
            scores[key] = part["score"].value_counts().sort_index().to_dict()
    write_data(runs, scores)


def changed_params(game, policy, params):
    """The `k=v` pairs of params that differ from a built-in policy's defaults, as the
    tables name a run: `nodes=200000`, or "" for the policy as it comes."""
    from sim.policies.registry import builtin_policies

    declared = next((p for p in builtin_policies(game) if p.name == policy), None)
    if declared is None:
        return params
    defaults = {param.name: param.default for param in declared.params}
    pairs = [pair.partition("=") for pair in params.split()]
    return " ".join(
        f"{name}={value}" for name, _, value in pairs if float(value) != defaults.get(name)
    )


def write_data(runs, scores):
    with open(RUNS, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows([getattr(run, name) for name in COLUMNS] for run in runs)
    with open(SCORES, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        for key, counts in scores.items():
            writer.writerows([*key, score, deals] for score, deals in sorted(counts.items()))


# The command.


def made():
    """{path: text or bytes} of everything this script writes, from the data files."""
    runs, scores = read_runs(), read_scores()
    outputs = {DATA / name: text for name, text in tables(runs).items()}
    outputs[README] = readme_with_headline(README.read_text(), outputs[DATA / "headline.md"])
    for name, picture in draw(runs, scores, data_hash()).items():
        outputs[IMAGES / name] = picture
    return outputs


def stale_tables():
    """The committed tables (and README block) that differ from what the data make."""
    runs = read_runs()
    expected = {DATA / name: text for name, text in tables(runs).items()}
    expected[README] = readme_with_headline(README.read_text(), expected[DATA / "headline.md"])
    return [path for path, text in expected.items()
            if not path.exists() or path.read_text() != text]  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check the tables")
    parser.add_argument("--record", nargs="+", metavar=("TABLE", "FILE"),
                        help="add or replace runs of result files under TABLE")  # fmt: skip
    options = parser.parse_args(argv)
    if options.check:
        stale = stale_tables()
        for path in stale:
            print(
                f"{path.relative_to(ROOT)} is not what the data make: run python docs/findings.py"
            )
        return 1 if stale else 0
    if options.record:
        table, *paths = options.record
        if table not in TABLES or not paths:
            parser.error(f"--record TABLE FILE...: TABLE is one of {', '.join(TABLES)}")
        record(table, paths)
    IMAGES.mkdir(exist_ok=True)
    for path, content in made().items():
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
