"""The `sim` command with every built-in command loaded: what the command-line reference
of the documentation is made from.

`sim` itself loads `show`, `compare`, `report` and `export` only when one of them is used
(SimGroup.lazy), and adds a command for every game plugged in; the reference documents
the commands every installation has, each with the examples its help page ends with.
"""

import copy

import click

from sim.cli.main import GAMES, examples_of, main
from sim.engine.games import BUILTIN


def with_examples(command, name):
    """A copy of command whose help ends with its examples, as a block of the page (the
    reference shows a command's help and options, not the closing lines of `-h`)."""
    shown = copy.copy(command)
    lines = examples_of(name)
    if lines:
        block = "\n".join(lines)
        shown.help = f"{command.help or ''}\n\n**Examples**\n\n```text\n{block}\n```"
    return shown


def with_every_command(group=main):
    """A group holding each command of group, loaded, with its examples, except the games
    plugged in from elsewhere."""
    context = click.Context(group, info_name="sim")
    plugged_in = set(GAMES) - set(BUILTIN)
    every = click.Group(
        name="sim",
        help=with_examples(group, "sim").help,
        params=group.params,
        context_settings=group.context_settings,
    )
    for name in group.list_commands(context):
        if name not in plugged_in:
            every.add_command(with_examples(group.get_command(context, name), name), name)
    return every


sim = with_every_command()
