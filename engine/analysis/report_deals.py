"""The deals of a report worth a look, each with its replay page beside the report.

Per group of runs, two short lists (at most `limit` deals each): the deals the run with
the best win rate lost (the nearest misses first: highest score), and, where the group
is paired, the deals that only one of the baseline and another run won (a page for
each of the two plays). A page (engine.analysis.replay_page) shows the play of its
deal from the run's move log when the run logged one, else the deal played again by
the run's policy with the parameters and rules its description records. A deal is
linked only when that play ends as its row says (won, score): a play that cannot be
had again (a plug-in not built in, a layout file gone, other code) is left out.

Pages are written in a folder named after the report (report.html -> report-deals/).
"""

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim.engine.analysis.output import check_writable

DEFAULT_LIMIT = 10


@dataclass
class DealLink:
    text: str  # what the report says of it: `seed 0 · deal 12 · score 47`
    path: Path  # its page
    page: str  # the page's HTML


@dataclass
class DealList:
    title: str
    links: list


def pages_folder(out):
    out = Path(out)
    return out.with_name(f"{out.stem}-deals")


def deal_lists(report, out, overwrite, limit=DEFAULT_LIMIT):
    """Per group of the report, its lists of deals worth a look (DealList), pages made."""
    folder = pages_folder(out)
    player = _Player(folder, overwrite)
    return [_group_lists(part, player, limit) for part in report.groups] if limit else []


def _group_lists(part, player, limit):
    lists = []
    best = max(part.runs, key=lambda run: run.won.mean() if run.deals else -1)
    lost = np.flatnonzero(~best.won & best.decided)
    nearest = lost[np.lexsort((best.key[lost], -best.score[lost].astype(np.int64)))]
    links = player.links(best, nearest, limit)
    if links:
        lists.append(DealList(f"Lost by {best.label}, the best win rate", links))
    if part.paired:
        links = _split_links(part, player, limit)
        if links:
            lists.append(
                DealList(f"Won by only one of {part.baseline.label} and another run", links)
            )
    return lists


def _split_links(part, player, limit):
    """Deals only one of the baseline and each other run won: a link to both plays."""
    links = []
    base = part.baseline
    for run in part.runs:
        if run is base or len(links) >= 2 * limit:
            continue
        _, mine, theirs = np.intersect1d(run.key, base.key, return_indices=True)
        split = run.won[mine] != base.won[theirs]
        for i, j in zip(mine[split], theirs[split], strict=True):
            pair = player.links(run, [i], 1) + player.links(base, [j], 1)
            if len(pair) == 2:
                links += pair
            if len(links) >= 2 * limit:
                break
    return links


class _Player:
    """Plays a row's deal again (or reads it from the run's move log) into its page."""

    def __init__(self, folder, overwrite):
        self.folder, self.overwrite = folder, overwrite

    def links(self, run, indices, limit):
        links = []
        for i in list(indices)[: 2 * limit]:  # some may not play as recorded: a few more
            link = self.link(run, int(i))
            if link is not None:
                links.append(link)
            if len(links) >= limit:
                break
        return links

    def link(self, run, i):
        from sim.engine.analysis.replay_page import replay_page

        seed, deal = int(run.key_seeds[i]), int(run.key_deals[i])
        meta = _meta_of(run, seed, deal)
        line = _line(run, meta, seed, deal) if meta else None
        won = line is not None and line["outcome"] == "won"
        if line is None or won != bool(run.won[i]) or line["score"] != int(run.score[i]):
            return None
        name = f"{_slug(run.game)}-{_slug(run.label)}-seed{seed}-deal{deal}.html"
        path = self.folder / name
        page = replay_page(line, source=f"seed {seed} · deal {deal}")
        if not _holds(path, page):  # another report of the same runs wrote it already
            check_writable(path, self.overwrite, what="a deal page of the report")
        outcome = "won" if won else f"lost · score {line['score']}"
        text = f"{run.label}: seed {seed} · deal {deal} · {outcome}"
        return DealLink(text, path, page)


def _meta_of(run, seed, deal):
    """The description of the run's file that holds (seed, deal)."""
    for meta in run.metas:
        start = meta.get("start", 0)
        if meta.get("seed") == seed and start <= deal < start + meta.get("n", 0):
            return meta
    return None


def _line(run, meta, seed, deal):
    """The deal's move-log line: from the run's log if it has one, else played again."""
    logged = _logged_line(meta, seed, deal)
    if logged is not None:
        return logged
    try:
        return _played_again(run, meta, seed, deal)
    except (ValueError, KeyError, TypeError, OSError):  # a policy or layouts not at hand
        return None


def _logged_line(meta, seed, deal):
    path = meta.get("log_moves")
    if not path or not Path(path).is_file() or Path(path).suffix != ".jsonl":
        return None
    with open(path, encoding="utf-8") as log:
        for text in log:
            line = json.loads(text)
            if line.get("seed") == seed and line.get("deal") == deal:
                return line
    return None


def _played_again(run, meta, seed, deal):
    from sim.engine.deal_sources import from_spec
    from sim.engine.games import get_game
    from sim.engine.run.one_deal import play_one
    from sim.policies.registry import builtin_policies

    game = get_game(run.game)
    policy = next((p for p in builtin_policies(game.name) if p.name == meta["policy"]), None)
    if policy is None:  # reading results never imports a plug-in
        return None
    params = policy.settings() | meta.get("params", {})
    rules = game.default_rules() | meta.get("rules", {})
    layout = None
    if meta.get("deals"):
        layout = from_spec(game, meta["deals"], rules).layout(deal)
    return play_one(game, policy, params, rules, seed, deal, layout)


def _slug(text):
    return re.sub(r"[^A-Za-z0-9_.]+", "-", str(text)).strip("-") or "run"


def html_lists(lists, out):
    """The HTML of a group's lists, links relative to the report."""
    parts = []
    for deal_list in lists:
        items = "".join(
            f'<li><a href="{html.escape(_relative(link.path))}">{html.escape(link.text)}</a></li>'
            for link in deal_list.links
        )
        parts.append(f'<h3>{html.escape(deal_list.title)}</h3><ul class="deals">{items}</ul>')
    return "".join(parts)


def markdown_lists(lists, out):
    lines = []
    for deal_list in lists:
        lines += ["", f"### {deal_list.title}", ""]
        lines += [f"- [{link.text}]({_relative(link.path)})" for link in deal_list.links]
    return lines


def _relative(path):
    """A page's link from the report: the pages' folder is beside it."""
    return f"{path.parent.name}/{path.name}"


def page_writes(lists):
    """(path, write) of every page of the lists, for write_together."""
    writes = {}
    for group in lists:
        for deal_list in group:
            for link in deal_list.links:
                if not _holds(link.path, link.page):
                    writes[link.path] = _text_writer(link.page)
    return list(writes.items())


def _holds(path, page):
    """Whether path is a regular file holding exactly this page."""
    try:
        return path.is_file() and path.read_text(encoding="utf-8") == page
    except (OSError, UnicodeDecodeError):
        return False


def _text_writer(text):
    return lambda tmp: Path(tmp).write_text(text, encoding="utf-8")
