"""Result files as analysis inputs: found, checked, read (only the columns needed), pooled.

Files of the same (game, policy, rules, parameters) make one Run; a deal present in two
of its files counts once. Every deal gets an int64 key that orders and identifies it by
(seed, deal) across all inputs, so that runs pair by sorted-array intersection.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sim.engine.run.results import ResultFileError, read_meta

RESULT_SUFFIX = ".parquet"
REQUIRED_COLUMNS = ("seed", "deal", "won", "score", "moves")
# Game columns whose per-run mean tells something (Montana's redeals, the solver's effort).
MEAN_COLUMNS = ("redeals", "jokers_used", "nodes")
REQUIRED_META = ("game", "policy", "rules", "params")
# What analysis reads from a run's description, and the JSON kind each must be.
META_KINDS = {"game": str, "policy": str, "rules": dict, "params": dict}
OPTIONAL_META_KINDS = {"seed": int, "start": int, "n": int, "n_done": int, "completed": bool}
_KIND_NAMES = {str: "a string", dict: "an object", int: "a whole number", bool: "true or false"}
UNKNOWN = "unknown"
_DRAWN_OUTCOMES = ("won", "lost")


class AnalysisError(ValueError):
    """Inputs that cannot be analysed: missing, unreadable, mismatched or empty."""


@dataclass
class Run:
    """The pooled deals of one (game, policy, rules, parameters), sorted by deal key."""

    game: str
    policy: str
    rules: dict
    params: dict
    files: list = field(default_factory=list)
    metas: list = field(default_factory=list)
    label: str = ""
    key: np.ndarray = None
    won: np.ndarray = None
    decided: np.ndarray = None  # False where the outcome is unknown
    score: np.ndarray = None
    moves: np.ndarray = None
    outcome_shares: dict = field(default_factory=dict)  # label -> bool mask, beyond won/lost
    means: dict = field(default_factory=dict)  # column -> values

    @property
    def deals(self):
        return len(self.key)

    @property
    def identity(self):
        return (self.game, self.policy, _canonical(self.rules), _canonical(self.params))


def describe(settings):
    """`k=v k2=v2` in the stored order: how rules and parameters are shown."""
    return " ".join(f"{k}={_number(v)}" for k, v in settings.items())


def _canonical(settings):
    return json.dumps(settings, sort_keys=True)


def _number(value):
    return f"{value:g}" if isinstance(value, float) else str(value)


def expand_paths(paths):
    """Files given, and the *.parquet files directly inside the folders given, in order."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.glob(f"*{RESULT_SUFFIX}") if p.is_file())
            if not found:
                raise AnalysisError(f"{path}: no result files (*{RESULT_SUFFIX}) in this folder")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise AnalysisError(f"{path}: no such file or folder")
    if not files:
        raise AnalysisError("no result files given")
    unique = {}
    for path in files:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def result_meta(path):
    """The run description of a result file, checked to have what analysis relies on."""
    try:
        meta = read_meta(path)
    except ResultFileError as error:
        raise AnalysisError(one_line(error)) from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise AnalysisError(f"{path}: its sim metadata is not valid JSON") from None
    if not isinstance(meta, dict) or any(key not in meta for key in REQUIRED_META):
        raise AnalysisError(f"{path}: its sim metadata lacks game, policy, rules or params")
    for key, kind in META_KINDS.items() | OPTIONAL_META_KINDS.items():
        value = meta.get(key)
        if key in OPTIONAL_META_KINDS and value is None:
            continue
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise AnalysisError(
                f"{path}: its sim metadata has {key} = {_short(value)}, not {_KIND_NAMES[kind]}"
            )
    return meta


def _short(value):
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_columns(path, wanted):
    """The wanted columns of a result file that it has, as an Arrow table."""
    try:
        names = pq.read_schema(path).names
        missing = [name for name in REQUIRED_COLUMNS if name not in names]
        if missing:
            raise AnalysisError(f"{path}: a result file without column(s) {', '.join(missing)}")
        return pq.read_table(path, columns=[name for name in wanted if name in names])
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(f"{path}: corrupt Parquet file ({one_line(error)})") from None


def one_line(error):
    return re.sub(r"\s+", " ", str(error)).strip()


def load_runs(paths):
    """Runs of the result files (or folders of them) given, in order of first appearance.

    All files must be of one game: a comparison across games means nothing.
    """
    files = expand_paths(paths)
    metas = [result_meta(path) for path in files]
    _check_one_game(files, metas)
    wanted = ("outcome",) + REQUIRED_COLUMNS + MEAN_COLUMNS
    tables = [read_columns(path, wanted) for path in files]
    keys = _deal_keys(tables)
    runs, parts = {}, {}
    for path, meta, table, key in zip(files, metas, tables, keys, strict=True):
        run = Run(meta["game"], meta["policy"], meta["rules"], meta["params"])
        run = runs.setdefault(run.identity, run)
        run.files.append(path)
        run.metas.append(meta)
        parts.setdefault(run.identity, []).append((key, table))
    for identity, run in runs.items():
        _pool(run, parts[identity])
    runs = list(runs.values())
    if not any(run.deals for run in runs):
        raise AnalysisError("no deals in the result files given")
    _label(runs)
    return runs


def _check_one_game(files, metas):
    game = metas[0]["game"]
    for path, meta in zip(files, metas, strict=True):
        if meta["game"] != game:
            raise AnalysisError(
                f"files of different games: {files[0]} is {game}, {path} is {meta['game']}"
            )


def _deal_keys(tables):
    """Per table, seed_index * (deal span) + (deal - first deal): one int64 per (seed, deal).

    Counting from the first deal keeps the keys small for deals far along a seed."""
    seeds = [t.column("seed").to_numpy() for t in tables]
    deals = [t.column("deal").to_numpy() for t in tables]
    all_seeds = np.unique(np.concatenate([np.unique(s) for s in seeds]))
    low = min((int(d.min()) for d in deals if len(d)), default=0)
    if low < 0:
        raise AnalysisError("deal indices below 0 in the inputs")
    stride = 1 + max((int(d.max()) for d in deals if len(d)), default=0) - low
    if len(all_seeds) * stride >= 2**62:
        raise AnalysisError("too many seeds and deals to pair in one comparison")
    return [
        np.searchsorted(all_seeds, s).astype(np.int64) * stride + (d - np.int64(low))
        for s, d in zip(seeds, deals, strict=True)
    ]


def _pool(run, parts):
    key = np.concatenate([k for k, _ in parts])
    table = pa.concat_tables([t for _, t in parts], promote_options="permissive")
    if len(key) > 1 and not np.all(key[1:] > key[:-1]):
        key, first = np.unique(key, return_index=True)
        table = table.take(pa.array(first))
    run.key = key
    run.won = _values(table, "won").astype(bool)
    run.score = _values(table, "score")
    run.moves = _values(table, "moves")
    run.decided = np.ones(len(key), bool)
    if "outcome" in table.column_names:
        outcome = table.column("outcome")
        for label in _labels(outcome):
            if label == UNKNOWN:
                run.decided = ~_label_mask(outcome, label)
            if label not in _DRAWN_OUTCOMES:
                run.outcome_shares[label] = _label_mask(outcome, label)
    for name in MEAN_COLUMNS:
        if name in table.column_names:
            run.means[name] = _values(table, name)


def _values(table, name):
    return table.column(name).to_numpy()


def _labels(column):
    """The labels a coded (dictionary) column can take, in their stored order."""
    labels = []
    for chunk in column.chunks:
        dictionary = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk.unique()
        labels += [x for x in dictionary.to_pylist() if x not in labels]
    return labels


def _label_mask(column, label):
    parts = []
    for chunk in column.chunks:
        if pa.types.is_dictionary(chunk.type):
            codes = [i for i, x in enumerate(chunk.dictionary.to_pylist()) if x == label]
            indices = chunk.indices.to_numpy(zero_copy_only=False)
            parts.append(np.isin(indices, codes))
        else:
            parts.append(np.asarray(chunk.to_pylist(), dtype=object) == label)
    return np.concatenate(parts) if parts else np.zeros(0, bool)


def _label(runs):
    """Names runs apart: the policy, with its parameters when it ran with several settings,
    and the rules when they differ between runs."""
    rules_vary = len({describe(r.rules) for r in runs}) > 1
    for run in runs:
        same_policy = [r for r in runs if r.policy == run.policy]
        parts = [run.policy]
        if len({describe(r.params) for r in same_policy}) > 1:
            parts.append(describe(run.params))
        if rules_vary:
            parts.append(describe(run.rules))
        run.label = " ".join(p for p in parts if p)
