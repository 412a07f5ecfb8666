"""A result file converted to CSV (its description beside it, as JSON) or to Parquet
(its description kept under the `sim` metadata key), streamed batch by batch."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from sim.engine.analysis.inputs import AnalysisError, one_line, result_meta
from sim.engine.analysis.output import check_writable, write_atomically
from sim.engine.run.results import META_KEY

TARGETS = ("csv", "parquet")
BATCH_ROWS = 1 << 20


def sidecar_path(path):
    """Where the description of a CSV export goes: `PATH.json`."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def default_output(source, target):
    return Path(source).with_suffix(f".{target}")


def outputs(source, target, out=None):
    """The files an export writes: the converted file, and for CSV its JSON sidecar."""
    out = Path(out) if out else default_output(source, target)
    if out.resolve() == Path(source).resolve():
        raise AnalysisError(f"{out}: the output would replace the input; choose another --out")
    return [out, sidecar_path(out)] if target == "csv" else [out]


def export(source, target, out=None, overwrite=False):
    """Convert the result file source; returns the paths written."""
    if target not in TARGETS:
        raise AnalysisError(f"cannot export to {target!r}: choose {' or '.join(TARGETS)}")
    meta = result_meta(source)
    paths = outputs(source, target, out)
    for path in paths:
        check_writable(path, overwrite)
    try:
        reader = pq.ParquetFile(source)
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(f"{source}: corrupt Parquet file ({one_line(error)})") from None
    try:
        if target == "csv":
            write_atomically(paths[0], lambda tmp: _write_csv(reader, tmp))
            description = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
            write_atomically(paths[1], lambda tmp: Path(tmp).write_text(description, "utf-8"))
        else:
            write_atomically(paths[0], lambda tmp: _write_parquet(reader, meta, tmp))
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(f"cannot export {source}: {one_line(error)}") from None
    return paths


def _batches(reader):
    return reader.iter_batches(batch_size=BATCH_ROWS)


def _write_csv(reader, path):
    # Coded columns are written as their labels, which is what a CSV reader expects.
    schema = pa.schema(
        [
            pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
            for f in reader.schema_arrow
        ]
    )
    with pacsv.CSVWriter(path, schema) as writer:
        for batch in _batches(reader):
            writer.write_batch(batch.cast(schema))


def _write_parquet(reader, meta, path):
    schema = reader.schema_arrow.with_metadata({META_KEY: json.dumps(meta)})
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for batch in _batches(reader):
            writer.write_batch(batch)
