"""Parameter sweeps of a group of runs: a policy's win rate against one of its parameters.

A sweep is read from the runs' typed descriptions (the `params` of their run descriptions),
never from the text of their labels. For each policy and each of its numeric parameters,
the runs whose other parameters are all equal make one line: the parameter's value against
the win rate, over decided deals with its 95% Wilson interval, as sim compare gives it. A
line needs MIN_SWEEP_VALUES values of the parameter; a parameter with at least one such
line is plotted, with one line per setting of the other parameters.
"""

import json
import math
import re
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from sim.engine.analysis import formats
from sim.engine.analysis.compare import summary_row
from sim.engine.run.results import params_text

# Two settings are already compared run against run (win rates, paired differences); a
# line begins to show how the win rate moves with the parameter from three values on.
MIN_SWEEP_VALUES = 3
MAX_VALUE_TICKS = 12
PLOT_SUFFIX = "sweep"  # how a sweep plot's name ends: `planner-depth_weight-sweep`


@dataclass(frozen=True)
class SweepPoint:
    value: float  # the parameter's value
    run: str  # the run's label
    win_rate: float  # over decided deals, as sim compare; NaN when no deal was decided
    low: float
    high: float


@dataclass(frozen=True)
class SweepLine:
    others: tuple  # ((parameter, value), ...): the other parameters, the same all along
    points: tuple  # SweepPoints, by value

    @property
    def setting(self):
        """`king_pile=1`: what the line holds fixed ("" when nothing)."""
        return params_text(dict(self.others))


@dataclass(frozen=True)
class Sweep:
    policy: str
    parameter: str
    lines: tuple  # SweepLines, by the values of their other parameters
    name: str  # the plot's name, unique in its group: `planner-depth_weight-sweep`


def sweep_series(runs):
    """The sweeps among the runs of one (game, rules) group: per policy (in order of first
    appearance) and per numeric parameter, the lines of runs whose other parameters are
    equal, each with at least MIN_SWEEP_VALUES values."""
    sweeps, names = [], set()
    for policy, described in _described_runs(runs).items():
        for parameter in dict.fromkeys(name for _, params in described for name in params):
            lines = _lines(described, parameter)
            if lines:
                name = _unique_name(f"{_slug(policy)}-{_slug(parameter)}", names)
                sweeps.append(Sweep(policy, parameter, lines, name))
    return sweeps


def typed_params(run):
    """The run's parameters with their types, from the first of its run descriptions that
    gives them as its rows do; None when none does (a file holding rows of several runs)."""
    for meta in run.metas:
        params = meta.get("params")
        if isinstance(params, dict) and _text_of(params) == run.params:
            return params
    return None


def _text_of(params):
    """params as rows write them; None for values no run writes (a file from elsewhere)."""
    try:
        return params_text(params)
    except (TypeError, ValueError):
        return None


def _described_runs(runs):
    """{policy: [(run, typed params)]}, the runs whose typed parameters are known; runs
    of one policy played by different code (two plug-ins of one name) sweep apart, as
    `policy @code`."""
    described = {}
    for run in runs:
        params = typed_params(run)
        if params is not None:
            codes = {r.code for r in runs if r.policy == run.policy}
            policy = run.policy if len(codes) == 1 else f"{run.policy} @{run.code[-8:]}"
            described.setdefault(policy, []).append((run, params))
    return described


def _lines(described, parameter):
    """The lines along one parameter: runs giving it a finite number, split by the
    values of their other parameters; those with too few values left out."""
    by_others = {}
    for run, params in described:
        value = params.get(parameter)
        if not _is_number(value):
            continue
        others = tuple((k, v) for k, v in params.items() if k != parameter)
        by_others.setdefault(_sort_key(others), (others, []))[1].append(_point(run, value))
    lines = [
        SweepLine(others, tuple(sorted(points, key=lambda p: (p.value, p.run))))
        for _, (others, points) in sorted(by_others.items())
        if len({point.value for point in points}) >= MIN_SWEEP_VALUES
    ]
    return tuple(lines)


def _point(run, value):
    row = summary_row(run)  # the figures sim compare gives the run
    return SweepPoint(
        float(value), run.label, row["win_rate"], row["win_rate_low"], row["win_rate_high"]
    )


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _sort_key(others):
    """Other parameters as a sortable key in which equal settings are equal: numbers as
    numbers (2 is 2.0), any other value by its JSON text."""
    return tuple(
        sorted(
            (name, (0, float(value), "") if _is_number(value) else (1, 0.0, _json(value)))
            for name, value in others
        )
    )


def _json(value):
    return json.dumps(value, sort_keys=True, default=str)


def _slug(text):
    return re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-") or "parameter"


def _unique_name(stem, taken):
    name, number = f"{stem}-{PLOT_SUFFIX}", 2
    while name in taken:
        name, number = f"{stem}-{number}-{PLOT_SUFFIX}", number + 1
    taken.add(name)
    return name


def sweep_figure(sweep, title, rate_label, colors):
    """Win rate against the parameter: a line per setting of the other parameters, its
    95% Wilson interval as a band."""
    figure = Figure()
    axes = figure.subplots()
    single = len(sweep.lines) == 1
    for i, line in enumerate(sweep.lines):
        _draw_line(axes, line, colors[i % len(colors)], annotate=single)
    values = sorted({point.value for line in sweep.lines for point in line.points})
    _value_axis(axes, values)
    fixed = sweep.lines[0].setting if single else ""
    axes.set_xlabel(f"{sweep.parameter} ({fixed})" if fixed else sweep.parameter)
    axes.set_ylabel(rate_label)
    axes.set_ylim(bottom=0)
    axes.set_title(f"{title}\nwin rate of {sweep.policy} against {sweep.parameter} "
                   "(95% Wilson interval)")  # fmt: skip
    if not single:
        axes.legend(title=f"{sweep.policy} with")
    figure.tight_layout()
    return figure


def _draw_line(axes, line, color, annotate):
    points = [point for point in line.points if not math.isnan(point.win_rate)]
    x = np.array([point.value for point in points])
    rate, low, high = (100 * np.array([getattr(p, k) for p in points]) for k in
                       ("win_rate", "low", "high"))  # fmt: skip
    axes.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
    axes.plot(x, rate, marker="o", color=color, label=line.setting or None)
    if annotate:
        for point, y in zip(points, rate, strict=True):
            axes.annotate(
                formats.percent(point.win_rate), (point.value, y), xytext=(0, 7),
                textcoords="offset points", ha="center", fontsize=9,
            )  # fmt: skip


def _value_axis(axes, values):
    """Ticks at the values swept (unless too many to read), on a log scale when they span
    two orders of magnitude (samples=100,1000,10000), where a linear axis would crowd the
    small ones."""
    if values[0] > 0 and values[-1] / values[0] >= 100:
        axes.set_xscale("log")
        axes.set_xticks([], minor=True)
    if len(values) <= MAX_VALUE_TICKS:
        axes.set_xticks(values, [_tick_text(value) for value in values])


def _tick_text(value):
    return f"{value:,.0f}" if value.is_integer() else f"{value:g}"
