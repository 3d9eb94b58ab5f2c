"""Query test helpers: the hudi-rs oracle (PyPI ``hudi``), a strict result comparison,
and hand-built synthetic tables."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
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
    """``hudi_rs(path)``: the hudi-rs oracle for a table (skips when hudi is missing)."""
    pytest.importorskip("hudi")
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
