"""Per-deal result files: Parquet written in large batches under a temporary name.

Encodings are chosen for this data: the growing `deal` column and the constant `seed`
column are delta-encoded, small coded columns use dictionaries, everything is zstd.
The run's description (game, rules, policy, seed, completeness...) is stored as JSON
under the `sim` key of the file's metadata.
"""

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


def schema(game):
    fields = [pa.field("seed", pa.int64()), pa.field("deal", pa.int64())]
    fields.append(pa.field("policy", pa.dictionary(pa.int8(), pa.string())))
    for column in game.columns:
        fields.append(pa.field(column.name, _arrow_type(column)))
    return pa.schema(fields)


def _arrow_type(column):
    if column.labels:
        return pa.dictionary(pa.int8(), pa.string())
    return pa.bool_() if column.type == "bool" else pa.from_numpy_dtype(np.dtype(column.type))


def rows_to_table(game, policy_name, seed, start, rows):
    """An Arrow table of kernel rows (int32 [n, columns]) for deals start, start + 1..."""
    n = rows.shape[0]
    arrays = [
        _numeric(np.full(n, seed, np.int64)),
        _numeric(np.arange(start, start + n, dtype=np.int64)),
        pa.DictionaryArray.from_arrays(_numeric(np.zeros(n, np.int8)), _strings([policy_name])),
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
        self.schema = schema(game)
        small = [f.name for f in self.schema if f.name not in _DELTA_COLUMNS]
        self._writer = pq.ParquetWriter(
            self.tmp,
            self.schema,
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
        self._writer.add_key_value_metadata({META_KEY: json.dumps(meta)})
        self._writer.close()
        os.replace(self.tmp, self.path)

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
    """Copy the rows of an existing result file (the first `limit`) into writer."""
    left = limit
    for batch in pq.ParquetFile(path).iter_batches(batch_size=ROW_GROUP_ROWS):
        if left is not None:
            batch = batch.slice(0, left)
            left -= batch.num_rows
        writer.write(pa.Table.from_batches([batch]).cast(writer.schema))
        if left == 0:
            return
