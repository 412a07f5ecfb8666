"""The `sim` command: thin click commands over the engine and the policy registry."""

import gc
import importlib
import io
import json
import os
import signal
import sys
from pathlib import Path

import click

from sim.cli.deal_options import DEAL_OPTIONS, set_run_deals
from sim.cli.options import (
    MoveLogFile,
    RunOutput,
    Seconds,
    WholeNumber,
    check_deal_range,
    check_file_name,
    complete_policies,
    game_command,
    no_color,
    notice,
    resolve_policy,
)
from sim.engine.game import DEFAULT_DEAL_TIMEOUT
from sim.engine.games import BROKEN_PLUGINS, registered_games
from sim.engine.run.files import describe_os_error
from sim.engine.run.stop_signals import Stopped, StopSignals, kept_so_far, say_kept, stop_at_once

GAMES = registered_games()  # built-in and plugged-in games, each a command

# The run, the policies and the results load numba and pyarrow: imported where used, so
# that help, version and completion answer at once.

FAILED_EXIT = 1
ALREADY_COMPLETE = "already holds this run, complete: nothing to play (--overwrite plays it again)"
YOUNG_OBJECTS_COLLECTED = 50_000  # the collector's first threshold (Python's default: 700)


class SimGroup(click.Group):
    """A group whose errors are one line: `Error: ...`, without the usage block.

    Commands that need heavy imports (plots, analysis) are loaded only when used, so a
    simulation run starts fast."""

    lazy = {
        "show": "sim.cli.show:show",
        "compare": "sim.cli.analysis:compare",
        "report": "sim.cli.analysis:report",
        "export": "sim.cli.analysis:export",
    }
    # The first paragraph of each lazy command's help, so that listing them loads none.
    lazy_help = {
        "show": ("Look at one deal: the layout, each move with the position redrawn, the outcome."),
        "compare": (
            "Compare runs: win rate, score and moves per (game, rules, policy, parameters)."
        ),
        "report": (
            "Write a report of runs: win rates, score distributions, paired wins and losses."
        ),
        "export": "Convert result files to one CSV or Parquet file, keeping what describes them.",
    }

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def _command_help(self, ctx, name, limit=45):
        """A command's one-line help, without loading a lazy command."""
        if name in self.lazy_help:
            return click.Command(name, help=self.lazy_help[name]).get_short_help_str(limit)
        return super().get_command(ctx, name).get_short_help_str(limit)

    def format_commands(self, ctx, formatter):
        rows = [
            (name, self._command_help(ctx, name, formatter.width - 6 - len(name)))
            for name in self.list_commands(ctx)
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(self, ctx, incomplete):
        """Command names from list_commands and lazy_help (click's own completion loads
        every command to read its help), then the group's options."""
        from click.shell_completion import CompletionItem

        names = [name for name in self.list_commands(ctx) if name.startswith(incomplete)]
        items = [CompletionItem(name, help=self._command_help(ctx, name)) for name in names]
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def get_command(self, ctx, name):
        if name in self.lazy:
            module, _, attribute = self.lazy[name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
        else:
            command = super().get_command(ctx, name)
        if command is not None and examples_of(name):
            command.epilog = examples(name)
        return command

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        for problem in BROKEN_PLUGINS:
            click.echo(f"warning: {problem}; left out", err=True)
        try:
            code = self._help_when_bare(args, prog_name, complete_var, **extra)
        except click.ClickException as error:
            click.echo(f"Error: {error.format_message()}", err=True)
            sys.exit(error.exit_code)
        except click.Abort:  # Ctrl-C with Python's own handler (main called in-process)
            _stopped(signal.SIGINT)
        except Stopped as stop:  # a stop that cut a write short (undone), or let it end
            _stopped(stop.signum, stop.what_is_kept())
        sys.exit(code if isinstance(code, int) else 0)

    def _help_when_bare(self, *args, **extra):
        """click's main, where `sim` alone is its help, not an error. Apart from main's
        handlers, so that they see an error in writing the help too."""
        try:
            return super().main(*args, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as bare:
            click.echo(bare.ctx.get_help())
            return 0


def _stopped(signum, what=None):
    click.echo(f"interrupted: {what or kept_so_far()}", err=True)
    sys.exit(128 + signum)


class StandardOutputError(click.ClickException):
    """Standard output cannot be written: closed, or on a full device."""

    def __init__(self, reason):
        super().__init__(f"cannot write to the standard output: {reason}")


class StandardOutput(io.RawIOBase):
    """File descriptor 1, whose failures are a StandardOutputError: one error line.

    A broken pipe is left as it is: a reader that has gone (`| head`) ends a command
    quietly, and lets a run go on (_print). Once a failure is raised, what is left to
    write is dropped, so that the flush at exit does not raise it again."""

    def __init__(self, closed):
        super().__init__()
        self.closed_at_start, self.failed = closed, False

    def writable(self):
        return True

    def fileno(self):
        return 1

    def isatty(self):
        return os.isatty(1)

    def write(self, data):
        if self.failed:
            return len(data)
        if self.closed_at_start:
            self._fail("it is closed")
        try:
            return os.write(1, data)
        except BrokenPipeError:
            raise
        except OSError as error:
            self._fail(describe_os_error(error))

    def _fail(self, reason):
        self.failed = True
        raise StandardOutputError(reason)


def _guard_standard_output():
    """Make sys.stdout, in its encoding, write through a StandardOutput. A closed fd 1
    is None there (sim.cli.console has held the descriptor on /dev/null since)."""
    former = sys.stdout  # still held by sys.__stdout__: collected, it would close fd 1
    if not _is_fd_1(former):  # put in place by whoever runs the command: theirs
        return
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(StandardOutput(closed=former is None)),
        encoding=getattr(former, "encoding", None) or "utf-8",
        errors=getattr(former, "errors", None) or "strict",
        line_buffering=getattr(former, "line_buffering", False),
    )


def _is_fd_1(stream):
    try:
        return stream is None or stream.fileno() == 1
    except (AttributeError, OSError, ValueError):  # a stream in memory
        return False


def run_console():
    """The `sim` console script: main, then a quick exit.

    Tearing down an interpreter that ran compiled kernels takes about half a second;
    once the output is flushed and every file is closed there is nothing left to do."""
    # numpy's OpenBLAS starts a thread per core as numpy is imported, and they spin for
    # a while: tens of milliseconds of CPU in every command, for kernels that never call
    # BLAS. One thread is enough here; a value the user set wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Starting up makes some 10^5 objects that live to the end (numba's types, the
    # modules, the kernels): at the default threshold the collector walks them again and
    # again, about 0.1 s of CPU. Collecting young objects less often keeps that to a few
    # hundredths; garbage still goes, a little later.
    gc.set_threshold(YOUNG_OBJECTS_COLLECTED, *gc.get_threshold()[1:])
    # Ctrl-C or a scheduler's stop ends the command at once, in one line, exit 128 +
    # signal; a run, and a write that can be undone, take their own (stop_signals).
    stop_at_once()
    _guard_standard_output()
    try:
        main()
    except SystemExit as done:
        # Exit here, while the exception still holds its chain: a stop signal may have
        # cut an import short, and freeing what it half built can print a traceback.
        _exit_now(done.code if isinstance(done.code, int) else 1)
    _exit_now(0)


def _exit_now(code):
    try:
        sys.stdout.flush()
    except click.ClickException as error:  # what is still buffered cannot be written
        click.echo(f"Error: {error.format_message()}", err=True)
        code = code or error.exit_code
    if sys.stderr is not None:  # closed when sim started
        sys.stderr.flush()
    os._exit(code)


EXAMPLES = {
    "sim": [
        "sim calc --policy greedy -n 1e6",
        "sim montana -p search -n 1e4 --out results/montana-search.parquet",
        "sim compare results/",
    ],
    "policies": ["sim policies", "sim policies calc"],
    "bench": [
        "sim bench calc -p greedy",
        "sim bench calc --command 'calc -n 1e6'",
        "sim bench --startup",
    ],
    "replay": ["sim replay moves.jsonl", "sim replay -q moves.jsonl"],
    "show": [
        "sim show calc --seed 0 --deal 3",
        "sim show montana -p greedy --deal 12",
        "sim show calc --seed 0 --deal 1 --explain",
    ],
    "compare": [
        "sim compare results/",
        "sim compare a.parquet b.parquet --baseline greedy",
        "sim compare results/ --out table.csv",
    ],
    "report": ["sim report results/ --out report.html", "sim report a.parquet b.parquet"],
    "export": ["sim export results/run.parquet --to csv --out run.csv"],
}


def examples_of(name):
    """A command's examples: its own, or those its game declares."""
    return EXAMPLES.get(name) or (GAMES[name].examples if name in GAMES else ())


def examples(name):
    """A help page's closing lines: real commands, kept as written (`\\b`)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in examples_of(name))


@click.group(
    cls=SimGroup,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples("sim"),
)
@click.version_option(package_name="sim", prog_name="sim")
def main():
    """Batch simulator for patience games: seeded deals, pluggable policies, Parquet rows."""


_RUN_OPTIONS = (
    click.option(
        "-n",
        "--deals",
        "n",
        type=WholeNumber(1, "a whole number of deals"),
        default="1e4",
        show_default=True,
        help="Deals to play: 1000, 1e6, 2.5e5, 1_000_000.",
    ),
    click.option(
        "--seed",
        type=WholeNumber(0),
        default=0,
        show_default=True,
        help="Seed: deal i is fixed by (seed, i) alone.",
    ),
    click.option(
        "--start",
        type=WholeNumber(0),
        default=0,
        show_default=True,
        help="Index of the first deal.",
    ),
    click.option(
        "--workers",
        type=click.IntRange(1, 1024),
        default=os.cpu_count() or 1,
        show_default="all cores",
        help="Worker processes.",
    ),
    click.option(
        "--param",
        "params",
        multiple=True,
        metavar="K=V",
        help="A policy parameter (repeatable); K=A,B,C sweeps its values.",
    ),
    click.option(
        "--out",
        type=RunOutput("rows (Parquet)", folder_too=True),  # as typed: a file, a sweep's folder
        help="Result file (default: under results/GAME/, named for the run); for a sweep,"
        " its folder.",
    ),
    click.option("--overwrite", is_flag=True, help="Replace an existing result file."),
    click.option("--resume", is_flag=True, help="Complete an interrupted result file."),
    click.option(
        "--log-moves",
        type=RunOutput("move log"),
        help="Also write each deal's move log (JSON Lines).",
    ),
    click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors."),
    click.option(
        "--scheduler",
        metavar="ADDRESS",
        help="Run on a Dask cluster: tcp://HOST:PORT, or 'local' for a LocalCluster here.",
    ),
    click.option(
        "--deal-timeout",
        type=Seconds(),
        default=DEFAULT_DEAL_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help="Stop the run if one deal takes longer (a policy that loops).",
    ),
    *DEAL_OPTIONS,
)


def _run_game(game, options):
    say_kept("no deal finished; nothing written")
    rules = {rule.name: options[rule.name] for rule in game.rules}
    try:
        set_run_deals(game, options, rules)
    except ValueError as error:  # a game number or a layout file that is no deals
        raise click.ClickException(str(error)) from None
    check_deal_range(options["start"], options["n"])
    typed_out = options["out"]  # Path("odir/") drops the slash that says "a folder"
    options["out"] = None if typed_out is None else Path(typed_out)
    from sim.engine.run import sweep
    from sim.policies.registry import PolicyError

    policies = [resolve_policy(game.name, spec) for spec in options["policy"]]
    try:
        sweep.check_distinct(policies)
        if sweep.is_sweep(policies, options["params"]):
            return _run_sweep(game, policies, rules, options)
        if typed_out is not None:
            check_file_name(typed_out, "--out")
        sweep.grid_values(options["params"])  # a parameter given twice is refused
        params = policies[0].settings(options["params"])
    except PolicyError as error:  # a parameter the policy does not take, or a bad value
        raise click.UsageError(str(error)) from None
    except sweep.RunError as error:
        raise _refusal(error) from None
    request = _request(game, 0, params, rules, options, options["out"])
    result = _already_complete(request, options) or _play(request, options)
    if not options["quiet"] and result.kept:
        _print(format_summary(request, result))
    if not result.completed or result.signal:
        _stop(request, result, "run the same command with --resume to finish")


def _refusal(error):
    """The click error for a RunError: a usage error (exit 2) for what was typed (a
    BadRequest), else a failure of the work (exit 1)."""
    from sim.engine.run.request import BadRequest

    if isinstance(error, BadRequest):
        return click.UsageError(str(error))
    return click.ClickException(str(error))


def _already_complete(request, options):
    """The result read back from request's file when it already holds this very run,
    complete, said in one line on stderr; None when there is a run to play."""
    result = _read_back_if_complete(request)
    if result is not None:
        _tell(options, f"{result.path} {ALREADY_COMPLETE}")
    return result


def _read_back_if_complete(request):
    """The result read back from request's file when it already holds this very run,
    complete: the same command run again has nothing to play. None otherwise."""
    from sim.engine.run.request import RunError, check_typed
    from sim.engine.run.resume import already_complete

    try:
        check_typed(request)  # what was typed is refused first, whatever the file holds
        return already_complete(request)
    except RunError as error:
        raise _refusal(error) from None


def _request(game, which, params, rules, options, out, resume=None):
    """The run of the `which`-th --policy with params, into out (None: the default)."""
    from sim.engine.run.runner import RunRequest, default_filename
    from sim.policies.registry import resolve

    spec = options["policy"][which]
    policy = resolve(game.name, spec)
    start, n = options["start"], options["n"]
    out = out or Path("results") / game.name / default_filename(
        game, policy, params, rules, options["seed"], start, n
    )
    return RunRequest(
        game=game,
        policy=policy,
        policy_spec=spec,
        params=params,
        rules=rules,
        seed=options["seed"],
        start=start,
        n=n,
        workers=options["workers"],
        out=out,
        overwrite=options["overwrite"],
        resume=options["resume"] if resume is None else resume,
        log_moves=options["log_moves"],
        scheduler=options["scheduler"],
        deal_timeout=options["deal_timeout"],
        source=options.get("source"),
    )


def _play(request, options):
    """Play one run with a progress bar; domain errors become one-line click errors."""
    from sim.engine.run.results import ResultFileError
    from sim.engine.run.runner import RunError, run
    from sim.policies.registry import PolicyError

    bar = _ProgressBar(request.n, options["quiet"])
    # One StopSignals from the run's first step until what it kept is said: a stop
    # that comes after the run's last look is still noted, and acted on by the caller.
    with StopSignals() as stop:
        try:
            say = None if options["quiet"] else notice
            result = run(request, progress=bar.update, notice=say, stop=stop)
        except RunError as error:
            raise _refusal(error) from None
        except (ResultFileError, PolicyError, _cluster_error()) as error:
            raise click.ClickException(str(error)) from None
        finally:
            bar.close()
        say_kept(f"{result.kept:,} of {request.n:,} deals kept in {result.path}")
    result.signal = result.signal or stop.signum
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    return result


def _cluster_error():
    # Imported only once something failed: a local run never loads the cluster code,
    # whose asyncio import alone costs some 50 ms of CPU.
    from sim.engine.run.cluster import ClusterError

    return ClusterError


def _stop(request, result, how_to_finish, sweep_note=""):
    """End the command after a run that did not complete, or that a stop signal asked to
    end as it wrote its last deals: what was kept, and the exit."""
    if result.completed:
        then = f"; {sweep_note}{how_to_finish}" if sweep_note else ""
        kept = f"all {request.n:,} deals kept in {result.path} (complete{then})"
    elif result.kept:
        kept = (
            f"{result.kept:,} of {request.n:,} deals kept in {result.path} (marked "
            f"incomplete; {sweep_note}{how_to_finish})"
        )
    elif sweep_note:
        kept = f"no deal of this setting finished ({sweep_note}{how_to_finish})"
    else:
        kept = "no deal finished; nothing written"
    if result.error:
        click.echo(f"Error: {result.error}; {kept}", err=True)
        sys.exit(FAILED_EXIT)
    click.echo(f"interrupted: {kept}", err=True)
    sys.exit(128 + (result.signal or signal.SIGINT))


def _run_sweep(game, policies, rules, options):
    """Every setting of the grid on the same deals, one file each in one folder, then
    the comparison table against the first setting. A setting whose file already holds
    its run, complete, is not played again."""
    from sim.engine.run import sweep

    if options["log_moves"]:
        raise click.UsageError("--log-moves logs one run; give a sweep's settings one at a time")
    grid = sweep.settings(policies, options["params"])
    folder, requests = _sweep_requests(game, policies, grid, rules, options)
    complete = [_read_back_if_complete(request) for request in requests]
    files = [request.out for request in requests]
    kept = [path for path, result in zip(files, complete, strict=True) if result is not None]
    sweep.check_files(files, options["resume"], options["overwrite"], kept)
    each = zip(grid, requests, complete, strict=True)
    for number, (setting, request, read_back) in enumerate(each, 1):
        _play_setting(number, len(grid), setting, request, read_back, options)
    say_kept(f"every setting of the sweep is kept in {folder}")
    _compare_sweep(folder, files, options)


def _sweep_requests(game, policies, grid, rules, options):
    """The sweep's folder, and the run of each setting of grid into its file there;
    each resumed only if begun."""
    from sim.engine.run import sweep

    start, n, seed = options["start"], options["n"], options["seed"]
    folder = options["out"] or sweep.default_folder(
        game, policies, options["params"], rules, seed, start, n
    )
    sweep.check_folder(folder)
    requests = []
    for setting in grid:
        path = sweep.setting_file(folder, game, setting, rules, seed, start, n)
        resume = options["resume"] and sweep.started(path)
        which = policies.index(setting.policy)
        requests.append(_request(game, which, setting.params, rules, options, path, resume))
    return folder, requests


def _play_setting(number, settings, setting, request, complete, options):
    """Play the number-th of a sweep's settings, unless its file is complete (the result
    read back from it); a run that does not complete ends the sweep."""
    label = f"[{number}/{settings}] {setting.policy.name} {_params_text(setting)}".rstrip()
    if number > 1 or options["resume"]:
        say_kept(
            f"sweep stopped at setting {number} of {settings}; "
            "run the same command with --resume to go on"
        )
    if complete is not None:
        _tell(options, f"{label}: {request.out} {ALREADY_COMPLETE}")
        return
    _tell(options, label)
    result = _play(request, options)
    if result.completed and result.signal and number == settings:
        left, then = "every setting is done; ", "for the comparison"
        _stop(request, result, f"run the same command with --resume {then}", left)
    if not result.completed or result.signal:
        left = f"sweep stopped at setting {number} of {settings}; "
        _stop(request, result, "run the same command with --resume to go on", left)


def _params_text(setting):
    return " ".join(f"{k}={v}" for k, v in setting.params.items())


def _tell(options, text):
    """A message on stderr (a sweep's progress, a run found complete), unless quiet."""
    if not options["quiet"]:
        click.echo(text, err=True)


def _print(text, nl=True):
    """A run's line on standard output. A reader that has gone (`| head`) does not end
    the run: its results are in its files, and how it ended is said on stderr."""
    try:
        click.echo(text, nl=nl)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is left in the buffer goes nowhere
        os.close(devnull)


def _compare_sweep(folder, files, options):
    """The comparison table of the sweep's files, the first setting as the baseline."""
    if options["quiet"]:
        return
    from sim.engine.analysis import formats
    from sim.engine.analysis.compare import comparison, ranked
    from sim.engine.analysis.inputs import load_runs

    _print(f"{len(files)} settings in {folder}, best first, paired against the first:\n")
    table = ranked(comparison(load_runs(files), None))  # the baseline chosen before
    _print(formats.render(table, "table"), nl=False)


class _ProgressBar:
    """A tqdm bar that appears as play starts (after the checks, so never before an error).

    Its rate is the deals played now (not those a --resume carries over) over the time
    since play began. Chunks finish in bursts, which tqdm's moving average would take for
    a speed-up."""

    def __init__(self, total, quiet):
        self.total, self.quiet, self.bar = total, quiet, None

    def update(self, deals):
        if self.bar is None:
            import tqdm

            tqdm.tqdm.monitor_interval = 0  # no monitor thread: workers may be forked later
            self.bar = tqdm.tqdm(
                total=self.total,
                initial=deals,
                unit=" deals",
                unit_scale=self.total >= 10_000,  # 1.00M deals, but 7/40, not 7.00/40.0
                smoothing=0,  # the mean rate since the bar appeared
                ascii=True if no_color() else None,
                **_terminal_size(),
                # None: off when stderr is not a terminal; closed at start, it is None
                disable=True
                if self.quiet or _env_flag("TQDM_DISABLE") or sys.stderr is None
                else None,
                file=sys.stderr,
            )
            return
        self.bar.update(deals)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _terminal_size():
    """{}: tqdm fits the bar to the terminal. A terminal that reports no size (a
    pseudo-terminal nobody sized, as `script` or `docker exec -t` may give) would get
    nothing drawn: it gets 80 columns by 24 lines."""
    try:
        sized = os.get_terminal_size(sys.stderr.fileno()).columns > 0
    except (OSError, ValueError, AttributeError):
        sized = True  # not a terminal, or closed (None): tqdm leaves the bar off
    return {} if sized else {"ncols": 79, "nrows": 23}


def _env_flag(name):
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def speed_text(speed):
    """Deals a second, whole above 10, else to two figures: a slow policy's 0.25 is
    not 0."""
    return f"{speed:,.0f}" if speed >= 10 else f"{speed:.2g}"


def _deals_played(request):
    if request.source is None:
        return f"seed {request.seed}"
    return f"{request.source.label(request.start, request.n)} (seed {request.seed})"


def format_summary(request, result):
    """The closing summary of a run: the same lines whether its figures come from the
    deals just played or from its file read back (a run found complete)."""
    totals = result.totals
    low, high = totals.win_interval
    rate = totals.wins / totals.deals if totals.deals else 0.0
    rules = " ".join(f"{k}={v}" for k, v in request.rules.items())
    lines = [
        f"{request.game.name} · {request.policy.name} · {rules} · {_deals_played(request)}",
        f"deals       {totals.deals:,}",
        f"wins        {totals.wins:,}  ({rate:.3%}, 95% CI {low:.3%} to {high:.3%})",
        f"mean score  {totals.score_sum / max(totals.deals, 1):.2f}",
    ]
    outcomes = _in_game_order(request.game, totals.outcomes)
    if set(outcomes) - {"won", "lost"}:
        shares = " · ".join(f"{k} {v / max(totals.deals, 1):.2%}" for k, v in outcomes.items())
        lines.append(f"outcomes    {shares}")
    wall = round(result.wall_time, 3)  # to the millisecond, as the result file records it
    speed = result.deals_played / wall if wall > 0 else 0.0
    lines.append(f"wall time   {wall:.2f} s  ({speed_text(speed)} deals/s)")
    lines.append(f"written     {result.path}")
    return "\n".join(lines)


def _in_game_order(game, outcomes):
    """The outcomes that occurred, in the order of the game's labels (rows read back
    from a file are counted most frequent first)."""
    labels = next((column.labels for column in game.columns if column.name == "outcome"), ())
    order = {label: index for index, label in enumerate(labels)}
    occurred = [(k, v) for k, v in outcomes.items() if v]
    return dict(sorted(occurred, key=lambda item: order.get(item[0], len(order))))


for _game in GAMES.values():
    game_command(
        main,
        _game,
        _run_game,
        f"Play {_game.title} deals with a policy; one Parquet row per deal.",
        _RUN_OPTIONS,
        many_policies=True,
    )


@main.command()
@click.argument("game", required=False, type=click.Choice(sorted(GAMES)))
def policies(game):
    """List the policies of every game (or of GAME), with their parameters."""
    from sim.policies.registry import PolicyError, builtin_policies, plugin_policies

    for name in [game] if game else list(GAMES):
        click.echo(name)
        try:
            found = builtin_policies(name) + plugin_policies(name)
        except PolicyError as error:
            raise click.ClickException(str(error)) from None
        for policy in found:
            kind = "" if policy.lazy or policy.compiled else " (python)"
            click.echo(f"  {policy.name:<14}{policy.summary}{kind}")
            for param in policy.params:
                click.echo(f"  {'':<14}  --param {param.describe()}")


@main.command()
@click.argument("games", nargs=-1, type=click.Choice(sorted(GAMES)))
@click.option(
    "--policy",
    "-p",
    "policy_names",
    multiple=True,
    shell_complete=complete_policies(),
    help="Only these policies.",
)
@click.option(
    "-n",
    "--deals",
    "n",
    type=WholeNumber(1, "a whole number of deals"),
    default="2e5",
    show_default=True,
    help="Deals per timed run (fewer for slow policies).",
)
@click.option("--repeat", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option(
    "--command",
    "commands",
    multiple=True,
    metavar="ARGS",
    help="Also time a whole `sim ARGS` command, e.g. 'calc -n 1e6'.",
)
@click.option(
    "--reference",
    metavar="COMMAND",
    help="With --command: also time this command line (a plain C loop, say), in turn.",
)
@click.option(
    "--startup",
    is_flag=True,
    help="Time help, version, the policy list and completion instead, beside the floor "
    "of python -c 'import click, tqdm'.",
)
def bench(games, policy_names, n, repeat, commands, reference, startup):
    """Measure deals per second per core of the compiled kernels (medians)."""
    from sim.engine.run.bench import time_command, time_kernel, time_startup
    from sim.engine.run.compile_notice import announced_compile
    from sim.policies.registry import PolicyError

    if reference and not commands:
        raise click.UsageError("--reference needs --command: the two are timed in turn")
    _check_command_lines(commands, reference)
    if startup:
        timed = time_startup(repeat)
        floor = timed[0][1]
        for label, seconds in timed:
            click.echo(f"{label:<34} median {seconds:.3f} s  ({seconds / floor:.2f}x the floor)")
        return

    kernels = _benched_policies(games or list(GAMES), policy_names)
    for game in games if policy_names else ():  # a game named and then left out misleads
        if not any(benched == game for benched, _ in kernels):
            names = ", ".join(policy_names)
            raise click.UsageError(f"{game} has no policy among {names}: name its own")
    click.echo(
        f"{'game':<8} {'policy':<14} {'deals':>9} {'median µs/deal':>15} {'deals/s/core':>13}"
    )
    for name, policy in kernels:
        try:
            with announced_compile(GAMES[name], policy, notice):
                deals, seconds = time_kernel(GAMES[name], policy, n, repeat)
        except PolicyError as error:
            raise click.ClickException(str(error)) from None
        click.echo(
            f"{name:<8} {policy.name:<14} {deals:>9,} {seconds / deals * 1e6:>15.2f}"
            f" {deals / seconds:>13,.0f}"
        )
    for args in commands:
        timed = time_command(args, repeat, reference)
        wall, cpu = timed["sim"]
        click.echo(f"sim {args}: median wall {wall:.2f} s, CPU {cpu:.2f} s over {repeat} runs")
        if reference:
            ref_wall, ref_cpu = timed["reference"]
            click.echo(
                f"{reference}: median wall {ref_wall:.2f} s, CPU {ref_cpu:.2f} s; "
                f"sim / reference: wall {wall / ref_wall:.2f}x, CPU {cpu / ref_cpu:.2f}x"
            )


def _check_command_lines(commands, reference):
    """Refuse a --command or --reference that cannot be split into words: a usage error."""
    from sim.engine.run.bench import BenchError, check_command_lines

    try:
        check_command_lines(commands, reference)
    except BenchError as error:
        raise click.UsageError(error.message) from None


def _benched_policies(games, names):
    """[(game, policy)]: the built-in policies of games that names pick (all without
    names). A name that picks none is refused, as a run refuses it: before any timing."""
    from sim.policies.registry import PolicyError, builtin_policies

    try:
        found = [(game, policy) for game in games for policy in builtin_policies(game)]
    except PolicyError as error:
        raise click.ClickException(str(error)) from None
    for name in names:
        if not any(policy.name == name for _, policy in found):
            raise click.UsageError(_not_benched(name, games, found))
    return [(game, policy) for game, policy in found if not names or policy.name in names]


def _not_benched(name, games, found):
    """Why bench times no policy called name: a plug-in (only built-in kernels are
    timed; a whole run of it is, with --command), or no policy of the games."""
    from sim.policies.registry import PolicyError, plugin_policies

    try:
        plugged_in = any(p.name == name and p.game in games for p in plugin_policies())
    except PolicyError:
        plugged_in = False  # the plug-ins cannot be loaded: the name is not theirs
    if ":" in name or plugged_in:
        return f"bench times built-in policies, not {name!r}: time a run of it with --command"
    known = ", ".join(dict.fromkeys(policy.name for _, policy in found))
    return f"unknown policy {name!r} for {_either(games)} (known: {known})"


def _either(names):
    return " or ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} or {names[-1]}"


@main.command()
@click.argument("log", type=MoveLogFile())
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line.")
def replay(log, quiet):
    """Check every deal of a move log (JSON Lines) against the rules."""
    from sim.engine.referee import check_log_file

    deals = bad = malformed = 0
    for number, line, verdict in check_log_file(log):
        if line is None:
            malformed += 1
            click.echo(f"line {number}: {verdict}")
            continue
        deals += 1
        if not verdict.ok:
            bad += 1
            if not quiet:
                click.echo(f"line {number}{_which_deal(line)}: {verdict}")
    summary = (
        f"checked {deals:,} deal{'s' if deals != 1 else ''} in {log}: "
        f"{deals - bad:,} valid, {bad:,} invalid"
    )
    if malformed:
        summary += f", {malformed:,} malformed line{'s' if malformed > 1 else ''}"
    click.echo(summary)
    if bad or malformed or not deals:
        sys.exit(1)


def _which_deal(line):
    """' (calc seed 0 deal 3)', or as much of it as the line says: ' (calc)' for a bare
    layout, nothing for a line that names no game."""
    game = line.get("game")
    if not isinstance(game, str):
        return ""
    words = [game] + [f"{key} {json.dumps(line[key])}" for key in ("seed", "deal") if key in line]
    return f" ({' '.join(words)})"


if __name__ == "__main__":
    run_console()
