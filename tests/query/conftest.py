"""Query test helpers: the hudi-rs oracle (PyPI ``hudi``), a strict result comparison,
hand-built synthetic tables, and hand-built merge-on-read tables (:class:`MorTable`:
base files, log files block by block, delta commits)."""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.formats.log import (
    AvroDataBlock,
    CommandBlock,
    DeleteBlock,
    DeleteRecord,
    LogBlock,
    OrderingType,
    ParquetDataBlock,
    encode_log_file,
)
from hoodie.table.file_group import FileSlice
from hoodie.table.properties_file import store_table_config
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import CommitMetadata, WriteStat


@dataclass(frozen=True)
class HudiRs:
    """What hudi-rs returns for a table at ``path``; ``None`` means "no batches"."""

    path: str

    def _table(self):
        return _hudi().HudiTable(self.path)

    @staticmethod
    def _concat(batches: list[pa.RecordBatch]) -> pa.Table | None:
        return pa.Table.from_batches(batches) if batches else None

    def snapshot(self, as_of: str | None = None) -> pa.Table | None:
        options = _hudi().HudiReadOptions()
        if as_of is not None:
            options = options.with_as_of_timestamp(as_of)
        return self._concat(self._table().read(options))

    def read_optimized(self) -> pa.Table | None:
        options = _hudi().HudiReadOptions().with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
        return self._concat(self._table().read(options))

    def incremental(self, begin: str, end: str | None = None) -> pa.Table | None:
        options = _hudi().HudiReadOptions().with_query_type(_hudi().HudiQueryType.Incremental).with_start_timestamp(begin)
        if end is not None:
            options = options.with_end_timestamp(end)
        return self._concat(self._table().read(options))

    def schema(self, meta_fields: bool = True) -> pa.Schema:
        t = self._table()
        return t.get_schema_with_meta_fields() if meta_fields else t.get_schema()

    def commit_timestamps(self) -> list[str]:
        timeline = self._table().get_timeline()
        out = {i.timestamp for i in timeline.get_completed_commits()}
        out |= {i.timestamp for i in timeline.get_completed_deltacommits()}
        out |= {i.timestamp for i in timeline.get_completed_replacecommits()}
        return sorted(out)


def _hudi():
    import hudi

    return hudi


@pytest.fixture
def hudi_rs() -> type[HudiRs]:
    """``hudi_rs(path)``: the hudi-rs oracle for a table."""
    return HudiRs


def rows(table: pa.Table) -> list[dict]:
    """Rows in a canonical order (``repr`` orders nested values deterministically)."""
    return sorted(table.to_pylist(), key=repr)


def assert_same(mine: pa.Table, theirs: pa.Table | None, empty_schema: pa.Schema | None, what: str) -> None:
    """``mine`` equals hudi-rs's result: same schema (names, types, nullability, order) and
    the same rows. hudi-rs returns no batches for an empty result, so then ``mine`` must be
    empty with ``empty_schema``."""
    if theirs is None:
        assert mine.num_rows == 0, f"{what}: hudi-rs returns nothing, hoodie {mine.num_rows} rows: {rows(mine)[:3]}"
        if empty_schema is not None:
            assert mine.schema == empty_schema, f"{what}: schema of the empty result\n{mine.schema}\n!=\n{empty_schema}"
        return
    assert mine.schema == theirs.schema, f"{what}: schema\n{mine.schema}\n!=\n{theirs.schema}"
    assert mine.schema.metadata is None, f"{what}: unexpected schema metadata {mine.schema.metadata}"
    assert mine.num_rows == theirs.num_rows, f"{what}: {mine.num_rows} rows, hudi-rs {theirs.num_rows}"
    assert rows(mine) == rows(theirs), f"{what}: rows differ"


@pytest.fixture
def same_as_hudi_rs():
    return assert_same


# --- synthetic tables ---------------------------------------------------------------------------
# Hand-made tables with exactly the timeline and files a planner case needs (independent of
# the write client). Base files hold the five meta columns then id:int32, name:string, part.

DATA_SCHEMA = pa.schema([("id", pa.int32()), ("name", pa.string()), ("part", pa.string())])


class SyntheticTable:
    """Builds a copy-on-write (or merge-on-read) table file by file, instant by instant.

    ``layout=2`` writes the v8 timeline layout (completed instants named
    ``<requested>_<completed>.<action>``) with JSON content, which hoodie decodes but
    hudi-rs would not: use it for hoodie-only checks of completion-time semantics.
    """

    def __init__(self, root: Path, name: str = "synthetic", table_type: str = "COPY_ON_WRITE",
                 populate_meta_fields: bool = True, layout: int = 1, schema: pa.Schema = DATA_SCHEMA) -> None:
        self.path = str(root / name)
        self.name = name
        self.layout = layout
        self.populate_meta_fields = populate_meta_fields
        self.schema = schema
        props = {
            "hoodie.table.name": name,
            "hoodie.table.type": table_type,
            "hoodie.table.version": "6" if layout == 1 else "8",
            "hoodie.timeline.layout.version": str(layout),
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.partition.fields": "part",
            "hoodie.table.precombine.field": "id",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.datasource.write.hive_style_partitioning": "false",
            "hoodie.datasource.write.partitionpath.urlencode": "false",
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.populate.meta.fields": str(populate_meta_fields).lower(),
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.base.file.format": "PARQUET",
        }
        if layout == 2:
            props["hoodie.timeline.path"] = "timeline"
        HoodieTable.create(self.path, props)
        self.meta_dir = os.path.join(self.path, ".hoodie", "timeline" if layout == 2 else "")
        os.makedirs(self.meta_dir, exist_ok=True)

    def open(self) -> HoodieTable:
        return HoodieTable.open(self.path)

    # --- data files -------------------------------------------------------------------------
    def base_file(self, instant: str, partition: str, file_id: str, records: list[dict],
                  commit_times: dict[int, str] | None = None, token: str = "0-1-1",
                  schema: pa.Schema | None = None) -> WriteStat:
        """Write a base file; ``commit_times`` keeps older commit times of copied rows."""
        schema = schema or self.schema
        name = f"{file_id}_{token}_{instant}.parquet"
        rel = f"{partition}/{name}" if partition else name
        n = len(records)
        times = [(commit_times or {}).get(r["id"], instant) for r in records]
        meta = {
            "_hoodie_commit_time": times,
            "_hoodie_commit_seqno": [f"{t}_0_{i}" for i, t in enumerate(times)],
            "_hoodie_record_key": [str(r["id"]) for r in records],
            "_hoodie_partition_path": [partition] * n,
            "_hoodie_file_name": [name] * n,
        }
        if not self.populate_meta_fields:
            meta = {k: (v if k == "_hoodie_file_name" else [None] * n) for k, v in meta.items()}
        cols = {k: pa.array(v, pa.string()) for k, v in meta.items()}
        for f in schema:
            cols[f.name] = pa.array([r.get(f.name) for r in records], f.type)
        full = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        pq.write_table(pa.table(cols), full)
        return WriteStat(fileId=file_id, path=rel, partitionPath=partition, numWrites=n,
                         fileSizeInBytes=os.path.getsize(full))

    def log_file(self, partition: str, file_id: str, base_instant: str, version: int = 1) -> None:
        """An (empty) log file name is enough for planning: readers must see it."""
        name = f".{file_id}_{base_instant}.log.{version}_0-1-1"
        full = os.path.join(self.path, partition, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        Path(full).write_bytes(b"")

    # --- timeline ---------------------------------------------------------------------------
    def _write(self, name: str, data: bytes = b"") -> None:
        Path(self.meta_dir, name).write_bytes(data)

    def metadata(self, stats: list[WriteStat], operation: str = "UPSERT",
                 replaced: dict[str, list[str]] | None = None, schema: pa.Schema | None = None) -> bytes:
        by_partition: dict[str, list[WriteStat]] = {}
        for s in stats:
            by_partition.setdefault(s.partitionPath, []).append(s)
        avro = avro_schema_json(arrow_to_avro_schema(schema or self.schema, self.name))
        return CommitMetadata(by_partition, operation, {"schema": avro},
                              partition_to_replace_file_ids=replaced).to_json_bytes()

    def commit(self, instant: str, stats: list[WriteStat], action: str = "commit", state: str = "completed",
               completed_at: str | None = None, replaced: dict[str, list[str]] | None = None,
               schema: pa.Schema | None = None) -> None:
        """Put an instant on the timeline in ``state`` (requested, inflight or completed)."""
        operation = "INSERT_OVERWRITE" if replaced else "UPSERT"
        body = self.metadata(stats, operation, replaced, schema)
        self._write(f"{instant}.{action}.requested")
        if state == "requested":
            return
        self._write(f"{instant}.inflight" if action == "commit" else f"{instant}.{action}.inflight", body)
        if state == "inflight":
            return
        if self.layout == 2:
            self._write(f"{instant}_{completed_at or instant}.{action}", body)
        else:
            self._write(f"{instant}.{action}", body)

    def archive_something(self) -> None:
        folder = os.path.join(self.path, ".hoodie", "timeline/history" if self.layout == 2 else "archived")
        os.makedirs(folder, exist_ok=True)
        Path(folder, ".commits_.archive.1_1-0-1" if self.layout == 1 else "manifest_1").write_bytes(b"x")


@pytest.fixture
def synthetic(tmp_path: Path):
    """Factory of :class:`SyntheticTable` under this test's tmp_path."""
    counter = iter(range(1000))

    def make(**kwargs) -> SyntheticTable:
        return SyntheticTable(tmp_path, kwargs.pop("name", f"t{next(counter)}"), **kwargs)

    return make


# --- merge-on-read tables -------------------------------------------------------------------
# Records are {"id", "ts", "name", "part"} dicts; the record key is str(id); ``ts`` is the
# ordering field unless told otherwise.

TS_SCHEMA = pa.schema([("id", pa.int32()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string())])
META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")


class MorTable(SyntheticTable):
    """A merge-on-read table built file by file (layout 1 unless ``layout=2``)."""

    def __init__(self, root: Path, name: str = "mor", schema: pa.Schema = TS_SCHEMA, ordering: str | None = "ts",
                 props: Mapping[str, str | None] | None = None, layout: int = 1, populate_meta_fields: bool = True) -> None:
        super().__init__(root, name, table_type="MERGE_ON_READ", layout=layout, schema=schema, populate_meta_fields=populate_meta_fields)
        updates: dict[str, str | None] = {"hoodie.table.precombine.field": ordering}
        updates.update(props or {})
        table = HoodieTable.open(self.path)
        config = table.config.with_updates(updates)
        store_table_config(config, table.storage, table.meta_path)
        self.avro_schema = avro_schema_json(arrow_to_avro_schema(schema, name, include_meta_fields=True))

    # --- records and blocks -----------------------------------------------------------------
    def records(self, instant: str, rows: Sequence[Mapping[str, Any]], partition: str, file_name: str,
                schema: pa.Schema | None = None) -> pa.Table:
        """Log records with meta columns as Java writes them (file name = file id)."""
        schema = schema or self.schema
        cols: dict[str, pa.Array] = {
            "_hoodie_commit_time": pa.array([r.get("_commit", instant) for r in rows], pa.string()),
            "_hoodie_commit_seqno": pa.array([r.get("_seqno", f"{instant}_0_{i}") for i, r in enumerate(rows)], pa.string()),
            "_hoodie_record_key": pa.array([str(r["id"]) for r in rows], pa.string()),
            "_hoodie_partition_path": pa.array([partition] * len(rows), pa.string()),
            "_hoodie_file_name": pa.array([file_name] * len(rows), pa.string()),
        }
        for f in schema:
            cols[f.name] = pa.array([r.get(f.name) for r in rows], f.type)
        return pa.table(cols)

    def data_block(self, instant: str, rows: Sequence[Mapping[str, Any]], partition: str, file_id: str,
                   parquet: bool = False, schema: pa.Schema | None = None) -> LogBlock:
        schema = schema or self.schema
        avro = avro_schema_json(arrow_to_avro_schema(schema, self.name, include_meta_fields=True))
        records = self.records(instant, rows, partition, file_id, schema)
        if parquet:
            return ParquetDataBlock.create(records, instant, avro)
        return AvroDataBlock.create(records, avro, instant)

    def delete_block(self, instant: str, deletes: Iterable[tuple[Any, ...]], partition: str) -> DeleteBlock:
        """``deletes``: ``(id,)`` (Java's default ordering, IntWrapper 0) or ``(id, value)``
        or ``(id, value, OrderingType)``."""
        records = []
        for d in deletes:
            value = d[1] if len(d) > 1 else 0
            kind = d[2] if len(d) > 2 else (OrderingType.INT if len(d) == 1 else None)
            records.append(DeleteRecord(str(d[0]), partition, value, kind))
        return DeleteBlock.create(records, instant, self.avro_schema)

    @staticmethod
    def command_block(instant: str, target: str) -> CommandBlock:
        return CommandBlock.rollback(instant, target)

    # --- files --------------------------------------------------------------------------------
    def log(self, partition: str, file_id: str, base_instant: str, version: int, blocks: Sequence[LogBlock],
            token: str = "0-1-1", tail: bytes = b"", head: bytes = b"", base_file: str = "") -> WriteStat:
        """Write a log file holding ``blocks``, with raw bytes before/after them (torn writes
        of failed writers); the write stat records the bytes of ``blocks`` only, as a
        writer's append does (``logOffset`` where they start, ``fileSizeInBytes`` their length)."""
        name = f".{file_id}_{base_instant}.log.{version}_{token}"
        rel = f"{partition}/{name}" if partition else name
        full = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        written = encode_log_file(blocks) if blocks else b""
        Path(full).write_bytes(head + written + tail)
        return WriteStat(fileId=file_id, path=rel, partitionPath=partition, prevCommit=base_instant,
                         fileSizeInBytes=len(written), logVersion=version, logOffset=len(head),
                         baseFile=base_file, logFiles=[name])

    def deltacommit(self, instant: str, stats: list[WriteStat], state: str = "completed", completed_at: str | None = None) -> None:
        self.commit(instant, stats, action="deltacommit", state=state, completed_at=completed_at)

    def slices(self, as_of: str | None = None) -> list[FileSlice]:
        return HoodieTable.open(self.path).view(as_of).latest_slices_all()


@pytest.fixture
def mor_table(tmp_path: Path):
    """Factory of :class:`MorTable` under this test's tmp_path."""
    counter = iter(range(1000))

    def make(**kwargs) -> MorTable:
        return MorTable(tmp_path, kwargs.pop("name", f"mor{next(counter)}"), **kwargs)

    return make
