"""A deal you can watch: one self-contained web page that replays a move-log line.

The page holds everything it shows (no network: its style, script and the deal are
inline): the table drawn as cards, the move list beside it, buttons to step forward
and back, play and pause, a slider and a click on any move to jump there. With an
explanation (engine.analysis.explain) the move that lost the deal is marked, and its
winning alternative can be stepped through from the position before it.

Positions come from the game's referee, which replays the line by the rule book: the
page shows the play that was logged, checked move by move. A game names the scene the
page draws in its declaration (Game.scene, engine.scenes); one that names none is shown
in its text drawing.
"""

import html
import importlib
import json
import re
from pathlib import Path

from sim.engine.analysis.output import write_atomically
from sim.engine.analysis.replay_assets import PAGE_SCRIPT, PAGE_STYLE
from sim.engine.games import get_game

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def write_replay_page(line, out, source=None, explanation=None):
    """Write the replay page of a move-log line to out (under a temporary name first)."""
    page = replay_page(line, source, explanation)
    write_atomically(out, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    return Path(out)


def replay_page(line, source=None, explanation=None):
    """The page's HTML text."""
    data = replay_data(line, source, explanation)
    title = html.escape(data["title"])
    # In a script element only `</` could end it early: JSON allows `<\\/` for `</`.
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return PAGE.format(title=title, style=PAGE_STYLE, data=payload, script=PAGE_SCRIPT)


def replay_data(line, source=None, explanation=None):
    """What the page's script draws: each position of the line as a scene, the moves,
    the outcome and the explanation's marks."""
    game = get_game(line["game"])
    scene = _scene_function(game)
    position = game.referee_module.position(line)
    frames, moves = [scene(position)], []
    for number, move in enumerate(line["moves"], 1):
        position.play(number, move)
        frames.append(scene(position))
        moves.append("redeal" if move.startswith("redeal:") else move)
    where = source or f"seed {line['seed']} · deal {line['deal']}"
    data = {
        "title": f"{game.title} · {where} · policy {line['policy']}",
        "moves": moves,
        "frames": frames,
        "outcome": f"{line['outcome']} · score {line['score']} · {len(moves)} moves",
        "explain": None,
    }
    if explanation is not None:
        data["explain"] = _explained(game, line, explanation, scene)
    return data


def _scene_function(game):
    if game.scene:
        module_name, _, function = game.scene.partition(":")
        return getattr(importlib.import_module(module_name), function)
    return lambda position: {"text": ANSI.sub("", game.drawing(position))}


def _explained(game, line, explanation, scene):
    """The explanation's summary, and for a move that lost the deal its number and the
    winning alternative's moves and positions, from the position before it."""
    marks = {"summary": list(explanation.summary()), "move": None}
    if explanation.verdict != "lost":
        return marks
    position = game.referee_module.position(line)
    for number, move in enumerate(line["moves"][: explanation.move - 1], 1):
        position.play(number, move)
    frames = [scene(position)]
    for number, move in enumerate(explanation.alternative, explanation.move):
        position.play(number, move)
        frames.append(scene(position))
    marks |= {
        "move": explanation.move,
        "alternative": list(explanation.alternative),
        "alternative_frames": frames,
    }
    return marks


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{style}</style></head>
<body>
<header><h1>{title}</h1><p id="outcome"></p></header>
<main>
<section id="board">
  <div id="controls">
    <button id="first" title="as dealt (Home)">|&#x25C0;</button>
    <button id="back" title="one move back (&#x2190;)">&#x25C0;</button>
    <button id="play" title="play / pause (space)" aria-pressed="false">&#x25B6; play</button>
    <button id="forward" title="one move on (&#x2192;)">&#x25B6;</button>
    <button id="last" title="the end (End)">&#x25B6;|</button>
    <input id="slider" type="range" min="0" value="0" aria-label="move">
    <span id="counter"></span>
  </div>
  <div id="table"></div>
  <p id="note"></p>
  <div id="explain"></div>
</section>
<aside><h2>Moves</h2><ol id="moves"></ol></aside>
</main>
<script type="application/json" id="deal-data">{data}</script>
<script>{script}</script>
</body></html>
"""
