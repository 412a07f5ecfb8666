"""The options that play deals sim did not shuffle: --pysol (PySolFC's game numbers)
and --layout-file (layouts typed in, one a line), for runs and `sim show` alike.

They set the run's seed and deals as engine.deal_sources records them, so the rest of
a run (its files, --resume, sweeps, move logs) works as for seeded deals."""

import click

from sim.cli.options import InputFile

PYSOL_OPTION = click.option(
    "--pysol",
    metavar="N",
    help="Play PySolFC's game number N (123456, or ms123456) as PySolFC deals it; "
    "with -n, games N, N+1, ...",
)
LAYOUT_FILE_OPTION = click.option(
    "--layout-file",
    type=InputFile(),
    help="Play the layouts of this file, one a line (text notation, JSON, or a move-log "
    "line); deal k is its k-th layout, from 0.",
)
DEAL_OPTIONS = (PYSOL_OPTION, LAYOUT_FILE_OPTION)


def given(name):
    """Whether option `name` was typed on the command line (not its default)."""
    source = click.get_current_context().get_parameter_source(name)
    return source == click.core.ParameterSource.COMMANDLINE


def deal_source(game, options, rules):
    """The source of the deals the options name (engine.deal_sources), or None for
    seeded deals. Refuses, in one line, options that name deals twice."""
    from sim.engine import deal_sources, layouts, pysol

    if options.get("pysol") and options.get("layout_file"):
        raise click.UsageError("--pysol and --layout-file name other deals: give one")
    if options.get("pysol"):
        _refuse_with("--pysol", ["seed", "start"])
        number, ms = pysol.parse_number(options["pysol"])
        if not pysol.deals_as_pysol(game):
            pysol.pysol_layout(game, number, ms)  # the error that says so
        options["start"] = number
        return deal_sources.PysolDeals(game, ms)
    if options.get("layout_file"):
        _refuse_with("--layout-file", ["seed"])
        path = options["layout_file"]
        return deal_sources.LayoutDeals(game, layouts.read_layout_file(game, path, rules), path)
    return None


def _refuse_with(option, names):
    for name in names:
        if given(name):
            raise click.UsageError(
                f"{option} names its own deals; --{name} is for sim's seeded deals"
            )


def set_run_deals(game, options, rules):
    """Put the source of a run's deals in options (`source`, with its seed, and n when
    -n was not given for a layout file: all its layouts from --start)."""
    source = deal_source(game, options, rules)
    options["source"] = source
    if source is None:
        return
    options["seed"] = source.seed
    if options.get("layout_file") and not given("n"):
        options["n"] = max(len(source.layouts) - options["start"], 1)
    source.check(options["start"], options["n"])
