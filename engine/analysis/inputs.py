"""Result files as analysis inputs: found, checked, read (only the columns needed), grouped.

A run is one setting: what fixes its rows, (game, rules, policy, params, code), named by
the `setting` column's id and read from the rows themselves or, for a file written before
rows carried it (an "old file"), from the file's run description. Files of one setting
are pooled, a deal present in two of them counted once (from the file named first; deals
whose rows there differ are counted, for a note): overlapping runs, sweeps, reruns and
incomplete files give one row per (setting, seed, deal). A file whose rows name several
settings is split between them.

Runs are grouped by (game, rules): only the runs of one group played their deals under
the same rules, so only they are paired. Within a group every deal gets an int64 key that
orders and identifies it by (seed, deal), so that runs pair by sorted-array intersection.
"""

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sim.engine.run.results import (
    IDENTITY,
    STATS,
    ResultFileError,
    params_text,
    read_meta,
    setting_of,
)

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
CONVERT_HINT = "sim export OLD --to parquet --out NEW"
# Every text column is read coded, whether its writer coded it or not (pandas and polars
# may not): the files then pool, a text being the same data either way.
TEXT = pa.dictionary(pa.int32(), pa.string())


class AnalysisError(ValueError):
    """Inputs that cannot be analysed: missing, unreadable, mismatched or empty."""


@dataclass
class Run:
    """The pooled deals of one (game, rules, policy, params), sorted by deal key.

    rules and params are the text the rows carry: `wastes=4`, `samples=256 c=0.5`."""

    game: str
    rules: str
    policy: str
    params: str
    code: str = ""  # the code that played (engine.compile_cache.code_of)
    setting: str = ""  # the id of (game, rules, policy, params, code)
    files: list = field(default_factory=list)
    metas: list = field(default_factory=list)
    old_files: list = field(default_factory=list)  # files whose rows lack the run's columns
    label: str = ""
    key: np.ndarray = None
    key_seeds: np.ndarray = None  # the seed and deal of each key
    key_deals: np.ndarray = None
    won: np.ndarray = None
    decided: np.ndarray = None  # False where the outcome is unknown
    score: np.ndarray = None
    moves: np.ndarray = None
    outcome_shares: dict = field(default_factory=dict)  # label -> bool mask, beyond won/lost
    means: dict = field(default_factory=dict)  # column -> values
    conflicts: int = 0  # deals in two of its files whose won, score or moves differ

    @property
    def deals(self):
        return len(self.key)

    @property
    def identity(self):
        return (self.game, self.rules, self.policy, self.params, self.code, self.setting)

    @property
    def group(self):
        return (self.game, self.rules)


@dataclass
class Group:
    """The runs of one game under one set of rules: the runs that may be paired."""

    game: str
    rules: str
    runs: list

    @property
    def title(self):
        """`calc · wastes=4`, as the group is headed everywhere."""
        return group_title(self.game, self.rules)

    @property
    def files(self):
        return list(dict.fromkeys(path for run in self.runs for path in run.files))


def group_title(game, rules):
    return " · ".join(x for x in (game, rules) if x)


def groups_of(runs):
    """The runs by (game, rules), groups and runs in order of first appearance."""
    groups = {}
    for run in runs:
        groups.setdefault(run.group, Group(run.game, run.rules, [])).runs.append(run)
    return list(groups.values())


def rules_of(meta):
    """A run description's rules as the `rules` column writes them (engine.run.results)."""
    return " ".join(f"{k}={v}" for k, v in meta["rules"].items())


def identity_of(meta):
    """(game, rules, policy, params) of a run description, as rows would say it."""
    return (meta["game"], rules_of(meta), meta["policy"], params_text(meta["params"]))


RUN_COLUMNS = (*IDENTITY, "code", "setting")  # what a run is, as rows say it


def run_of(meta):
    """(game, rules, policy, params, code, setting) of a run description."""
    return (*identity_of(meta), meta.get("code", ""), setting_of(meta))


def expand_paths(paths):
    """Files given, and the *.parquet files inside the folders given and their subfolders
    (hidden ones, such as a run's journal, left out), in order."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = [p for p in path.rglob(f"*{RESULT_SUFFIX}") if _result_file(p, path)]
            found.sort(key=lambda p: p.relative_to(path).parts)
            if not found:
                raise AnalysisError(
                    f"{path}: no result files (*{RESULT_SUFFIX}) in this folder or below"
                )
            files += found
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise AnalysisError(f"{path}: not a regular file or folder")
        else:
            raise AnalysisError(f"{path}: no such file or folder")
    if not files:
        raise AnalysisError("no result files given")
    unique = {}
    for path in files:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _result_file(path, folder):
    """A file found in a folder; not hidden, nor inside a hidden folder."""
    hidden = any(part.startswith(".") for part in path.relative_to(folder).parts)
    return path.is_file() and not hidden


def result_meta(path):
    """The run description of a result file, checked to have what analysis relies on."""
    try:
        meta = read_meta(path)
    except ResultFileError as error:
        raise AnalysisError(one_line(error)) from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise AnalysisError(f"{path}: its sim metadata is not valid JSON") from None
    if isinstance(meta, dict) and isinstance(meta.get("settings"), dict):  # a pooled export
        for described in meta["settings"].values():
            _checked_description(path, described)
        return meta
    return _checked_description(path, meta)


def _checked_description(path, meta):
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
    """The wanted columns of a result file that it has, as an Arrow table, each checked
    to hold values of its kind and read as that kind's one type (column_kinds)."""
    try:
        names = pq.read_schema(path).names
        missing = [name for name in REQUIRED_COLUMNS if name not in names]
        if missing:
            raise AnalysisError(f"{path}: a result file without column(s) {', '.join(missing)}")
        table = pq.read_table(path, columns=[name for name in wanted if name in names])
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(f"{path}: corrupt Parquet file ({one_line(error)})") from None
    return checked_columns(path, stats_as_columns(table, wanted))


def stats_as_columns(table, wanted):
    """The table with the wanted game figures of its `stats` map as columns of their own
    (a file of the current layout keeps them there; an old file had them as columns)."""
    if STATS not in table.column_names:
        return table
    stats = table.column(STATS)
    table = table.drop_columns([STATS])
    for name in wanted:
        if name in table.column_names or not table.num_rows:
            continue
        values = pc.map_lookup(stats, pa.scalar(name, stats.type.key_type), "first")
        if values.null_count < len(values):  # rows of other games, pooled, lack it
            table = table.append_column(name, values)
    return table


def _is_text(kind):
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


# kind -> (whether an Arrow type holds it, the type it is read as, how an error names it)
KINDS = {
    "integer": (pa.types.is_integer, pa.int64(), "an integer"),
    "boolean": (pa.types.is_boolean, pa.bool_(), "true or false"),
    "text": (_is_text, TEXT, "text"),
}


def column_kinds():
    """{column: kind} of every column analysis computes on or groups by."""
    kinds = {name: "integer" for name in ("seed", "deal", "score", "moves", *MEAN_COLUMNS)}
    return kinds | {"won": "boolean", "outcome": "text"} | dict.fromkeys(RUN_COLUMNS, "text")


def check_column_types(path, schema):
    """Refuse a file whose column of a kind (column_kinds) is stored as another type: a
    text `deal`, say, that files of other writers may have."""
    kinds = column_kinds()
    for column in schema:
        kind = kinds.get(column.name)
        if kind is not None and not KINDS[kind][0](column.type):
            raise AnalysisError(
                f"{path}: column {column.name} has type {column.type}, expected {KINDS[kind][2]}"
            )


def checked_columns(path, table):
    """The table, its columns of a kind checked to be of that kind and without nulls, and
    each cast to its kind's type, so that the tables of any files pool."""
    check_column_types(path, table.schema)
    kinds = column_kinds()
    for index, name in enumerate(table.column_names):
        if name not in kinds:
            continue
        column = table.column(index)
        if column.null_count and name not in MEAN_COLUMNS:  # a game figure others lack
            raise AnalysisError(f"{path}: column {name} holds nulls")
        try:
            column = column.cast(KINDS[kinds[name]][1])
        except pa.ArrowInvalid:  # an unsigned integer beyond int64
            raise AnalysisError(f"{path}: column {name} holds too large values") from None
        table = table.set_column(index, table.field(index).with_type(column.type), column)
    return table


def is_old_layout(names):
    """Whether a file's columns are those of files written before rows said their setting."""
    return "setting" not in names


def one_line(error):
    return re.sub(r"\s+", " ", str(error)).strip()


def load_runs(paths):
    """Runs of the result files (or folders of them) given: grouped by (game, rules), the
    groups in order of first appearance, and within each its runs in that order."""
    files, skipped = readable_files(expand_paths(paths), paths)
    metas = [result_meta(path) for path in files]
    wanted = ("outcome",) + REQUIRED_COLUMNS + MEAN_COLUMNS + RUN_COLUMNS + (STATS,)
    runs, parts = {}, {}
    for path, meta in zip(files, metas, strict=True):
        table = read_columns(path, wanted)
        lowest = pc.min(table.column("deal")).as_py() if table.num_rows else 0
        if lowest is not None and lowest < 0:
            raise AnalysisError(f"{path}: deal indices below 0 (a deal is never negative)")
        old = is_old_layout(table.column_names)
        for identity, rows in _split_by_run(table, meta):
            run = runs.setdefault(identity[-1], Run(*identity))
            run.files.append(path)
            run.metas.append(meta.get("settings", {}).get(identity[-1], meta))
            if old:
                run.old_files.append(path)
            parts.setdefault(identity[-1], []).append(rows)
    runs = [run for group in groups_of(runs.values()) for run in group.runs]
    for group in groups_of(runs):
        tables = [table for run in group.runs for table in parts[run.setting]]
        keys = iter(_deal_keys(tables))
        for run in group.runs:
            _pool(run, [(next(keys), table) for table in parts[run.setting]])
    if not any(run.deals for run in runs):
        raise AnalysisError("no deals in the result files given")
    for group in groups_of(runs):
        _label(group.runs)
    return Runs(runs, skipped)


class Runs(list):
    """The runs, and the Parquet files found in folders that were not sim result files
    (a table written into a results folder, say): left out, for a note."""

    def __init__(self, runs, skipped=()):
        super().__init__(runs)
        self.skipped = list(skipped)


def readable_files(files, given):
    """Files to read: every file named, and those found in folders that are sim result
    files; a folder's other Parquet files are set apart, never a reason to fail."""
    named = {Path(path).resolve() for path in given}
    kept, skipped = [], []
    for path in files:
        if path.resolve() in named:
            kept.append(path)
            continue
        try:
            read_meta(path)
            kept.append(path)
        except (ResultFileError, ValueError, UnicodeDecodeError, RecursionError):
            skipped.append(path)
    if not kept:
        raise AnalysisError(f"no sim result files among {', '.join(map(str, given))}")
    return kept, skipped


def _split_by_run(table, meta):
    """[(identity, rows)]: the rows of each setting the table holds, identity as RUN_COLUMNS.

    Each of those comes from its column when the file has it, else from the run
    description. A file written by a run holds one setting: that case reads only the
    columns' dictionaries."""
    fallback = dict(zip(RUN_COLUMNS, run_of(meta), strict=True)) if "game" in meta else {}
    present = [name for name in RUN_COLUMNS if name in table.column_names]
    if table.num_rows == 0:
        return [(_identity(fallback, fallback), table)] if fallback else []
    constants = {name: _constant_text(table.column(name)) for name in present}
    if all(value is not None for value in constants.values()):
        return [(_identity(constants, fallback), table)]
    texts = {name: _as_text(table.column(name)) for name in present}
    combos = pa.table(texts).group_by(present, use_threads=False).aggregate([])
    result = []
    for combo in combos.to_pylist():
        mask = None
        for name in present:
            equal = pc.equal(texts[name], combo[name])
            mask = equal if mask is None else pc.and_(mask, equal)
        result.append((_identity(combo, fallback), table.filter(mask)))
    return result


def _identity(found, fallback):
    """A setting's RUN_COLUMNS from the texts its rows gave, the rest from the run
    description; a setting id rows lack is the description's when the rest is its own."""
    values = {name: found.get(name, fallback.get(name, "")) for name in RUN_COLUMNS}
    if "setting" not in found:
        described = all(values[name] == fallback.get(name) for name in RUN_COLUMNS[:-1])
        values["setting"] = fallback["setting"] if described else _text_setting(values)
    return tuple(values.values())


def _text_setting(values):
    text = "\0".join(values[name] for name in RUN_COLUMNS[:-1])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _constant_text(column):
    """The one text a column holds in every row, or None when it holds several (or none)."""
    values = set()
    for chunk in column.chunks:
        if len(chunk) == 0:
            continue
        if pa.types.is_dictionary(chunk.type) and len(chunk.dictionary) == 1:
            values.add(chunk.dictionary[0].as_py())
        else:
            values.update(pc.unique(chunk).to_pylist())
        if len(values) > 1:
            return None
    (value,) = values or {None}
    return value if isinstance(value, str) else None


def _as_text(column):
    return column.cast(pa.string())  # checked_columns made it text, without nulls


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
        deals, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        run.conflicts = _conflicting_deals(key, table, first, inverse)
        key, table = deals, table.take(pa.array(first))
    run.key = key
    run.key_seeds, run.key_deals = _values(table, "seed"), _values(table, "deal")
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
        if name in table.column_names and table.column(name).null_count < table.num_rows:
            run.means[name] = _values(table, name)


def _conflicting_deals(key, table, first, inverse):
    """How many deals appear more than once in key with rows that differ in won, score
    or moves from the row counted (first[inverse], np.unique's): a run's results should
    be the same wherever its deal was played."""
    differs = np.zeros(len(key), bool)
    for name in ("won", "score", "moves"):
        values = _values(table, name)
        differs |= values != values[first][inverse]
    return len(np.unique(key[differs]))


def _values(table, name):
    return table.column(name).to_numpy()


def _labels(column):
    """The labels a coded column (checked_columns codes them all) can take, in their
    stored order."""
    labels = []
    for chunk in column.chunks:
        labels += [x for x in chunk.dictionary.to_pylist() if x not in labels]
    return labels


def _label_mask(column, label):
    parts = []
    for chunk in column.chunks:
        codes = [i for i, x in enumerate(chunk.dictionary.to_pylist()) if x == label]
        parts.append(np.isin(chunk.indices.to_numpy(zero_copy_only=False), codes))
    return np.concatenate(parts) if parts else np.zeros(0, bool)


def _label(runs):
    """Names the runs of one group apart: the policy, with its parameters when the group
    has it with several settings, and `@` the start of its setting id when runs of one
    policy and parameters were played by different code (two plug-ins of one name)."""
    for run in runs:
        settings = {r.params for r in runs if r.policy == run.policy}
        run.label = f"{run.policy} {run.params}" if len(settings) > 1 and run.params else run.policy
    shared = {
        label for label in (r.label for r in runs) if [r.label for r in runs].count(label) > 1
    }
    for run in runs:
        if run.label in shared:
            run.label = f"{run.label} @{run.setting[:8]}"
