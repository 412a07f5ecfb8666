"""Deals typed in: layouts read from text, one a line, for any game.

A line is a layout in the game's text notation (RULES.md, "Layouts as text"), a layout
in move-log form (JSON), or a whole move-log line (its layout is taken). Blank lines
and lines starting with `#` are not layouts. Every layout is checked by the game's own
rules (state_from_layout), so that one that is not a deal is refused in one line that
says what is wrong with it.

A file of layouts is a set of deals with a seed of its own (layouts_seed): deal k is
its k-th layout (from 0). The seed is negative, so it is never a seed of sim's own
deals, and is fixed by the layouts alone, so a policy's random stream and Montana's
redeals are too.
"""

import hashlib
import importlib
import json

LAYOUT_SEEDS_BELOW = -2  # -1 and -2 mark PySolFC's game numbers (engine.deal_sources)
SEED_BITS = 60


class LayoutError(ValueError):
    """A layout that is not a deal of the game, or a file that holds none."""


def parse_layout(game, text):
    """The layout (move-log form) of one line of text."""
    text = text.strip()
    if text.startswith(("{", "[", '"')) or text == "null":
        return _json_layout(game, text)
    if game.layout_text is None:
        raise LayoutError(f"{game.title} layouts are written as JSON, as in a move log")
    module_name, _, function = game.layout_text.partition(":")
    return getattr(importlib.import_module(module_name), function)(text)


def _json_layout(game, text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise LayoutError(f"not valid JSON ({error.msg})") from None
    except RecursionError:
        raise LayoutError("not valid JSON (nested too deeply)") from None
    if isinstance(data, dict) and "layout" in data:
        if data.get("game", game.name) != game.name:
            raise LayoutError(f"a move-log line of {json.dumps(data['game'])}, not {game.name}")
        data = data["layout"]
    if data is None:
        raise LayoutError("null, not a layout")
    return data


def check_layout(game, layout, rules):
    """The start state of a layout of game under rules; a LayoutError in one line for one
    that is not a deal."""
    try:
        return game.module.state_from_layout(layout, rules)
    except KeyError as error:
        raise LayoutError(f"the layout has no {error.args[0]!r}") from None
    except (TypeError, AttributeError, IndexError, OverflowError) as error:
        raise LayoutError(f"not a {game.title} layout: {error}") from None
    except ValueError as error:
        raise LayoutError(str(error)) from None


def read_layouts(game, text, rules, where):
    """The layouts of a text of one a line, each checked; `where` names the text in the
    error of a bad line (`deals.txt line 3: ...`)."""
    layouts = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            layout = parse_layout(game, line)
            check_layout(game, layout, rules)
        except ValueError as error:
            raise LayoutError(f"{where} line {number}: {error}") from None
        layouts.append(layout)
    if not layouts:
        raise LayoutError(f"{where}: no layout in it (one a line; # starts a comment)")
    return layouts


def read_layout_file(game, path, rules):
    """The layouts of a file (read_layouts)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise LayoutError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise LayoutError(f"{path}: {error.strerror}") from None
    return read_layouts(game, text, rules, path)


def layouts_seed(layouts):
    """The seed of a set of layouts: below LAYOUT_SEEDS_BELOW, from their digest."""
    text = json.dumps(layouts, sort_keys=True, separators=(",", ":"))
    digest = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    return LAYOUT_SEEDS_BELOW - 1 - (digest >> (64 - SEED_BITS))
