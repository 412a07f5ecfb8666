"""The comparison table: one row per run, and its paired comparison with a baseline run.

A run's win rate is over its decided deals: a deal whose outcome is `unknown` (a solver
that gave up) is neither a win nor a loss; the unknown share is reported apart. Two runs
are paired on the deals both played, and on those decided in both.
"""

import numpy as np
import pandas as pd

from sim.engine.analysis.inputs import UNKNOWN, AnalysisError, describe
from sim.engine.analysis.intervals import mcnemar_exact_p, mean_interval, paired_difference_interval
from sim.engine.stats import wilson_interval

PAIRED_COUNTS = ("paired", "undecided_pairs", "both_won", "only_policy", "only_baseline", "neither")


def find_baseline(runs, name):
    """The run named by `--baseline`: a run label, or a policy name that only one run has."""
    matches = [run for run in runs if run.label == name] or [r for r in runs if r.policy == name]
    if not matches:
        known = ", ".join(run.label for run in runs)
        raise AnalysisError(f"baseline {name!r} is not among the runs ({known})")
    if len(matches) > 1:
        known = ", ".join(repr(run.label) for run in matches)
        raise AnalysisError(f"baseline {name!r} names several runs; pick one of {known}")
    return matches[0]


def check_pairable(runs):
    """Runs are paired only when they played under the same rules (one game: load_runs)."""
    first = runs[0]
    for run in runs[1:]:
        if run.rules != first.rules:
            raise AnalysisError(
                f"cannot pair runs of different rules: {first.policy} played "
                f"{describe(first.rules)}, {run.policy} {describe(run.rules)}"
            )


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
        "policy": run.policy,
        "rules": describe(run.rules),
        "params": describe(run.params),
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
        "mcnemar_p": mcnemar_exact_p(only_policy, only_baseline),
    }


def comparison(runs, baseline=None):
    """One row per run; with a baseline run, each other run's paired comparison with it.

    The table's `attrs` hold what a reader of the table needs: game, baseline, methods.
    """
    rows = [summary_row(run) for run in runs]
    if baseline is not None:
        check_pairable(runs)
        for row, run in zip(rows, runs, strict=True):
            row |= paired_row(run, baseline) if run is not baseline else {"baseline": ""}
    table = pd.DataFrame(rows)
    if not any(UNKNOWN in run.outcome_shares for run in runs):
        table = table.drop(columns=["decided", "undecided_pairs"], errors="ignore")
    for name in PAIRED_COUNTS:
        if name in table:
            table[name] = table[name].astype("Int64")
    table.attrs = {
        "game": runs[0].game,
        "baseline": baseline.label if baseline is not None else "",
        "win_rate_interval": "Wilson score, 95%",
        "score_interval": "normal approximation, 95%",
        "difference_interval": "Newcombe hybrid score for paired proportions, 95%",
        "p_value": "exact McNemar (two-sided binomial test on discordant deals)",
    }
    return table
