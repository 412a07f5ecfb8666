"""Result files converted to CSV (their description beside it, as JSON) or to Parquet
(the description kept under the `sim` metadata key).

The output is always in the current layout: a file of an earlier layout gets its setting,
code and maps from its run description (engine.run.results.upgrade_table), so `--to
parquet` upgrades it. A folder, or several inputs, give one file of their rows with one
row per (setting, seed, deal), as `sim compare` counts them, its description naming every
setting. The output must be named: a copy written beside its input would land in the
results folder and be read there again. In CSV, the maps become columns of their own
(`param.depth_weight`, `rule.wastes`, and the game's figures under their own names).
"""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from sim.engine.analysis.inputs import (
    AnalysisError,
    check_column_types,
    column_kinds,
    expand_paths,
    one_line,
    readable_files,
    result_meta,
)
from sim.engine.analysis.output import check_writable, write_together
from sim.engine.compressed import SUFFIXES as COMPRESSIONS
from sim.engine.games import registered_games
from sim.engine.run.files import same_file
from sim.engine.run.request import OTHER_FORMATS
from sim.engine.run.results import META_KEY, STATS, setting_of, upgrade_table

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


def outputs(sources, target, out):
    """The files an export writes: the converted file, and for CSV its JSON sidecar."""
    if out is None:
        raise AnalysisError(NEEDS_OUT)
    out = Path(out)
    _check_suffix(out, target)
    paths = [out, sidecar_path(out)] if target == "csv" else [out]
    for path in paths:  # the CSV's description, PATH.json, may name an input too
        if any(same_file(path, source) for source in sources):
            which = "the input" if len(sources) == 1 else "an input"
            raise AnalysisError(f"{path}: the output would replace {which}; choose another --out")
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


def export(paths, target, out, overwrite=False, skipped=None):
    """Convert the result files or folders given into one file; returns the paths written.
    Parquet files found in the folders that are not sim result files are left out, and
    added to the list `skipped` when one is given, for a note.

    One file given keeps its rows and description as they are (brought to the current
    layout); a folder or several files give their rows pooled, one per (setting, seed,
    deal), the first file (in the order given, a folder's in name order) counting."""
    if target not in TARGETS:
        raise AnalysisError(f"cannot export to {target!r}: choose {' or '.join(TARGETS)}")
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    single = len(paths) == 1 and not Path(paths[0]).is_dir()
    sources = expand_paths(paths) if not single else [Path(paths[0])]
    if not single:
        sources, left_out = readable_files(sources, paths)
        if skipped is not None:
            skipped += left_out
    metas = [result_meta(source) for source in sources]
    written = outputs(sources, target, out)
    for path in written:
        check_writable(path, overwrite)
    table = _pooled(sources, metas)
    meta = metas[0] if single else _pooled_description(sources, metas)
    if target == "csv":
        description = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
        writes = [
            (written[0], lambda tmp: _write_csv(table, tmp)),
            (written[1], lambda tmp: Path(tmp).write_text(description, "utf-8")),
        ]
    else:
        writes = [(written[0], lambda tmp: _write_parquet(table, meta, tmp))]
    try:
        write_together(writes)
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(
            f"cannot export {', '.join(map(str, paths))}: {one_line(error)}"
        ) from None
    return written


def _pooled(sources, metas):
    """The rows of the sources in the current layout, one per (setting, seed, deal)."""
    tables = [_current_rows(source, meta) for source, meta in zip(sources, metas, strict=True)]
    table = pa.concat_tables(tables).unify_dictionaries() if len(tables) > 1 else tables[0]
    if len(tables) == 1:
        return table
    keys = pa.table(
        {
            "setting": table.column("setting").cast(pa.string()),
            "seed": table.column("seed"),
            "deal": table.column("deal"),
            "row": pa.array(np.arange(table.num_rows, dtype=np.int64)),
        }
    )
    first = keys.group_by(["setting", "seed", "deal"], use_threads=False).aggregate(
        [("row", "min")]
    )
    return table.take(pa.array(np.sort(first.column("row_min").to_numpy())))


def _current_rows(source, meta):
    """A result file's rows in the current layout, their columns checked."""
    game = registered_games().get(meta.get("game"))
    if game is None and "settings" not in meta:
        raise AnalysisError(f"{source}: its game {meta['game']!r} is not installed here")
    try:
        reader = pq.ParquetFile(source)
        check_column_types(source, reader.schema_arrow)
        table = reader.read()
    except (OSError, pa.ArrowException) as error:
        raise AnalysisError(f"{source}: corrupt Parquet file ({one_line(error)})") from None
    for name in sorted(column_kinds().keys() & set(table.column_names)):
        if table.column(name).null_count:
            raise AnalysisError(f"{source}: column {name} holds nulls")
    if "settings" in meta:  # a pooled export: its rows say their settings already
        return table
    try:
        return upgrade_table(game, meta, table)
    except (KeyError, pa.ArrowException) as error:
        raise AnalysisError(f"{source}: cannot read its rows ({one_line(error)})") from None


def _pooled_description(sources, metas):
    """The description of a pooled export: every setting's run description, by id."""
    settings = {}
    for meta in metas:
        pooled = meta.get("settings") or {setting_of(meta): meta}  # a pooled file's own
        for setting, described in pooled.items():
            settings.setdefault(setting, described)
    return {"pooled": True, "files": [str(path) for path in sources], "settings": settings}


def _write_csv(table, path):
    """Coded columns as their labels, maps as a column per key: what a CSV reader expects."""
    flat = _flattened(table)
    schema = pa.schema(
        [
            pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
            for f in flat.schema
        ]
    )
    with pacsv.CSVWriter(path, schema) as writer:
        writer.write_table(flat.cast(schema), max_chunksize=BATCH_ROWS)


def _flattened(table):
    """The table with each map column replaced by a column per key it holds: `param.KEY`,
    `rule.KEY`, and the game's figures (`stats`) under their own names."""
    for name in ("param", "rule", STATS):
        column = table.column(name)
        keys = pc.unique(column.combine_chunks().keys).to_pylist() if len(column) else []
        index = table.column_names.index(name)
        table = table.remove_column(index)
        for key in keys:
            values = pc.map_lookup(column, pa.scalar(key, column.type.key_type), "first")
            label = key if name == STATS else f"{name}.{key}"
            if name == STATS:  # after the shared columns, as they were before the map
                table = table.append_column(label, values)
            else:
                table = table.add_column(index, label, values)
                index += 1
    return table


def _write_parquet(table, meta, path):
    schema = table.schema.with_metadata({META_KEY: json.dumps(meta)})
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        writer.write_table(table.cast(schema), row_group_size=BATCH_ROWS)
