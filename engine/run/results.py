"""Per-deal result files: Parquet written in large batches under a temporary name.

Every row says what produced it: beside the deal (seed, deal) it carries the game, the
rules, the policy and the policy's parameters, as dictionary-encoded text that costs a
few bytes per file, so a folder of runs pools safely in any tool. Encodings are chosen
for this data: the growing `deal` column and the constant `seed` column are
delta-encoded, small coded columns use dictionaries, everything is zstd.

The run's description (game, rules, policy, seed, completeness...) is stored as JSON
under the `sim` key, both in the Arrow schema metadata (what pq.read_schema,
pq.read_table and pyarrow.dataset show) and in the Parquet footer's key-value metadata;
each column carries a short `description` in its field metadata.
"""

import base64
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sim.engine.run.files import temporary_path

META_KEY = b"sim"
ROW_GROUP_ROWS = 1 << 20
_DELTA_COLUMNS = ("seed", "deal")


class ResultFileError(ValueError):
    """A file that is not a readable result file of this simulator."""


_TEXT = pa.dictionary(pa.int8(), pa.string())
# The columns every result file starts with: what produced each row.
LEADING = (
    ("seed", pa.int64(), "the seed: deal `deal` of seed `seed` is one fixed deal"),
    ("deal", pa.int64(), "the deal index"),
    ("game", _TEXT, "the game, as its command is named"),
    ("rules", _TEXT, "the game's rule options, k=v separated by spaces; '' if it has none"),
    ("policy", _TEXT, "the policy's name"),
    ("params", _TEXT, "the policy's parameters, every one, k=v separated by spaces"),
)
IDENTITY = ("game", "rules", "policy", "params")  # what a run is, as rows say it


def schema(game):
    fields = [_field(name, kind, text) for name, kind, text in LEADING]
    for column in game.columns:
        fields.append(_field(column.name, _arrow_type(column), column.help))
    return pa.schema(fields)


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


def _arrow_type(column):
    if column.labels:
        return pa.dictionary(pa.int8(), pa.string())
    return pa.bool_() if column.type == "bool" else pa.from_numpy_dtype(np.dtype(column.type))


def rows_to_table(game, description, start, rows):
    """An Arrow table of kernel rows (int32 [n, columns]) for deals start, start + 1...
    of the run `description` (a RunRequest.description())."""
    n = rows.shape[0]
    constant = np.zeros(n, np.int8)
    texts = (
        description["game"],
        rules_text(game, description["rules"]),
        description["policy"],
        params_text(description["params"]),
    )
    arrays = [
        _numeric(np.full(n, description["seed"], np.int64)),
        _numeric(np.arange(start, start + n, dtype=np.int64)),
        *(pa.DictionaryArray.from_arrays(_numeric(constant), _strings([t])) for t in texts),
    ]
    for i, column in enumerate(game.columns):
        values = rows[:, i]
        if column.labels:
            codes = _numeric(values.astype(np.int8))
            arrays.append(pa.DictionaryArray.from_arrays(codes, _strings(column.labels)))
        elif column.type == "bool":
            bits = np.packbits(values.astype(bool), bitorder="little")
            arrays.append(pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bits)]))
        else:
            arrays.append(_numeric(values.astype(column.type)))
    return pa.Table.from_arrays(arrays, schema=schema(game))


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


def _identity_of(path, game):
    """The identity columns' text for a file's rows, from its description."""
    return identity_texts(game, read_meta(path))


def identity_texts(game, meta):
    """The identity columns' text for the rows of the run a description describes."""
    return {
        "game": meta["game"],
        "rules": rules_text(game, meta["rules"]),
        "policy": meta["policy"],
        "params": params_text(meta["params"]),
    }


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
    a file from before rows said what made them get the game, rules and params columns
    from its description, so resuming an old file brings it up to date."""
    left = limit
    identity = _identity_of(path, writer.game)
    for batch in pq.ParquetFile(path).iter_batches(batch_size=ROW_GROUP_ROWS):
        if left is not None:
            batch = batch.slice(0, left)
            left -= batch.num_rows
        table = pa.Table.from_batches([batch])
        for name, text in identity.items():
            if name not in table.column_names:
                codes = _numeric(np.zeros(table.num_rows, np.int8))
                table = table.append_column(
                    name, pa.DictionaryArray.from_arrays(codes, _strings([text]))
                )
        writer.write(table.select(writer.schema.names).cast(writer.schema))
        if left == 0:
            return
