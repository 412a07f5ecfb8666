"""`sim show GAME`: one deal drawn as dealt, then move by move, then its outcome."""

import json
import os
import sys

import click

from sim.cli.deal_options import DEAL_OPTIONS, deal_source, given
from sim.cli.options import (
    INT64_MAX,
    InputFile,
    OutputFile,
    WholeNumber,
    game_command,
    no_color,
    notice,
    resolve_policy,
)
from sim.engine.games import get_game, registered_games
from sim.engine.layouts import check_layout, layouts_seed, parse_layout
from sim.engine.referee import LINE_LIMIT, IllegalMove
from sim.policies.registry import PolicyError, resolve

# Playing a deal and the solvers of --explain load numba: they are imported where used,
# so that help pages answer at once.


@click.group()
def show():
    """Look at one deal: the layout, each move with the position redrawn, the outcome.

    With --explain the game's exact solver (the Calculation oracle, told the whole
    stock order; the Montana and Jokers solvers) also says where the deal was lost:
    it marks the first move after which no line of play wins, and names a winning
    alternative with the solver's line from there. A move is blamed only when the
    position before it is proved winnable and the one after it proved lost; positions
    the solver leaves undecided within --explain-nodes positions (for each position it
    judges) are reported as such. A deal the policy won, or one that could not be won
    from the start, has no move to blame, and the output says so. A proof of loss
    grows costly with the cards still to play: a Calculation deal lost early often
    stays undecided.

    Montana: with --redeals 0 the whole deal is judged. With redeals, only the last
    phase (from the grid the last redeal dealt): an earlier phase that cannot be won
    may still lead to a winning redeal, so it is not judged. The Montana solver leaves
    the move cap aside.
    """


class LayoutValue(InputFile):
    """A layout file, or the layout itself typed in: a value with a space in it, or
    JSON, that names no file."""

    name = "LAYOUT"

    def convert(self, value, param, ctx):
        typed = isinstance(value, str) and (value.lstrip().startswith("{") or " " in value)
        if typed and not os.path.lexists(value):
            return value
        return super().convert(value, param, ctx)


_SHOW_OPTIONS = (
    click.option("--seed", type=WholeNumber(0), default=0, show_default=True),
    click.option("--deal", type=WholeNumber(0), default=0, show_default=True, help="Deal index."),
    click.option("--param", "params", multiple=True, metavar="K=V"),
    click.option(
        "--layout",
        type=LayoutValue(),
        help="Play this layout instead of a seeded deal: typed in the game's notation "
        "(quoted), or a file of it, JSON as in a move log, or a move-log line.",
    ),
    *DEAL_OPTIONS,
    click.option(
        "--html",
        type=OutputFile(),
        metavar="FILE",
        help="Also write the deal as one web page that replays it move by move.",
    ),
    click.option("--overwrite", is_flag=True, help="Replace the --html file if it exists."),
    click.option("--step", is_flag=True, help="Wait for Enter after each move; q and Enter stop."),
    click.option("--final", is_flag=True, help="Show only the end of the deal."),
    click.option("--no-color", is_flag=True, help="Plain text, no colour (as NO_COLOR does)."),
    click.option(
        "--explain",
        is_flag=True,
        help="Mark the first move after which the deal could not be won, by the game's "
        "exact solver (see `sim show --help`).",
    ),
    click.option(
        "--explain-nodes",
        type=WholeNumber(1),
        metavar="N",
        help="Positions the solver may search for each position --explain judges "
        "[default: its policy's, 100,000 for the oracle, 1,000,000 for the solvers].",
    ),
)


def _show(game, options):
    from sim.engine.run.stop_signals import ending_at_once

    # show writes nothing: a stop ends it at once, even as it imports or compiles.
    with ending_at_once():
        _show_now(game, options)


def _show_now(game, options):
    from sim.engine.run.compile_notice import announced_compile
    from sim.engine.run.one_deal import play_one

    if options["explain_nodes"] is not None and not options["explain"]:
        raise click.UsageError("--explain-nodes needs --explain")
    if options["step"] and options["final"]:
        raise click.UsageError("--step shows the moves one by one, --final only the end: give one")
    explanation = None
    try:
        if options["explain"]:
            from sim.engine.analysis import explain

            _check_explainable(explain, game)
        _check_html(options)
        rules = {rule.name: options[rule.name] for rule in game.rules}
        layout, source = _deal_shown(game, options, rules)
        policy, params = _policy_and_params(game, options)
        rules = {rule.name: options[rule.name] for rule in game.rules}
        with announced_compile(game, policy, notice):
            if layout is not None:
                check_layout(game, layout, rules)
            line = play_one(game, policy, params, rules, options["seed"], options["deal"], layout)
        if options["explain"]:
            solver = resolve(game.name, explain.SOLVERS[game.name])
            if sys.stderr.isatty():
                notice(f"explain: the {solver.name} judges positions of the deal...")
            with announced_compile(game, solver, notice):
                explanation = explain.explain_line(line, options["explain_nodes"])
    except (PolicyError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    color = False if options["no_color"] or no_color() else None
    if options["html"]:
        _write_html(line, source, explanation, options)
    blocks = show_blocks(line, final=options["final"], source=source, explanation=explanation)
    for block in blocks:
        click.echo(block, color=color)
        if options["step"] and block.startswith("\n") and not _carry_on():
            return


def _check_explainable(explain, game):
    """Refuse --explain for a game without an exact solver: a usage error."""
    try:
        explain.check_explainable(game)
    except explain.ExplainError as error:
        raise click.UsageError(str(error)) from None


def _policy_and_params(game, options):
    """The policy (resolve_policy says which errors are usage errors) and its parameters:
    a --param it does not take is a usage error, a parameter a --layout line logged that
    it cannot take a failure to read that line (_params)."""
    policy = resolve_policy(game.name, options["policy"])
    try:
        return policy, _params(policy, options)
    except PolicyError as error:
        raise click.UsageError(str(error)) from None


def show_blocks(line, final=False, source=None, explanation=None):
    """The text of `sim show` for a move-log line, in blocks: the header, the deal, each
    move with the position after it (these blocks start with a blank line), the outcome,
    and with an explanation (engine.analysis.explain) its mark on the move that lost the
    deal and its summary."""
    game = get_game(line["game"])
    rules = " ".join(f"{k}={v}" for k, v in line.items() if k in game.rule_names)
    where = source or f"seed {line['seed']} · deal {line['deal']}"
    # The policy with its parameters, as a run of several settings labels it.
    policy = " ".join([line["policy"], *(f"{k}={v}" for k, v in line.get("params", {}).items())])
    yield f"{line['game']} · {where} · policy {policy}" + (f" · {rules}" if rules else "")
    position = game.referee_module.position(line)
    if not final:
        yield "dealt:\n" + game.drawing(position)
    for number, move in enumerate(line["moves"], 1):
        try:
            position.play(number, move)
        except IllegalMove as illegal:
            raise click.ClickException(
                f"move {number} {move} is illegal: {illegal.reason}"
            ) from None
        if not final:
            mark = explanation.mark(number) if explanation else ""
            yield f"\n{number}. {_short(move)}{mark}\n" + game.drawing(position)
    if final:
        yield f"after {len(line['moves'])} moves:\n" + game.drawing(position)
    yield f"\noutcome: {line['outcome']} · score {line['score']} · {len(line['moves'])} moves"
    if explanation:
        yield "\n".join(explanation.summary())


def _short(move):
    return "redeal" if move.startswith("redeal:") else move


def _deal_shown(game, options, rules):
    """(layout, source) of the deal to show: the layout to play (None: the seeded deal
    of --seed and --deal) and the words that name where it comes from (None: the seed).
    Sets the seed and deal whose streams the policy and Montana's redeals draw on."""
    named = [name for name in ("layout", "layout_file", "pysol") if options[name]]
    if len(named) > 1:
        shown = " and ".join("--" + name.replace("_", "-") for name in named)
        raise click.UsageError(f"{shown} name other deals: give one")
    if options["layout"]:
        return _typed_layout(game, options)
    source = deal_source(game, options, rules)
    if source is None:
        return None, None
    if options["pysol"]:
        if given("deal"):
            raise click.UsageError("--pysol names its own deal; --deal is for sim's seeded deals")
        options["deal"] = options["start"]
    source.check(options["deal"], 1)
    options["seed"] = source.seed
    return source.layout(options["deal"]), source.name(options["deal"])


def _typed_layout(game, options):
    """A layout of --layout: a move-log line's seed and deal are its own; a layout alone
    is deal 0 of its own seed (engine.layouts), as in a file of that one layout, unless
    --seed or --deal say otherwise."""
    value = options["layout"]
    layout = _read_layout(game, options)
    if not options.get("from_line"):
        options["seed"] = options["seed"] if given("seed") else layouts_seed([layout])
        options["deal"] = options["deal"] if given("deal") else 0
    return layout, "layout typed in" if isinstance(value, str) else f"layout {value.name}"


def _read_layout(game, options):
    """The layout of --layout, typed in or in a file: in the game's text notation, a
    move log's `layout`, or a whole move-log line, which also sets the options it
    records (_take_settings_of_line)."""
    path = options["layout"]
    if isinstance(path, str):
        text, path = path.encode("utf-8"), "the layout typed in"
    else:
        with path.open("rb") as file:
            text = file.read(LINE_LIMIT + 1)
    if len(text) > LINE_LIMIT:
        raise ValueError(f"{path}: larger than {LINE_LIMIT // 2**20} MiB, not a layout")
    try:
        decoded = text.decode("utf-8")
        if not decoded.strip().startswith(("{", "[", '"', "null")):
            return _notation_layout(game, decoded, path)
        data = json.loads(decoded)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1 and all(map(_is_json, lines)):
            raise ValueError(
                f"{path}: {len(lines):,} lines of JSON, a move log: give one line of it "
                "(sed -n 5p LOG.jsonl > line.json)"
            ) from None
        raise ValueError(f"{path}: not valid JSON ({error.msg})") from None
    except RecursionError:
        raise ValueError(f"{path}: not valid JSON (nested too deeply)") from None
    if isinstance(data, dict) and "layout" in data:
        options["from_line"] = True
        _take_settings_of_line(game, options, data)
        if data["layout"] is None:
            raise ValueError(f"{path}: the line's layout is null, not a layout")
        return data["layout"]
    if data is None:  # taken for no --layout at all, it would show a seeded deal
        raise ValueError(f"{path}: null, not a layout")
    return data


def _notation_layout(game, text, where):
    """The one layout of a text in the game's notation."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if len(lines) != 1:
        raise ValueError(
            f"{where}: {len(lines)} layouts, not one: --layout-file plays a file of them, "
            "--deal K its K-th (from 0)"
        )
    return parse_layout(game, lines[0])


def _check_html(options):
    if options["html"] is None:
        if options["overwrite"]:
            raise click.UsageError("--overwrite replaces the --html file: give --html FILE")
        return
    from sim.engine.analysis.output import check_writable

    check_writable(options["html"], options["overwrite"], what="--html")


def _write_html(line, source, explanation, options):
    from sim.engine.analysis.replay_page import write_replay_page

    write_replay_page(line, options["html"], source=source, explanation=explanation)


def _is_json(text):
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _take_settings_of_line(game, options, line):
    """A whole move-log line records its game, its policy, the rules it was dealt under
    (a rule it leaves out had its default value) and the seed and deal whose stream its
    policy drew from (and Montana's redeals): they are used, so that the play shown is
    the play logged. An option given on the command line that says otherwise is
    refused."""
    if "game" in line and line["game"] != game.name:
        raise ValueError(f"the layout's line has game={json.dumps(line['game'])}, not {game.name}")
    context = click.get_current_context()
    recorded = {rule.name: line.get(rule.name, rule.default) for rule in game.rules}
    recorded |= {name: line[name] for name in ("seed", "deal", "policy") if name in line}
    for name, theirs in recorded.items():
        has = f"the layout's line has {name}={json.dumps(theirs)}"
        if not _valid_setting(game, name, theirs):
            raise ValueError(f"{has}, not a valid value")
        if context.get_parameter_source(name) != click.core.ParameterSource.COMMANDLINE:
            options[name] = theirs
        elif _setting(game, name, options[name]) != theirs:
            raise ValueError(f"{has}; --{name.replace('_', '-')} says {options[name]}")
    if "params" in line:
        if not isinstance(line["params"], dict):
            has = f"the layout's line has params={json.dumps(line['params'])}"
            raise ValueError(f"{has}, not an object")
        options["logged_params"] = line["params"]


def _params(policy, options):
    """The policy's parameters: those a move-log line of --layout logged, over those of
    --param (which may not say otherwise), over the defaults. A parameter the line leaves
    out (a line from elsewhere) takes --param's value or its default."""
    names = [pair.partition("=")[0].strip() for pair in options["params"]]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice:  # refused, as by a run, which would not know which one was meant
        raise click.UsageError(f"--param {twice} is given twice; sim show plays one setting")
    values = policy.settings(options["params"])
    logged = options.get("logged_params")
    if logged is None:
        return values
    try:
        recorded = {name: policy.param(name).parse(_number(v)) for name, v in logged.items()}
    except PolicyError as error:
        raise ValueError(f"the layout's line: {error}") from None
    for pair in options["params"]:
        name, _, text = (part.strip() for part in pair.partition("="))
        if name in recorded and values[name] != recorded[name]:
            has = f"the layout's line has params.{name}={json.dumps(logged[name])}"
            raise ValueError(f"{has}; --param says {name}={text}")
    return values | recorded


def _number(value):
    # A logged value is a JSON number; anything else is refused as --param text would be.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value)
    return repr(value)


def _setting(game, name, value):
    """The value as a log line records it: a policy by its name, not the way it was
    named on the command line (MODULE:ATTRIBUTE, PATH/FILE.py:ATTRIBUTE)."""
    return resolve(game.name, value).name if name == "policy" else value


def _valid_setting(game, name, value):
    if name == "policy":
        return isinstance(value, str) and value != ""
    rule = next((r for r in game.rules if r.name == name), None)
    if rule is not None:
        return rule.allows(value)
    lowest = -INT64_MAX - 1 if name == "seed" else 0  # seeds below 0: engine.deal_sources
    return isinstance(value, int) and not isinstance(value, bool) and lowest <= value <= INT64_MAX


def _carry_on():
    """Wait for Enter: False when the answer is q (quit)."""
    try:
        answer = input()
    except (EOFError, RuntimeError):  # not interactive, or no stdin at all: carry on
        return True
    return answer.strip().lower() not in ("q", "quit")


for _game in registered_games().values():
    game_command(
        show, _game, _show, f"Show one {_game.title} deal played by a policy.", _SHOW_OPTIONS
    )
