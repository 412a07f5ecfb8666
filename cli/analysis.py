"""`sim compare`, `sim report`, `sim export`: thin commands over engine.analysis."""

import contextlib
import warnings
from functools import wraps
from pathlib import Path

import click

from sim.cli.options import OutputFile
from sim.engine.analysis import AnalysisError
from sim.engine.run.files import describe_os_error

FILES = click.argument(
    "paths", nargs=-1, required=True, metavar="PATH...", type=click.Path(path_type=Path)
)
OVERWRITE = click.option("--overwrite", is_flag=True, help="Replace an existing output.")


def _one_line_errors(command):
    @wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except AnalysisError as error:
            raise click.ClickException(str(error)) from None
        except OSError as error:  # a disk that fills up or a folder that cannot be written
            raise click.ClickException(describe_os_error(error)) from None

    return wrapper


def _as_usage_error(check, *args):
    """check(*args), a check of what was typed (an output's name): what it refuses is a
    usage error (exit 2), not a failure of the work."""
    try:
        return check(*args)
    except AnalysisError as error:
        raise click.UsageError(str(error)) from None


@click.command()
@FILES
@click.option(
    "--baseline",
    metavar="NAME",
    help="In each (game, rules) group, pair every other run with this policy, a policy with "
    "some of its parameters ('planner depth_weight=2'), or a run label, on the deals both "
    "played (default: the group's first run).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "parquet", "json", "markdown"]),
    help="Output format (default: from the --out suffix, else table).",
)
@click.option(
    "--sort",
    "sort_key",
    type=click.Choice(["win_rate", "score", "deals", "name", "diff"]),
    default="win_rate",
    show_default=True,
    help="Order each group's runs, in every format: win_rate, score (mean) or deals, "
    "highest first; name (run label), A to Z; diff (with the baseline), highest first, the "
    "baseline first. Ties by run label. The baseline stays the same.",
)
@click.option(
    "--out",
    type=OutputFile(),
    help="Write here instead of printing (.csv .parquet .json .md pick the format).",
)
@OVERWRITE
@_one_line_errors
def compare(paths, baseline, fmt, sort_key, out, overwrite):
    """Compare runs: win rate, score and moves per (game, rules, policy, parameters).

    PATH... are result files, or folders whose *.parquet files, in subfolders too, are all
    read. Runs are grouped by game and rules, one block each; files of one run are pooled,
    a deal counted once. Win rates get 95% Wilson intervals, mean scores 95% normal
    intervals. A deal whose outcome is unknown (a solver gave up) is neither won nor lost:
    the win rate is over decided deals, the unknown share apart.

    In each group every other run is paired with the group's baseline (--baseline, by
    default its first run as read) on the deals both played (joined on seed and deal):
    both won / run only / baseline only / neither, the difference of win rates with
    Newcombe's hybrid score 95% interval for paired proportions (method 10, 1998), and the
    exact McNemar p-value (two-sided binomial test on the deals only one of the two won).
    Runs of different games or rules are never paired.

    Each group's runs are listed best win rate first (--sort picks another order), in
    every format; every figure the tables print is a column of the machine formats.
    """
    from sim.engine.analysis import formats
    from sim.engine.analysis.compare import comparison, ranked
    from sim.engine.analysis.inputs import load_runs
    from sim.engine.analysis.output import (
        check_outside_inputs,
        check_writable,
        write_atomically,
        write_text,
    )

    chosen, fmt = fmt, formats.format_for(out, fmt)
    if fmt == "parquet" and out is None:
        raise click.UsageError("--format parquet needs --out FILE")
    if out is not None:
        _as_usage_error(formats.check_out_name, out, fmt, chosen)
        if fmt == "parquet":
            _as_usage_error(check_outside_inputs, out, paths, "a Parquet table")
        check_writable(out, overwrite)
    runs = load_runs(paths)
    if out is not None:
        _refuse_an_input(out, runs)
    table = ranked(comparison(runs, baseline), sort_key)  # baselines chosen before
    _notes(runs)
    if fmt == "parquet":
        write_atomically(out, lambda tmp: formats.write_parquet(table, tmp))
    elif out is not None:
        write_text(out, formats.render(table, fmt))
    else:
        click.echo(formats.render(table, fmt), nl=False)
    if out is not None:
        _written(out)


@click.command()
@FILES
@click.option(
    "--out",
    type=OutputFile(),
    default=Path("report.html"),
    show_default=True,
    help="report.html: one self-contained page; report.md: Markdown, plots in a folder beside.",
)
@click.option(
    "--baseline",
    metavar="NAME",
    help="In each (game, rules) group, pair runs with this policy, a policy with some of its "
    "parameters, or a run label (default: the group's first).",
)
@click.option(
    "--deal-pages",
    type=click.IntRange(0, 100),
    default=10,
    show_default=True,
    metavar="N",
    help="Per group, link at most N deals lost by the best run, and N won by only one of "
    "two runs, to replay pages written beside the report (0: none).",
)
@OVERWRITE
@_one_line_errors
def report(paths, out, baseline, deal_pages, overwrite):
    """Write a report of runs: win rates, score distributions, paired wins and losses.

    PATH... are read as by sim compare, and grouped the same way: one section per game and
    rules, each with its own baseline, with the figures sim compare gives. An .html output
    is a single page with the plots embedded; an .md output writes the plots as PNG files
    in a folder named after the report (report.md -> report/). The deals worth a look are
    linked to pages that replay them, in report-deals/ beside it (--deal-pages).
    """
    from sim.engine.analysis import report as reports
    from sim.engine.analysis.inputs import load_runs

    writer = _as_usage_error(reports.writer_for, out)
    reports.check_outputs(out, overwrite)
    runs = load_runs(paths)
    reports.check_outputs(out, overwrite, runs)
    with warnings.catch_warnings():  # a crowded plot's layout is its own to fit, not news
        warnings.filterwarnings("ignore", message="Tight layout not applied")
        written = writer(runs, out, baseline, overwrite=overwrite, deal_pages=deal_pages)
    _notes(runs)
    _written(written)


@click.command()
@FILES
@click.option(
    "--to", "target", type=click.Choice(["csv", "parquet"]), required=True, help="Target format."
)
@click.option(
    "--out",
    type=OutputFile(),
    help="Output file, needed (keep it out of the results folder). A CSV gets its "
    "description in OUT.json.",
)
@OVERWRITE
@_one_line_errors
def export(paths, target, out, overwrite):
    """Convert result files to one CSV or Parquet file, keeping what describes them.

    One file keeps its rows; a folder (every result file in it and below) or several
    files give their rows pooled, one row per (setting, seed, deal), as `sim compare`
    counts them. A file of an earlier layout comes out in the current one, its setting,
    code and maps added from its description: `--to parquet` upgrades it.
    """
    from sim.engine.analysis.export import NEEDS_OUT
    from sim.engine.analysis.export import export as convert

    for path in paths:
        if not path.exists():
            raise AnalysisError(f"{path}: no such file or folder")
        if not (path.is_file() or path.is_dir()):  # a FIFO would block the read
            raise AnalysisError(f"{path}: not a regular file or folder")
    if out is None:
        raise click.UsageError(NEEDS_OUT)
    from sim.engine.analysis.output import check_outside_inputs

    _as_usage_error(check_outside_inputs, out, paths, "the export")
    skipped = []
    for written in convert(paths, target, out, overwrite, skipped):
        _written(written)
    for path in skipped:
        _notice(f"note: {path} is not a sim result file; left out")


def _written(path):
    _notice(f"written     {path}")


def _notice(line):
    """Show line on standard error: a notice, which a closed or full standard error must
    not turn into a failure of the command."""
    with contextlib.suppress(OSError):
        click.echo(line, err=True)


def _refuse_an_input(out, runs):
    from sim.engine.run.files import same_file

    if any(same_file(out, path) for run in runs for path in run.files):
        raise AnalysisError(f"{out} is one of the inputs; choose another --out")


def _deals(n):
    return "1 deal" if n == 1 else f"{n:,} deals"


def _notes(runs):
    """Notes on inputs: incomplete runs, files of the old layout, and Parquet files in the
    folders given that are not sim result files."""
    from sim.engine.analysis.inputs import CONVERT_HINT

    for path in getattr(runs, "skipped", ()):
        _notice(f"note: {path} is not a sim result file; left out")

    for run in runs:
        if run.conflicts:
            named = ", ".join(map(str, run.files[:3]))
            more = f" and {len(run.files) - 3:,} more" if len(run.files) > 3 else ""
            _notice(
                f"note: {_deals(run.conflicts)} of {run.label} "
                f"{'differs' if run.conflicts == 1 else 'differ'} between its files "
                f"({named}{more}); each is counted from the first",
            )
        for path, meta in zip(run.files, run.metas, strict=True):
            if meta.get("completed") is False:
                done, planned = meta.get("n_done"), meta.get("n")
                _notice(
                    f"note: {path} is incomplete ({done} of {planned} deals); "
                    "its deals are included",
                )
    for path in dict.fromkeys(path for run in runs for path in run.old_files):
        _notice(
            f"note: {path} is of an earlier layout, without a setting column; its setting "
            f"was read from its run description ({CONVERT_HINT} converts it)",
        )
