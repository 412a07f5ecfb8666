"""A result file converted to CSV (its description beside it, as JSON) or to Parquet
(its description kept under the `sim` metadata key), streamed batch by batch.

The output is always in the current layout: a file written before rows carried their
game, rules and params (an "old file") gets those columns, from its run description, in
their place after seed and deal, so `--to parquet` upgrades it. The output must be named:
a copy written beside its input would land in the results folder and be read there again.
"""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from sim.engine.analysis.inputs import (
    AnalysisError,
    check_column_types,
    column_kinds,
    identity_of,
    one_line,
    result_meta,
)
from sim.engine.analysis.output import check_writable, write_atomically, write_together
from sim.engine.compressed import SUFFIXES as COMPRESSIONS
from sim.engine.games import registered_games
from sim.engine.run.files import same_file
from sim.engine.run.request import OTHER_FORMATS
from sim.engine.run.results import IDENTITY, LEADING, META_KEY

TARGETS = ("csv", "parquet")
TITLES = {"csv": "CSV", "parquet": "Parquet"}
# Names that promise a format (None: one export does not write): an export is never
# written under the name of another.
SUFFIX_FORMATS = OTHER_FORMATS | {".parquet": "parquet"}
BATCH_ROWS = 1 << 20
NEEDS_OUT = (
    "export needs --out FILE, outside the results folder "
    "(a copy beside its input would be read again by scans of that folder)"
)


def sidecar_path(path):
    """Where the description of a CSV export goes: `PATH.json`."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def outputs(source, target, out):
    """The files an export writes: the converted file, and for CSV its JSON sidecar."""
    if out is None:
        raise AnalysisError(NEEDS_OUT)
    out = Path(out)
    _check_suffix(out, target)
    paths = [out, sidecar_path(out)] if target == "csv" else [out]
    for path in paths:  # the CSV's description, PATH.json, may name the input too
        if same_file(path, source):
            raise AnalysisError(f"{path}: the output would replace the input; choose another --out")
    return paths


def _check_suffix(out, target):
    """Refuse a name whose suffix promises another format than target's, or a
    compression (an export is never compressed)."""
    compressed = out.suffix.lower() in COMPRESSIONS
    plain = out.with_suffix("") if compressed else out
    named = SUFFIX_FORMATS.get(plain.suffix.lower(), target)
    if named == target and not compressed:
        return
    fitting = plain if named == target else plain.with_suffix("." + target)
    how = ", uncompressed" if compressed else ""
    other = f", or give --to {named}" if named in TARGETS and not compressed else ""
    raise AnalysisError(
        f"--out {out}: --to {target} writes {TITLES[target]}{how}; write {fitting}{other}"
    )


def export(source, target, out, overwrite=False):
    """Convert the result file source; returns the paths written."""
    if target not in TARGETS:
        raise AnalysisError(f"cannot export to {target!r}: choose {' or '.join(TARGETS)}")
    meta = result_meta(source)
    paths = outputs(source, target, out)
    for path in paths:
        check_writable(path, overwrite)
    try:
        reader = pq.ParquetFile(source)
        layout = Layout(reader.schema_arrow, meta, source)
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(f"{source}: corrupt Parquet file ({one_line(error)})") from None
    # A copy of a broken file would pass its faults on to every reader of the dataset.
    check_column_types(source, reader.schema_arrow)
    try:
        if target == "csv":
            description = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
            write_together(
                [
                    (paths[0], lambda tmp: _write_csv(reader, layout, tmp)),
                    (paths[1], lambda tmp: Path(tmp).write_text(description, "utf-8")),
                ]
            )
        else:
            write_atomically(paths[0], lambda tmp: _write_parquet(reader, layout, meta, tmp))
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(f"cannot export {source}: {one_line(error)}") from None
    return paths


class Layout:
    """The columns of the output: the input's, and for an old file the run's text columns
    (game, rules, params) added after seed and deal, from its description, with the
    columns' descriptions where the input has none."""

    def __init__(self, schema, meta, source):
        self.source = source
        names = schema.names
        texts = dict(zip(IDENTITY, identity_of(meta), strict=True))
        self.added = {name: texts[name] for name in IDENTITY if name not in names}
        if not self.added:
            self.schema = schema
            return
        game = registered_games().get(meta["game"])
        helps = {column.name: column.help for column in game.columns} if game else {}
        leading = {name: (kind, text) for name, kind, text in LEADING}
        helps |= {name: text for name, (_, text) in leading.items()}
        fields = [
            schema.field(name) if name in names else pa.field(name, leading[name][0])
            for name in leading
            if name in names or name in self.added
        ]
        fields += [field for field in schema if field.name not in leading]
        self.schema = pa.schema([_described(field, helps.get(field.name)) for field in fields])

    def convert(self, batch):
        if not self.added:
            return batch
        n = batch.num_rows
        codes = pa.array(np.zeros(n, np.int8))
        arrays = [
            pa.DictionaryArray.from_arrays(codes, pa.array([self.added[field.name]]))
            if field.name in self.added
            else batch.column(field.name)
            for field in self.schema
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _described(field, description):
    if not description or (field.metadata and b"description" in field.metadata):
        return field
    return field.with_metadata((field.metadata or {}) | {b"description": description.encode()})


def _batches(reader, layout):
    checked = sorted(column_kinds().keys() & set(reader.schema_arrow.names))
    for batch in reader.iter_batches(batch_size=BATCH_ROWS):
        for name in checked:
            if batch.column(name).null_count:
                raise AnalysisError(f"{layout.source}: column {name} holds nulls")
        yield layout.convert(batch)


def _write_csv(reader, layout, path):
    # Coded columns are written as their labels, which is what a CSV reader expects.
    schema = pa.schema(
        [
            pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
            for f in layout.schema
        ]
    )
    with pacsv.CSVWriter(path, schema) as writer:
        for batch in _batches(reader, layout):
            writer.write_batch(batch.cast(schema))


def _write_parquet(reader, layout, meta, path):
    schema = layout.schema.with_metadata({META_KEY: json.dumps(meta)})
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for batch in _batches(reader, layout):
            writer.write_batch(batch.cast(schema))
