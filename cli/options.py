"""The command line's own conventions: counts written as people write them, the --policy
option of a game command with its completion and its errors, NO_COLOR."""

import importlib.util
import math
import os
import stat
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

import click

# Seeds, deal indices and counts of deals are int64 in the kernels and the result files.
INT64_MAX = 2**63 - 1


class WholeNumber(click.ParamType):
    """An integer written as `1000`, `1e6`, `2.5e5` or `1_000_000`, in low..high."""

    name = "N"

    def __init__(self, low=0, what="a whole number", high=INT64_MAX):
        self.low = low
        self.what = what
        self.high = high

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            number = Decimal(value)
        else:
            try:
                number = Decimal(str(value).strip().replace("_", ""))
            except InvalidOperation:
                self.fail(f"{value!r} is not {self.what}", param, ctx)
        if not number.is_finite() or number != number.to_integral_value():
            self.fail(f"{value!r} is not {self.what}", param, ctx)
        if number < self.low:
            self.fail(f"{value!r} is below {self.low}", param, ctx)
        if number > self.high:
            self.fail(f"{value!r} is above {self.high}", param, ctx)
        return int(number)


class UnreadableInput(click.ClickException):
    """A file given to read that cannot be read: a failure (exit 1), as an unreadable
    input is for every command, not a mistake in what was typed."""


class InputFile(click.Path):
    """A file to read: it must exist, be a regular file and open for reading. A FIFO
    would block the read until some writer came, and a device such as /dev/zero never
    ends."""

    def __init__(self):
        super().__init__(dir_okay=False, path_type=Path)  # completion offers files

    def convert(self, value, param, ctx):
        path = Path(value)
        try:
            mode = path.stat().st_mode
            if stat.S_ISDIR(mode):
                raise UnreadableInput(f"{value} is a folder, not a file")
            if not stat.S_ISREG(mode):
                raise UnreadableInput(f"{value}: not a regular file")
            path.open("rb").close()
        except FileNotFoundError:
            raise UnreadableInput(f"{value}: no such file") from None
        except OSError as error:  # no permission, a name too long
            raise UnreadableInput(f"{value}: cannot be read ({error.strerror})") from None
        return path


class OutputFile(click.Path):
    """A file to write, checked as typed: pathlib drops a trailing slash, so `odir/`
    would be written as a file named odir."""

    def __init__(self):
        super().__init__(path_type=Path)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and names_a_folder(value):
            self.fail(_folder_not_file(value), param, ctx)
        return super().convert(value, param, ctx)


class MoveLogFile(InputFile):
    """A move log to read: refused at once, in one line, when it is no log at all (a
    Parquet result file, binary data, text of another kind)."""

    def convert(self, value, param, ctx):
        from sim.engine.referee import not_a_move_log

        path = super().convert(value, param, ctx)
        problem = not_a_move_log(path)
        if problem:
            self.fail(problem, param, ctx)
        return path


class RunOutput(click.Path):
    """An output of a run, `what` it holds: not `-`, which would read as the standard
    output (a run writes its files to files only; its summary goes there). A file only,
    checked as typed (OutputFile), unless `folder_too` (--out, a sweep's folder): then
    the text as typed, for the run to read."""

    def __init__(self, what, folder_too=False):
        super().__init__(path_type=None if folder_too else Path)
        self.what, self.folder_too = what, folder_too

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value == "-":
            self.fail(
                f"'-' would be the standard output, and a run writes its {self.what} to a "
                "file only: give a file name",
                param,
                ctx,
            )
        if isinstance(value, str) and not self.folder_too and names_a_folder(value):
            self.fail(_folder_not_file(value), param, ctx)
        return super().convert(value, param, ctx)


def names_a_folder(text):
    """Whether a path as typed names a folder: `odir/`, `odir/.`, `..`."""
    return os.path.basename(text) in ("", ".", "..")


def check_file_name(text, option):
    """Refuse a path typed for option (OutputFile's check, where only some uses of the
    option take a file: a single run's --out, not a sweep's)."""
    if names_a_folder(text):
        raise click.BadParameter(_folder_not_file(text), param_hint=f"'{option}'")


def _folder_not_file(text):
    return f"{text!r} names a folder, not a file"


class Seconds(click.FloatRange):
    """A number of seconds above 0; inf is no limit. nan compares false with every bound,
    so the range alone would let it through."""

    def __init__(self):
        super().__init__(0, min_open=True)

    def convert(self, value, param, ctx):
        seconds = super().convert(value, param, ctx)
        if math.isnan(seconds):
            self.fail(f"{seconds} is not in the range x>0.", param, ctx)
        return seconds


def no_color():
    """NO_COLOR set to anything but "" (no-color.org): plain text, no ANSI colour, and an
    ASCII progress bar."""
    return bool(os.environ.get("NO_COLOR"))


def notice(line):
    """One line to stderr before a wait the user should know of (a first compile)."""
    click.echo(line, err=True)


def check_deal_range(start, n):
    """Refuse deals that run past the last deal index (deal indices are int64)."""
    if start + n - 1 > INT64_MAX:
        raise click.UsageError(
            f"--start {start} with -n {n} goes past the last deal index, {INT64_MAX}"
        )


def resolve_policy(game, spec):
    """The policy a --policy value names. A value that names none (an unknown name, a
    malformed spec, a module, file or attribute that is not there, a policy of another
    game) is a usage error (exit 2); a policy that is there and cannot be loaded (a
    plug-in's code that fails, a declaration refused, a broken installation) is a
    failure (exit 1)."""
    from sim.policies.registry import PolicyError, resolve

    try:
        return resolve(game, spec)
    except PolicyError as error:
        kind = click.UsageError if _names_no_policy(game, spec) else click.ClickException
        raise kind(str(error)) from None


def _names_no_policy(game, spec):
    """Once resolve(game, spec) has failed: whether the fault is the value's own, not
    that of code it found (the registry's error says which in words only)."""
    from sim.policies.registry import Policy

    if ":" not in spec:
        return _installed_policies_load(game)
    source, _, attribute = spec.rpartition(":")
    if not source or not attribute:
        return True
    module = _loaded_module(source)
    if module is None:  # not there, or there and its code failed
        return not _exists(source)
    found = getattr(module, attribute, None)
    return not isinstance(found, Policy) or found.game != game  # else: a refused name


def _installed_policies_load(game):
    from sim.policies.registry import PolicyError, builtin_policies, plugin_policies

    try:
        builtin_policies(game)
        plugin_policies(game)
    except PolicyError:
        return False
    return True


def _is_file_spec(source):
    return source.endswith(".py") or "/" in source or os.sep in source


def _loaded_module(source):
    """The module a spec's source names, if it was loaded."""
    if not _is_file_spec(source):
        return sys.modules.get(source)
    path = os.path.realpath(source)
    loaded = list(sys.modules.values())
    return next((m for m in loaded if _file_of(m) == path), None)


def _file_of(module):
    name = getattr(module, "__file__", None)
    return os.path.realpath(name) if isinstance(name, str) else None


def _exists(source):
    """Whether a spec's source names a Python file or a module that is there."""
    if _is_file_spec(source):
        return source.endswith(".py") and os.path.isfile(source)
    try:
        return importlib.util.find_spec(source) is not None
    except (ImportError, ValueError):  # a package above it is not there; not a name
        return False
    except Exception:  # a package above it is there, and its code failed
        return True


def complete_policies(game=None):
    """A shell_complete callback for --policy: the names of the game's built-in policies
    (without game: those of the games the command was given, or of all) that start with
    the word being completed. Plug-in policies are left out: completion loads no plug-in."""

    def complete(ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        from sim.engine.games import registered_games
        from sim.policies.registry import PolicyError, builtin_policies

        # While the option lacks its value, click leaves the words before it unparsed.
        given = ctx.params.get("games") or ctx.args
        games = [game] if game else [g for g in given if g in registered_games()] or [None]
        items = {}
        try:
            for name in games:
                for policy in builtin_policies(name):
                    if policy.name.startswith(incomplete) and policy.name not in items:
                        items[policy.name] = CompletionItem(policy.name, help=policy.summary)
        except PolicyError:
            pass  # a game whose policies cannot be loaded: only what was found
        return list(items.values())

    return complete


def game_command(group, game, callback, doc, common_options, many_policies=False):
    """Add to group a command named for game: --policy (the game's default; repeatable
    with many_policies), its rule options, then common_options."""

    def command(**options):
        callback(game, options)

    command.__doc__ = doc
    command.__name__ = game.name
    for rule in reversed(game.rules):
        command = click.option(
            f"--{rule.name.replace('_', '-')}",
            rule.name,
            type=click.IntRange(rule.low, rule.high),
            default=rule.default,
            show_default=True,
            help=rule.help,
        )(command)
    for decorator in reversed(common_options):
        command = decorator(command)
    command = click.option(
        "--policy",
        "-p",
        default=(game.default_policy,),
        # Taken many times even for one policy, so that a second -p is refused, not
        # silently put in place of the first.
        multiple=True,
        callback=None if many_policies else _one_policy,
        show_default=True,
        shell_complete=complete_policies(game.name),
        help="Policy name, MODULE:ATTRIBUTE or PATH/FILE.py:ATTRIBUTE"
        + (" (repeat it to sweep several)." if many_policies else "."),
    )(command)
    return group.command(name=game.name)(command)


def _one_policy(ctx, param, values):
    if len(values) > 1:
        times = "twice" if len(values) == 2 else f"{len(values)} times"
        given = ", ".join(values)
        raise click.UsageError(
            f"--policy is given {times} ({given}); {ctx.command_path} plays one policy"
        )
    return values[0]
