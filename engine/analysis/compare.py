"""The comparison table: one row per run, and its paired comparison with its group's baseline.

Runs are grouped by (game, rules) (inputs.groups_of); each group has its own baseline run,
and a run is paired only with the baseline of its group, on the deals both played.

A run's win rate is over its decided deals: a deal whose outcome is `unknown` (a solver
that gave up) is neither a win nor a loss; the unknown share is reported apart. Two runs
are paired on the deals both played, and on those decided in both.

When a group holds a run of a policy that decides every deal exactly (the Calculation
oracle, the Jokers solver, the Montana solver without redeals), the deals it won (any
such run, if several) are the winnable ones, and every run of the group also gets its
win rate among those: how close it comes to perfect play where perfect play wins.
"""

from typing import NamedTuple

import numpy as np
import pandas as pd

from sim.engine.analysis.inputs import UNKNOWN, AnalysisError, groups_of
from sim.engine.analysis.intervals import (
    mcnemar_log10_p,
    mean_interval,
    paired_difference_interval,
)
from sim.engine.stats import wilson_interval
from sim.policies.registry import builtin_policies

PAIRED_COUNTS = ("paired", "undecided_pairs", "both_won", "only_policy", "only_baseline", "neither")
# The paired columns, after every run's own figures.
PAIRED_COLUMNS = ("baseline", *PAIRED_COUNTS, "win_rate_diff", "diff_low", "diff_high",
                  "mcnemar_p", "mcnemar_log10_p")  # fmt: skip
DEFAULT_BASELINE = "the first run of each group as read (files in the order given)"
# The figures a group's own size is told by, after every run's and pair's figures.
GROUP_COLUMNS = ("group_runs", "group_files")


class SortKey(NamedTuple):
    """A `--sort` key: the column that orders a group's runs, and in which direction."""

    column: str
    largest_first: bool
    told: str  # the order in words, as the output's `about` says it


SORT_KEYS = {
    "win_rate": SortKey("win_rate", True, "win rate, highest first"),
    "score": SortKey("score_mean", True, "mean score, highest first"),
    "deals": SortKey("deals", True, "deals played, most first"),
    "name": SortKey("run", False, "run label, A to Z"),
    "diff": SortKey("win_rate_diff", True, "the baseline, then difference with it, highest first"),
}
DEFAULT_SORT = "win_rate"


def _named(runs, name):
    """The runs a `--baseline` name names: those whose label it is, else those of the
    policy it begins with whose parameters have the values it goes on to give, if any
    (`planner depth=2` names the runs of planner with depth 2, whatever their others)."""
    labelled = [run for run in runs if run.label == name]
    if labelled or not name.split():
        return labelled
    policy, *settings = name.split()
    if not all("=" in setting for setting in settings):
        return []
    wanted = _wanted_values(name, settings)
    return [run for run in runs if run.policy == policy and _has_values(run.params, wanted)]


def _wanted_values(name, settings):
    """{parameter: value} from a baseline's `k=v` settings; a parameter given twice is
    refused, as by a run, since either value could be the one meant."""
    wanted = {}
    for setting in settings:
        key, value = setting.split("=", 1)
        if key in wanted:
            raise AnalysisError(f"baseline {name!r} gives {key} twice; give it one value")
        wanted[key] = value
    return wanted


def _has_values(params, wanted):
    """Whether params text (`depth=2.0 width=8`) gives each wanted parameter its value."""
    given = dict(item.partition("=")[::2] for item in params.split())
    return all(name in given and _same_value(given[name], wanted[name]) for name in wanted)


def _same_value(text, other):
    """Numbers compare as numbers: a run's `depth=2.0` is the `depth=2` asked for."""
    try:
        return float(text) == float(other)
    except ValueError:
        return text == other


def find_baseline(runs, name):
    """The one run of runs that NAME names (_named): a run label, a policy only one run
    has, or a policy and the values of some of its parameters that only one run has."""
    matches = _named(runs, name)
    if not matches:
        known = ", ".join(dict.fromkeys(run.label for run in runs))
        raise AnalysisError(f"baseline {name!r} is not among the runs ({known})")
    if len(matches) > 1:
        known = ", ".join(repr(run.label) for run in matches)
        raise AnalysisError(f"baseline {name!r} names several runs; pick one of {known}")
    return matches[0]


def baselines(groups, name=None):
    """Each group's baseline run, or None for a group that is not paired.

    Without a name, the first run of every group of two runs or more. With one, in each
    group the run it names (a group without it is not paired); a name that no group has is
    an error, as is one that names several runs of a group."""
    if name is None:
        return [group.runs[0] if len(group.runs) > 1 else None for group in groups]
    chosen = [find_baseline(group.runs, name) if _named(group.runs, name) else None
              for group in groups]  # fmt: skip
    if not any(chosen):
        find_baseline([run for group in groups for run in group.runs], name)
    return chosen


def summary_row(run):
    """The figures of one run, as a dict of plain numbers and strings."""
    deals = run.deals
    decided = int(run.decided.sum())
    wins = int(run.won[run.decided].sum())
    low, high = wilson_interval(wins, decided)
    score, score_low, score_high = mean_interval(run.score)
    row = {
        "run": run.label,
        "game": run.game,
        "rules": run.rules,
        "policy": run.policy,
        "params": run.params,
        "setting": run.setting,
        "code": run.code,
        "files": len(run.files),
        "deals": deals,
        "decided": decided,
        "wins": wins,
        "win_rate": wins / decided if decided else np.nan,
        "win_rate_low": low if decided else np.nan,
        "win_rate_high": high if decided else np.nan,
    }
    for label, mask in run.outcome_shares.items():
        row[f"{label}_share"] = mask.sum() / deals if deals else np.nan
    row |= {"score_mean": score, "score_low": score_low, "score_high": score_high}
    row["moves_mean"] = mean_interval(run.moves)[0]
    for name, values in run.means.items():
        row[f"{name}_mean"] = mean_interval(values)[0]
    return row


def paired_row(run, baseline):
    """Deals both runs played, split by who won, with the difference of win rates."""
    _, in_run, in_base = np.intersect1d(
        run.key, baseline.key, assume_unique=True, return_indices=True
    )
    decided = run.decided[in_run] & baseline.decided[in_base]
    won, base_won = run.won[in_run][decided], baseline.won[in_base][decided]
    both = int(np.count_nonzero(won & base_won))
    only_policy = int(np.count_nonzero(won & ~base_won))
    only_baseline = int(np.count_nonzero(~won & base_won))
    neither = len(won) - both - only_policy - only_baseline
    difference, low, high = paired_difference_interval(both, only_policy, only_baseline, neither)
    # No deal decided in both runs: no test, rather than a p of 1 that reads as "no difference".
    log10_p = mcnemar_log10_p(only_policy, only_baseline) if len(won) else np.nan
    return {
        "baseline": baseline.label,
        "paired": len(in_run),
        "undecided_pairs": int(len(in_run) - decided.sum()),
        "both_won": both,
        "only_policy": only_policy,
        "only_baseline": only_baseline,
        "neither": neither,
        "win_rate_diff": difference,
        "diff_low": low,
        "diff_high": high,
        "mcnemar_p": 10.0**log10_p,  # 0.0 below the smallest float: see mcnemar_log10_p
        "mcnemar_log10_p": log10_p,
    }


def bound_runs(runs):
    """The runs whose policy decides every deal exactly under its rules: a deal any of
    them won is winnable. Only a built-in policy, picked by its name, counts: a plug-in
    that calls itself `oracle` is not taken at its word."""
    bounds = []
    for run in runs:
        if any(meta.get("policy_spec", run.policy) != run.policy for meta in run.metas):
            continue
        declared = [p for p in builtin_policies(run.game) if p.name == run.policy]
        if declared and declared[0].is_exact(run.metas[0]["rules"]):
            bounds.append(run)
    return bounds


def winnable_row(run, bounds):
    """The run's wins among the deals one of the bounds won, those the run played and
    did not leave unknown, with a Wilson interval. Every bound counts: a run that left
    a deal unknown (a smaller budget) does not hide another's win of it."""
    winnable_keys = np.unique(np.concatenate([bound.key[bound.won] for bound in bounds]))
    winnable = np.isin(run.key, winnable_keys)
    decided = run.decided[winnable]
    deals = int(decided.sum())
    wins = int(run.won[winnable][decided].sum())
    low, high = wilson_interval(wins, deals)
    return {
        "bound": " or ".join(bound.label for bound in bounds),
        "winnable": deals,
        "winnable_wins": wins,
        "winnable_win_rate": wins / deals if deals else np.nan,
        "winnable_low": low if deals else np.nan,
        "winnable_high": high if deals else np.nan,
    }


def comparison(runs, baseline=None):
    """One row per run, grouped by (game, rules); within each group, each run's paired
    comparison with the group's baseline (`baselines`: the run named `baseline`, or by
    default the group's first run).

    The rows of a group are together, groups in order of first appearance. The table's
    `attrs` hold what a reader of the table needs: the groups, the baseline asked, methods.
    """
    groups = groups_of(runs)
    rows = []
    for group, base in zip(groups, baselines(groups, baseline), strict=True):
        bounds = bound_runs(group.runs)
        for run in group.runs:
            row = summary_row(run)
            if bounds:
                row |= winnable_row(run, bounds)
            if base is not None:
                row |= paired_row(run, base) if run is not base else {"baseline": ""}
            rows.append(row)
    table = pd.DataFrame(rows)
    paired = [name for name in PAIRED_COLUMNS if name in table]
    table = table[[name for name in table if name not in PAIRED_COLUMNS] + paired]
    if "baseline" not in table:
        table["baseline"] = ""
    table["baseline"] = table["baseline"].fillna("")
    if not any(UNKNOWN in run.outcome_shares for run in runs):
        table = table.drop(columns=["decided", "undecided_pairs"], errors="ignore")
    for name in (*PAIRED_COUNTS, "winnable", "winnable_wins"):
        if name in table:
            table[name] = table[name].astype("Int64")
    table = _with_group_sizes(table, groups)
    table.attrs = {
        "groups": [
            {"game": g.game, "rules": g.rules, "runs": len(g.runs), "files": len(g.files)}
            for g in groups
        ],
        "baseline": baseline or DEFAULT_BASELINE,
        "paired": "only runs of one game and its rules, on the deals both played",
        "win_rate_interval": "Wilson score, 95%",
        "winnable": "deals won by any of the group's bound runs, policies that decide "
        "every deal exactly; winnable_win_rate is each run's win rate among them",
        "score_interval": "normal approximation, 95%",
        "difference_interval": "Newcombe hybrid score for paired proportions, 95%",
        "p_value": "exact McNemar (two-sided binomial test on discordant deals); "
        "mcnemar_log10_p is its log10, exact where mcnemar_p underflows to 0",
    }
    return table


def _with_group_sizes(table, groups):
    """The table with each row's group size: its runs, and the files pooled into them (a
    file holding several runs counted once), as the group's heading tells them."""
    sizes = {(g.game, g.rules): (len(g.runs), len(g.files)) for g in groups}
    rows = [sizes[key] for key in zip(table["game"], table["rules"], strict=True)]
    for index, name in enumerate(GROUP_COLUMNS):
        table[name] = [row[index] for row in rows]
    return table


def ranked(table, key=DEFAULT_SORT):
    """The comparison's rows ordered within each (game, rules) group by key (SORT_KEYS),
    groups keeping their order: a leaderboard per group.

    A run without the figure (no decided deal, no deal paired) comes after those with it;
    ties go by run label. By `diff` the group's baseline comes first, the runs ranked
    against it below. Only the order changes: each group keeps the baseline it was given."""
    column, largest_first, told = SORT_KEYS[key]
    games_rules = list(zip(table["game"], table["rules"], strict=True))
    position = {group: i for i, group in enumerate(dict.fromkeys(games_rules))}
    order = pd.DataFrame(
        {
            "group": [position[group] for group in games_rules],
            "not_baseline": ~is_baseline(table).to_numpy() if key == "diff" else False,
            "figure": table[column].to_numpy() if column in table else np.nan,
            "run": table["run"].to_numpy(),
        }
    ).sort_values(
        ["group", "not_baseline", "figure", "run"],
        ascending=[True, True, not largest_first, True],
        na_position="last",
    )
    result = table.iloc[order.index].reset_index(drop=True)  # order's index: positions
    result.attrs = table.attrs | {"order": f"within each group: {told}; ties by run label"}
    return result


def is_baseline(table):
    """Whether each row is its group's baseline: the run the group's other rows name."""
    named = set(zip(table["game"], table["rules"], table["baseline"], strict=True))
    rows = zip(table["game"], table["rules"], table["run"], strict=True)
    return pd.Series([row in named for row in rows], index=table.index)
