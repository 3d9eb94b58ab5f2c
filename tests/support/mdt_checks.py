"""Test helper: a table's metadata table, as hoodie's reader answers it, against what the
data says: partitions and files equal the committed files on storage, column statistics
the Parquet footers, bloom filters the footers' filters (holding every key of their
file), the record index the file group each live key is read from. Also the tables that
hold one (conformance tables, copies of Apache Hudi 0.15's samples), a way to damage
a copy's metadata table (rewriting its base HFiles) and a metadata partition dropped
Apache Hudi 0.15's way."""
from __future__ import annotations

import dataclasses
import shutil
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hudi015_samples import DATA
from shared import shared_dir

import hoodie
from hoodie.config.table_config import TableConfig
from hoodie.formats.hfile import HFileReader, encode_hfile
from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.metadata_table import KeyLocation, MetadataRecord, MetadataTableReader, validate_stats
from hoodie.metadata_table.records import ColumnStats, decode_value, encode_value
from hoodie.metadata_table.validate import MetadataValidation, validate_metadata_table
from hoodie.metadata_table.writer import set_partition_state
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action, Instant


def mdt_tables() -> list[str]:
    """The conformance tables that hold a metadata table, by name."""
    tables = shared_dir() / "conformance" / "tables"
    out = []
    for z in sorted(tables.rglob("*.zip")) if tables.is_dir() else []:
        with zipfile.ZipFile(z) as zf:
            if f"{z.stem}/.hoodie/metadata/.hoodie/hoodie.properties" in zf.namelist():
                out.append(z.relative_to(tables).with_suffix("").as_posix())
    return out


#: the tables Apache Hudi 0.15 wrote with all four metadata partitions, metadata table
#: included (``tests/metadata_table/data/hudi015_<type>_with_metadata.tgz``)
SAMPLE_NAMES = ["hudi015_COPY_ON_WRITE", "hudi015_MERGE_ON_READ"]


def copy_sample(name: str, tmp_path: Path) -> Path:
    """A copy of one of :data:`SAMPLE_NAMES`, unpacked into ``tmp_path``."""
    archive = DATA / f"{name.lower()}_with_metadata.tgz"
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / name


def out_of_sync_copy(name: str, tmp_path: Path) -> tuple[Path, str]:
    """A copy of a sample whose data table a writer that does not maintain the metadata
    table wrote to, and the instant it wrote: an upsert of one row by hoodie with the
    metadata table off (which drops it, as Apache Hudi does), the metadata table and
    ``hoodie.table.metadata.partitions`` put back as they were, as hudi-rs or an older
    hoodie would have left them."""
    base = copy_sample(name, tmp_path)
    aside = tmp_path / "metadata-aside"
    shutil.copytree(base / ".hoodie" / "metadata", aside, symlinks=True)
    table = HoodieTable.open(str(base))
    partitions = table.config.props["hoodie.table.metadata.partitions"]
    data = [f.name for f in table.data_schema() or []]
    row = hoodie.read(str(base)).select(data).slice(0, 1)
    row = row.set_column(data.index("note"), "note", pa.array(["written without the metadata table"], row.schema.field("note").type))
    options = {
        "hoodie.table.name": table.config.name,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.table.type": table.config.table_type,
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.metadata.enable": "false",
    }
    instant = hoodie.write(row, str(base), options)
    if not (base / ".hoodie" / "metadata").exists():
        shutil.copytree(aside, base / ".hoodie" / "metadata", symlinks=True)
    props = {**HoodieTable.open(str(base)).config.props, "hoodie.table.metadata.partitions": partitions}
    (base / ".hoodie" / "hoodie.properties").write_bytes(TableConfig(props).render())
    return base, instant


def drop_apache_hudis_way(path: Path, partition: str) -> None:
    """Drop the metadata ``partition`` of the table at ``path`` as Apache Hudi 0.15's
    ``HoodieTable.deleteMetadataIndexIfNecessary`` does: its name leaves
    ``hoodie.properties`` and its folder goes, while the metadata table's completed
    instants still name its files."""
    table = HoodieTable.open(str(path))
    set_partition_state(table, [p for p in table.config.metadata_partitions if p != partition], [])
    shutil.rmtree(path / ".hoodie" / "metadata" / partition)


#: a merge-on-read table whose metadata table has column_stats and bloom_filters,
#: compacted often (the column_stats HFiles of its compactions are named by its timeline)
INDEXED_MOR = {
    "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false", "hoodie.metadata.compact.max.delta.commits": "2",
    "hoodie.metadata.index.column.stats.enable": "true", "hoodie.metadata.index.bloom.filter.enable": "true",
}


def services_after_a_hudi_drop(path: Path, pending_compaction: bool) -> None:
    """A table at ``path`` (:data:`INDEXED_MOR`) with work for a table service — slices a
    clean removes (a compaction ran, two updates followed) and, with
    ``pending_compaction``, a compaction scheduled — whose metadata partition
    ``column_stats`` is then dropped Apache Hudi's way (:func:`drop_apache_hudis_way`)."""
    from hoodie.services import CompactionSettings, open_for_services, run_compaction, schedule_compaction

    def update(ts: int) -> None:
        hoodie.write(pa.table({"id": [1, 2, 3, 4], "p": ["a", "a", "b", "b"], "ts": [ts] * 4}), str(path), INDEXED_MOR)

    for ts in range(1, 4):
        update(ts)
    table = open_for_services(str(path), INDEXED_MOR)
    instant = schedule_compaction(table, CompactionSettings(), require_threshold=False)[0]
    run_compaction(table.reload(), instant)
    for ts in range(4, 6):
        update(ts)
    if pending_compaction:
        assert schedule_compaction(open_for_services(str(path), INDEXED_MOR), CompactionSettings(), require_threshold=False)[0]
    drop_apache_hudis_way(path, "column_stats")


def built_again_for(path: str, before: set[Instant]) -> Instant:
    """Check that the metadata table of the table at ``path`` was built again for the one
    instant a service completed since the instants ``before``: without ``column_stats``,
    that instant's delta commit in it, listing right, its own services able to compact it
    (kept as it was, they fail: a column_stats HFile missing from storage). The instant."""
    from hoodie.config.options import HoodieConfig
    from hoodie.metadata_table.services import MetadataServiceSettings, run_table_services
    from hoodie.services.for_metadata import METADATA_SERVICES

    table = HoodieTable.open(path)
    assert table.config.metadata_partitions == ("bloom_filters", "files")
    [done] = set(table.timeline.completed()) - before
    mdt = HoodieTable.open(f"{path}/.hoodie/metadata")
    assert done.timestamp in {i.timestamp for i in mdt.timeline.completed([Action.DELTA_COMMIT])}
    check_files(MetadataTableReader(table), table)
    assert validate_metadata_table(table).ok
    settings = MetadataServiceSettings.of(HoodieConfig.of({"hoodie.metadata.compact.max.delta.commits": "1"}))
    assert run_table_services(table, settings, METADATA_SERVICES).compactions
    return done


def rewrite_mdt_base(base: Path, partition: str, change: Callable[[MetadataRecord], MetadataRecord | None]) -> list[MetadataRecord]:
    """Rewrite every base HFile of a metadata-table partition with ``change`` applied to
    each record (None drops it); the records it changed, as they were."""
    reader = MetadataTableReader(HoodieTable.open(str(base)))
    changed = []
    for slc in reader.file_slices(partition):
        assert slc.base_file is not None
        path = Path(slc.base_file.path)
        hfile = HFileReader.from_bytes(path.read_bytes(), str(path))
        schema = hfile.schema
        assert schema is not None
        entries = []
        for key, value in hfile.read_all():
            record = decode_value(key, value, schema, str(path))
            new = change(record)
            if new != record:
                changed.append(record)
            if new is not None:
                entries.append((key, encode_value(new, schema)))
        path.write_bytes(encode_hfile(entries, schema=schema))
    return changed


def change_one_column_min(base: Path, column: str, files: set[str], new_min: Any) -> ColumnStats:
    """Rewrite the metadata table's column statistics with the minimum of ``column`` in
    the first of ``files`` its base files hold set to ``new_min``; that statistic, as it
    was."""
    changed: list[ColumnStats] = []

    def lower(record: MetadataRecord) -> MetadataRecord:
        cs = record.payload
        if isinstance(cs, ColumnStats) and cs.column_name == column and cs.file_name in files and not changed:
            changed.append(cs)
            return dataclasses.replace(record, payload=dataclasses.replace(cs, min=new_min))
        return record

    rewrite_mdt_base(base, "column_stats", lower)
    (before,) = changed
    return before


def stored_files(table: HoodieTable, partition: str) -> dict[str, int]:
    """The files of a partition's committed slices (every slice, and replaced file groups
    the cleaner has not removed yet: the metadata table lists them too)."""
    view = table.local_view()
    out = {}
    for group in [*view.file_groups(partition), *view.replaced_file_groups(partition)]:
        for slc in group.slices:
            if slc.base_file is not None:
                out[slc.base_file.file_name] = slc.base_file.size
            out.update((lf.file_name, lf.size) for lf in slc.log_files)
    return out


def validated(reader: MetadataTableReader, table: HoodieTable, check: str) -> MetadataValidation:
    """hoodie's validation of one check of the metadata table; it found no difference."""
    report = validate_metadata_table(table, [check], reader=reader)
    assert report.ok, "\n".join(map(str, report.differences[:20]))
    return report


def check_files(reader: MetadataTableReader, table: HoodieTable) -> list[str]:
    """Partitions and files equal storage's committed files; returns the partitions."""
    partitions = table.local_view().all_partition_paths()
    assert reader.all_partition_paths() == partitions
    many = reader.files_in_many(partitions)
    for partition in partitions:
        expected = stored_files(table, partition)
        assert reader.files_in(partition) == many[partition] == expected, partition
    assert validated(reader, table, "files").partitions == tuple(partitions)
    return partitions


def footer_stats(path: Path) -> dict[str, tuple[Any, Any, int, int]]:
    """Column → (min, max, values, nulls) over all row groups of a Parquet file."""
    return {c: (s.min, s.max, s.value_count, s.null_count) for c, s in validate_stats.footer_stats(pq.ParquetFile(path).metadata).items()}


def check_column_stats(reader: MetadataTableReader, table: HoodieTable) -> int:
    """Every file's statistics equal its footer's (base files) or its records' (log
    files); returns how many (file, column) statistics were compared."""
    report = validated(reader, table, "column_stats")
    for slc in table.local_view().latest_slices_all():
        if slc.base_file is None:
            continue
        stats = reader.column_stats(slc.partition_path, slc.base_file.file_name, [f.name for f in table.data_schema() or []])
        assert stats, slc.base_file.file_name
        assert all(cs.file_name == slc.base_file.file_name and cs.column_name == c for c, cs in stats.items())
        # a key-prefix scan of one column finds the same record
        some = sorted(stats)[0]
        assert stats[some] in reader.column_stats_of(some, slc.partition_path)
        assert stats[some] in reader.column_stats_of(some)
    return report.statistics_checked


def check_bloom_filters(reader: MetadataTableReader, table: HoodieTable) -> int:
    """Every base file's filter equals its footer's and holds all its keys; returns how
    many filters were compared."""
    for slc in table.local_view().latest_slices_all():
        if slc.base_file is not None:
            assert reader.bloom_filter(slc.partition_path, slc.base_file.file_name) is not None, slc.base_file.file_name
    return validated(reader, table, "bloom_filters").filters_checked


def check_record_index(reader: MetadataTableReader, base_path: str, gone: Sequence[str] = ()) -> dict[str, KeyLocation]:
    """Each live key (as hoodie reads the table) is placed in the partition and file
    group it is read from; keys in ``gone`` (deleted) are not placed at all."""
    rows = hoodie.read(base_path).select(["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]).to_pylist()
    where = {}
    for row in rows:
        name = row["_hoodie_file_name"]
        parsed = parse_base_file_name(name) or parse_log_file_name(name)
        # (records Apache Hudi 0.15 wrote into log files name their file group only)
        where[row["_hoodie_record_key"]] = (row["_hoodie_partition_path"], parsed.file_id if parsed else name)
    located = reader.record_locations([*where, *gone, "no-such-key"])
    assert {k: (loc.partition, loc.file_id) for k, loc in located.items()} == where
    # each key looked up alone reads only the file group it hashes to, and finds it there
    for key in list(where)[:5]:
        assert reader.record_locations([key]) == {key: located[key]}
    assert validated(reader, HoodieTable.open(base_path), "record_index").keys_checked == len(where)
    return located
