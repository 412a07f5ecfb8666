"""Per-deal result files: Parquet written in large batches under a temporary name.

Every file has one schema, whatever its game, so a glob over a results folder reads as one
table in any tool: beside the deal (seed, deal), each row carries its setting (a hash of
what fixes its rows: game, rules, policy, params and the code that played) and those in
words, as dictionary-encoded text that costs a few bytes per file; the parameters and
rule options as typed maps (`param['depth_weight']`); the result columns every game
shares (outcome, won, score, moves), one type each; and the game's own figures in the
`stats` map. Encodings are chosen for this data: the growing `deal` column and the
constant `seed` column are delta-encoded, small coded columns use dictionaries,
everything is zstd.

The run's description (game, rules, policy, seed, completeness...) is stored as JSON
under the `sim` key, both in the Arrow schema metadata (what pq.read_schema,
pq.read_table and pyarrow.dataset show) and in the Parquet footer's key-value metadata;
each column carries a short `description` in its field metadata.
"""

import base64
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sim.engine.run.files import temporary_path

META_KEY = b"sim"
ROW_GROUP_ROWS = 1 << 20
_DELTA_COLUMNS = ("seed", "deal")


class ResultFileError(ValueError):
    """A file that is not a readable result file of this simulator."""


# int32 codes: a pooled table of many files' settings outgrows int8 codes, and Parquet
# stores the codes as small as they are whatever their Arrow type.
_TEXT = pa.dictionary(pa.int32(), pa.string())
_VALUES = pa.map_(pa.string(), pa.float64())
_FIGURES = pa.map_(pa.string(), pa.int64())
# The columns every result file starts with: what produced each row.
LEADING = (
    ("seed", pa.int64(), "the seed: deal `deal` of seed `seed` is one fixed deal"),
    ("deal", pa.int64(), "the deal index"),
    (
        "setting",
        _TEXT,
        "what fixes the rows: a hash of game, rules, policy, params and code; "
        "one row per (setting, seed, deal)",
    ),
    ("game", _TEXT, "the game, as its command is named"),
    ("rules", _TEXT, "the game's rule options, k=v separated by spaces; '' if it has none"),
    ("policy", _TEXT, "the policy's name"),
    ("params", _TEXT, "the policy's parameters, every one, k=v separated by spaces"),
    ("code", _TEXT, "the code that played: sim's rules and policies, + a plug-in's own source"),
    ("param", _VALUES, "the policy's parameters as numbers: param['depth_weight']"),
    ("rule", _FIGURES, "the game's rule options as numbers: rule['wastes']"),
)
IDENTITY = ("game", "rules", "policy", "params")  # what a run is, as rows say it
SETTING_KEYS = ("game", "rules", "policy", "params", "code")  # what fixes a run's rows
# The result columns every game's files share, one name and one type in all of them.
SHARED = (
    ("outcome", _TEXT, "how the deal ended: won, lost, or as the game says (capped, unknown)"),
    ("won", pa.bool_(), "the deal was won"),
    ("score", pa.int16(), "the game's score of the deal"),
    ("moves", pa.int32(), "moves played"),
)
STATS = "stats"  # the game's own figures, by name: one map column, so every file has one schema


def schema(game):
    """The schema of every result file: the same columns and types for every game (only
    the descriptions of the shared columns and of `stats` say the game's words)."""
    own = {column.name: column.help for column in game.columns}
    fields = [_field(name, kind, text) for name, kind, text in LEADING]
    fields += [_field(name, kind, own.get(name) or text) for name, kind, text in SHARED]
    fields.append(_field(STATS, _FIGURES, _stats_help(game)))
    return pa.schema(fields)


def _stats_help(game):
    figures = [f"{c.name}: {c.help}" for c in game_figures(game)]
    return "the game's own figures, stats['name']" + (": " + "; ".join(figures) if figures else "")


def game_figures(game):
    """The game's columns that are not shared ones: its entries of `stats`."""
    shared = {name for name, _, _ in SHARED}
    return tuple(column for column in game.columns if column.name not in shared)


def _field(name, kind, description):
    return pa.field(name, kind, metadata={"description": description} if description else None)


def rules_text(game, rules):
    """A game's rule options as the `rules` column writes them: `wastes=4`."""
    return " ".join(f"{option.name}={rules[option.name]}" for option in game.rules)


def params_text(params):
    """A policy's parameters as the `params` column writes them: `samples=256 c=0.5`."""
    return " ".join(f"{name}={number_text(value)}" for name, value in params.items())


def number_text(value):
    return str(int(value)) if isinstance(value, int) else repr(float(value))


def setting_of(description):
    """The id of what fixes a run's rows: a short hash of its game, rules, policy, params
    and code (a run description's, JSON values). Two runs of one setting play every deal
    alike, so their rows of one deal are one row."""
    key = {name: description.get(name, "") for name in SETTING_KEYS}
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_texts(game, description):
    """The text columns of a run's rows, from its description: setting, game, rules,
    policy, params, code."""
    return {
        "setting": setting_of(description),
        "game": description["game"],
        "rules": rules_text(game, description["rules"]),
        "policy": description["policy"],
        "params": params_text(description["params"]),
        "code": description.get("code", ""),
    }


def rows_to_table(game, description, start, rows):
    """An Arrow table of kernel rows (int32 [n, columns]) for deals start, start + 1...
    of the run `description` (a RunRequest.description())."""
    n = rows.shape[0]
    columns = {
        "seed": _numeric(np.full(n, description["seed"], np.int64)),
        "deal": _numeric(np.arange(start, start + n, dtype=np.int64)),
    }
    columns |= {
        name: _constant_text(text, n) for name, text in run_texts(game, description).items()
    }
    columns["param"] = _constant_map(description["params"], n, np.float64)
    columns["rule"] = _constant_map(description["rules"], n, np.int64)
    names = [column.name for column in game.columns]
    values = {column.name: rows[:, i] for i, column in enumerate(game.columns)}
    if "outcome" in values:
        labels = game.columns[names.index("outcome")].labels
        columns["outcome"] = _coded(values["outcome"], labels)
    else:  # a game without outcomes: won or lost
        columns["outcome"] = _coded(1 - values["won"].astype(bool), ("won", "lost"))
    bits = np.packbits(values["won"].astype(bool), bitorder="little")
    columns["won"] = pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bits)])
    columns["score"] = _numeric(values["score"].astype(np.int16))
    columns["moves"] = _numeric(values["moves"].astype(np.int32))
    figures = [column.name for column in game_figures(game)]
    columns[STATS] = _figures_map(figures, [values[name] for name in figures], n)
    return pa.Table.from_arrays(list(columns.values()), schema=schema(game))


def _constant_text(text, n):
    return pa.DictionaryArray.from_arrays(_numeric(np.zeros(n, np.int32)), _strings([text]))


def _coded(codes, labels):
    return pa.DictionaryArray.from_arrays(_numeric(codes.astype(np.int32)), _strings(labels))


def _constant_map(values, n, dtype):
    """A map column holding the same {name: value} in each of n rows."""
    names = list(values)
    numbers = np.array([values[name] for name in names], dtype)
    return _figures_map(names, [np.full(n, number, dtype) for number in numbers], n, dtype)


def _figures_map(names, columns, n, dtype=np.int64):
    """A map column whose row i maps names[k] to columns[k][i]."""
    k = len(names)
    offsets = _numeric(np.arange(n + 1, dtype=np.int32) * np.int32(k))
    items = np.empty(n * k, dtype)
    for position, column in enumerate(columns):
        items[position::k] = column
    kind = pa.map_(pa.string(), pa.from_numpy_dtype(np.dtype(dtype)))
    return pa.MapArray.from_arrays(offsets, _repeated_strings(names, n), _numeric(items), type=kind)


def _repeated_strings(names, n):
    """names repeated n times, as one Arrow string array built from its buffers."""
    encoded = [name.encode() for name in names]
    starts = np.cumsum([0] + [len(name) for name in encoded], dtype=np.int32)
    offsets = np.empty(n * len(names) + 1, np.int32)
    repeats = np.arange(n, dtype=np.int32)[:, None] * starts[-1]
    offsets[:-1].reshape(n, len(names))[:] = repeats + starts[:-1]
    offsets[-1] = n * starts[-1]
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded) * n)]
    return pa.Array.from_buffers(pa.string(), n * len(names), buffers)


def _strings(labels):
    encoded = [label.encode() for label in labels]
    offsets = np.cumsum([0] + [len(label) for label in encoded], dtype=np.int32)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(labels), buffers)


def _numeric(values):
    """An Arrow array over a numpy array's memory.

    pa.array would do, but its first call imports pandas (about 0.4 s) to check that
    the values are not a pandas object; so would a dictionary given as a list."""
    values = np.ascontiguousarray(values)
    buffer = pa.py_buffer(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, buffer])


class ResultWriter:
    """Streams tables to a temporary file; `close` stamps metadata and moves it into place."""

    def __init__(self, path, game):
        self.path = Path(path)
        self.tmp = temporary_path(self.path)
        self.game = game
        self.schema = schema(game)
        small = [f.name for f in self.schema if f.name not in _DELTA_COLUMNS]
        # The Arrow schema is stored at close, with the run's description in its metadata.
        self._writer = pq.ParquetWriter(
            self.tmp,
            self.schema,
            store_schema=False,
            compression="zstd",
            use_dictionary=small,
            column_encoding={name: "DELTA_BINARY_PACKED" for name in _DELTA_COLUMNS},
            # No reader prunes row groups by a map's entries; their statistics only cost.
            write_statistics=[f.name for f in self.schema if not pa.types.is_map(f.type)],
        )
        self._pending = []
        self._pending_rows = 0
        self.rows = 0

    def write(self, table):
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self.rows += table.num_rows
        if self._pending_rows >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self):
        if self._pending:
            table = pa.concat_tables(self._pending)
            self._writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        self._pending, self._pending_rows = [], 0

    def close(self, meta):
        self._flush()
        text = json.dumps(meta)
        described = self.schema.with_metadata({META_KEY: text})
        stored = base64.b64encode(described.serialize().to_pybytes())
        self._writer.add_key_value_metadata({META_KEY: text, b"ARROW:schema": stored})
        self._writer.close()
        try:
            os.replace(self.tmp, self.path)
        except OSError as error:  # the file that could not be written is the result file
            raise OSError(error.errno, error.strerror, str(self.path)) from None

    def discard(self):
        try:
            self._writer.close()
        except OSError:
            pass  # the file goes anyway
        finally:
            self.tmp.unlink(missing_ok=True)


def read_meta(path):
    """The run description stored in a result file."""
    try:
        file_meta = pq.read_metadata(path)
    except (OSError, pa.ArrowInvalid) as error:
        raise ResultFileError(f"{path}: not a readable Parquet file ({error})") from None
    raw = (file_meta.metadata or {}).get(META_KEY)
    if raw is None:
        raise ResultFileError(f"{path}: a Parquet file, but not a sim result file")
    return json.loads(raw)


def copy_rows(path, writer, limit=None):
    """Copy the rows of an existing result file (the first `limit`) into writer; rows of
    a file of an earlier layout are brought to this one (upgrade_table), so resuming an
    old file brings it up to date."""
    left = limit
    meta = read_meta(path)
    for batch in pq.ParquetFile(path).iter_batches(batch_size=ROW_GROUP_ROWS):
        if left is not None:
            batch = batch.slice(0, left)
            left -= batch.num_rows
        writer.write(upgrade_table(writer.game, meta, pa.Table.from_batches([batch])))
        if left == 0:
            return


def _outcomes(game, texts):
    """Outcome texts coded as the game codes them (its labels, in order), so that an
    upgraded file's rows equal those the game writes; texts it does not know kept too."""
    declared = next((c.labels for c in game.columns if c.name == "outcome"), ())
    labels = list(declared) + [x for x in pc.unique(texts).to_pylist() if x not in declared]
    codes = pc.index_in(texts, value_set=pa.array(labels, pa.string()))
    return _coded(codes.to_numpy(zero_copy_only=False), labels)


def upgrade_table(game, meta, table):
    """Rows of a result file of any layout, in this one: a file written before rows said
    their setting (its game's figures as columns of their own, `moves` of the game's
    type) gets its text columns and maps from its description `meta`."""
    target = schema(game)
    if all(name in table.column_names for name in target.names):
        return table.select(target.names).cast(target)
    n = table.num_rows
    columns = {name: table.column(name).cast(pa.int64()) for name in ("seed", "deal")}
    columns |= {name: _constant_text(text, n) for name, text in run_texts(game, meta).items()}
    columns["param"] = _constant_map(meta["params"], n, np.float64)
    columns["rule"] = _constant_map(meta["rules"], n, np.int64)
    won = table.column("won").to_numpy()
    if "outcome" in table.column_names:
        columns["outcome"] = _outcomes(game, table.column("outcome").cast(pa.string()))
    else:
        columns["outcome"] = _coded(1 - won.astype(np.int8), ("won", "lost"))
    columns["won"] = table.column("won")
    columns["score"] = table.column("score").cast(pa.int16())
    columns["moves"] = table.column("moves").cast(pa.int32())
    if STATS in table.column_names:
        columns[STATS] = table.column(STATS).cast(_FIGURES)
    else:
        figures = [c.name for c in game_figures(game) if c.name in table.column_names]
        values = [table.column(name).to_numpy().astype(np.int64) for name in figures]
        columns[STATS] = _figures_map(figures, values, n)
    return pa.Table.from_arrays(
        [pa.chunked_array(c) if isinstance(c, pa.ChunkedArray) else c for c in columns.values()],
        schema=target,
    )
