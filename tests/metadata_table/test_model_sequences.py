"""Model-based test of the metadata table (issue 29): seeded random sequences of writes
and services on copy-on-write and merge-on-read tables, partitioned and not, with all four
metadata partitions on and a metadata table that compacts itself every three delta
commits (and cleans three instants later, by the data table's policy: by commits, or by
file versions, which makes its clean delete slices). The writes are insert, upsert, bulk_insert, delete, insert_overwrite and
insert_overwrite_table (hoodie has no delete_partition operation); between them run the
inline services (compaction, clean, archival, the metadata table's own compaction, clean
and archival), the library's compaction, clean and archival on a table opened as the CLI
opens it for a service, a savepoint and a restore to it, and a write killed by an
exception in one of its tasks, then rolled back. After every step hoodie's validation of
the metadata table finds no difference (files, column statistics, bloom filters, record
index), a snapshot read equals the model and a read with filters (data skipping by the
metadata table's column statistics) equals the model filtered.

A restore that undoes instants the metadata table already compacted builds the metadata
table again within the restore (its base files hold what was undone), every partition it
had: after it too the metadata table validates."""
from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.engine.base import TaskContext
from hoodie.engine.local import LocalEngine
from hoodie.metadata_table.services import MetadataServiceSettings, run_table_services
from hoodie.metadata_table.settings import PARTITION_ORDER, MetadataSettings
from hoodie.metadata_table.sync import with_metadata_sync
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.services import (
    archive,
    archive_settings,
    clean,
    clean_settings,
    compaction_settings,
    create_savepoint,
    restore_to,
    run_compaction,
    schedule_compaction,
)
from hoodie.services.for_metadata import METADATA_SERVICES
from hoodie.services.rollback import rollback_failed_writes
from hoodie.table.table import HoodieTable

#: (seed, the data table's cleaning policy): with KEEP_LATEST_FILE_VERSIONS (one version)
#: the metadata table keeps two versions of its file groups, so its clean deletes some
RUNS = [(3, "KEEP_LATEST_COMMITS"), (17, "KEEP_LATEST_FILE_VERSIONS")]
#: steps after the first insert: every kind of step once, the rest drawn by weight
STEPS = 18
PARTITIONS = ["p0", "p1", "p2"]

BASE = {
    "hoodie.table.name": "model",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.cleaner.fileversions.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.enable.data.skipping": "true",
}

Row = dict[str, Any]


def _options(table_type: str, partitioned: bool, policy: str) -> dict[str, str]:
    opts = {**BASE, "hoodie.datasource.write.table.type": table_type, "hoodie.cleaner.policy": policy}
    if partitioned:
        opts["hoodie.datasource.write.partitionpath.field"] = "p"
    else:
        opts["hoodie.datasource.write.partitionpath.field"] = ""
        opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    return opts


def _row(n: int, ts: int) -> Row:
    v = (n * 37 + ts * 11) % 1000
    return {"id": f"k{n:04d}", "p": PARTITIONS[n % 3], "ts": ts, "v": v, "s": None if v % 7 == 0 else f"s{v % 13}"}


def _arrow(rows: list[Row]) -> pa.Table:
    return pa.Table.from_pylist(rows, pa.schema([("id", pa.string()), ("p", pa.string()), ("ts", pa.int64()), ("v", pa.int64()), ("s", pa.string())]))


class Sequence:
    """One table, its model (id -> row) and the steps that change both."""

    def __init__(self, path: Path, rng: random.Random, table_type: str, partitioned: bool, policy: str) -> None:
        self.path, self.rng, self.table_type, self.partitioned = str(path), rng, table_type, partitioned
        self.opts = _options(table_type, partitioned, policy)
        self.config = HoodieConfig.of(self.opts)
        self.model: dict[str, Row] = {}
        self.next_key = 0
        self.ts = 0
        self.savepoint: tuple[str, dict[str, Row]] | None = None
        self.log: list[str] = []
        self.metadata_actions: set[str] = set()  # what the metadata table's timeline has shown completed

    # --- writes -----------------------------------------------------------------------------

    def _new_rows(self, count: int) -> list[Row]:
        self.ts += 1
        rows = [_row(n, self.ts) for n in range(self.next_key, self.next_key + count)]
        self.next_key += count
        return rows

    def _existing(self, count: int) -> list[str]:
        keys = sorted(self.model)
        return self.rng.sample(keys, min(count, len(keys)))

    def write(self, op: str, rows: list[Row], engine: LocalEngine | None = None) -> str:
        return hoodie.write(_arrow(rows), self.path, {**self.opts, "hoodie.datasource.write.operation": op}, engine=engine)

    def _overwrite(self, op: str) -> None:
        rows = self._new_rows(self.rng.randint(3, 12))
        if op == "insert_overwrite_table" or not self.partitioned:
            self.model = {}
        else:
            touched = {r["p"] for r in rows}
            self.model = {k: r for k, r in self.model.items() if r["p"] not in touched}
        self.write(op, rows)
        self.model.update((r["id"], r) for r in rows)

    def step_insert(self, op: str = "insert") -> None:
        rows = self._new_rows(self.rng.randint(5, 25))
        self.write(op, rows)
        self.model.update((r["id"], r) for r in rows)

    def step_upsert(self) -> None:
        ids = self._existing(self.rng.randint(1, 15))
        self.ts += 1
        rows = [_row(int(k[1:]), self.ts) for k in ids] + self._new_rows(self.rng.randint(0, 6))
        self.write("upsert", rows)
        self.model.update((r["id"], r) for r in rows)

    def step_delete(self) -> None:
        ids = self._existing(self.rng.randint(1, 8))
        self.ts += 1
        rows = [_row(int(k[1:]), self.ts) for k in ids] + [_row(99_999, self.ts)]  # and a key the table lacks
        self.write("delete", rows)
        for k in ids:
            del self.model[k]

    def step_failed_write(self) -> None:
        """An upsert killed by an exception in its last write task (after the earlier tasks
        wrote their files), then rolled back by the library's rollback of failed writes."""
        self.ts += 1
        rows = [_row(int(k[1:]), self.ts) for k in self._existing(10)] + self._new_rows(8)
        with pytest.raises(TaskKilled):
            self.write("upsert", rows, engine=KillingEngine())
        self._check("failed write, pending")  # readers ignore the pending write
        rollback_failed_writes(self._for_service())

    # --- services ---------------------------------------------------------------------------

    def _for_service(self) -> HoodieTable:
        """The table opened as ``hoodie compaction|clean|archive|savepoint|restore`` open it:
        every instant a service completes updates the metadata table first."""
        return with_metadata_sync(HoodieTable.open(self.path), MetadataSettings.of(self.config))

    def step_compaction(self) -> None:
        if self.table_type != "MERGE_ON_READ":
            return
        table = self._for_service()
        instant, _ = schedule_compaction(table, compaction_settings(self.config), require_threshold=False)
        if instant is not None:
            run_compaction(table.reload(), instant, compaction_settings(self.config))

    def step_clean(self) -> None:
        clean(self._for_service(), clean_settings(self.config))

    def step_archive(self) -> None:
        archive(self._for_service(), archive_settings(self.config))

    def step_metadata_services(self) -> None:
        run_table_services(self._for_service(), MetadataServiceSettings.of(self.config), METADATA_SERVICES)

    def step_savepoint(self) -> None:
        table = self._for_service()
        latest = table.timeline.completed_writes()[-1].timestamp
        create_savepoint(table, latest)
        self.savepoint = (latest, copy.deepcopy(self.model))

    def step_restore(self) -> None:
        if self.savepoint is None:
            return self.step_savepoint()
        instant, model = self.savepoint
        restore_to(self._for_service(), instant)
        self.model = copy.deepcopy(model)
        return None

    # --- the run ----------------------------------------------------------------------------

    STEPS = (
        ("insert", 3), ("upsert", 6), ("bulk_insert", 2), ("delete", 3), ("insert_overwrite", 1),
        ("insert_overwrite_table", 1), ("failed_write", 1), ("compaction", 1), ("clean", 1), ("archive", 1),
        ("metadata_services", 1), ("savepoint", 1), ("restore", 1),
    )

    def run(self, steps: int) -> None:
        self.step_insert()
        self._check("insert")
        names = [n for n, _ in self.STEPS]
        drawn = names + self.rng.choices(names, [w for _, w in self.STEPS], k=max(0, steps - len(names)))
        self.rng.shuffle(drawn)
        for name in drawn:
            if name in ("insert", "bulk_insert"):
                self.step_insert(name)
            elif name in ("insert_overwrite", "insert_overwrite_table"):
                self._overwrite(name)
            else:
                getattr(self, f"step_{name}")()
            self._check(name)

    def _check(self, name: str) -> None:
        self.log.append(name)
        where = f"after {' -> '.join(self.log)}"
        table = HoodieTable.open(self.path)
        assert sorted(table.config.metadata_partitions) == sorted(PARTITION_ORDER), where
        report = validate_metadata_table(table)
        assert sorted(report.checks) == sorted(PARTITION_ORDER), where
        assert report.ok, where + "\n" + "\n".join(map(str, report.differences[:20]))
        mdt = HoodieTable.open(str(Path(self.path) / ".hoodie" / "metadata"))
        self.metadata_actions.update(i.action for i in mdt.timeline.completed())
        rows = hoodie.read(self.path).select(["id", "p", "ts", "v", "s"]).to_pylist()
        assert len(rows) == len({r["id"] for r in rows}), f"duplicate keys {where}"
        assert {r["id"]: self._as_model(r) for r in rows} == self.model, where
        limit = self.rng.randrange(1000)
        filters: list[Any] = [("v", "<", limit)]
        kept = hoodie.read(self.path, filters=filters).column("id").to_pylist()
        assert sorted(kept) == sorted(k for k, r in self.model.items() if r["v"] < limit), f"filter v < {limit} {where}"
        either = [[("v", ">=", limit)], [("s", "=", "s3")]]
        kept = hoodie.read(self.path, filters=either).column("id").to_pylist()
        assert sorted(kept) == sorted(k for k, r in self.model.items() if r["v"] >= limit or r["s"] == "s3"), f"filter or {where}"

    def _as_model(self, row: Row) -> Row:
        return row if self.partitioned else {**row, "p": PARTITIONS[int(row["id"][1:]) % 3]}


class TaskKilled(Exception):
    """A write task died."""


class KillingEngine(LocalEngine):
    """A one-thread engine whose write stage dies in its last task, after that task wrote
    its files (the earlier tasks completed)."""

    def __init__(self) -> None:
        super().__init__(1)

    def map(self, fn: Any, items: Any, description: str = "") -> list[Any]:
        if description != "write":
            return super().map(fn, items, description)
        last = len(items) - 1

        def dies_last(item: Any, ctx: TaskContext) -> Any:
            out = fn(item, ctx)
            if ctx.partition_id == last:
                raise TaskKilled("write task killed")
            return out

        return super().map(dies_last, items, description)


@pytest.mark.parametrize(("seed", "policy"), RUNS)
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_metadata_table_equals_the_data_after_every_step(tmp_path: Path, table_type: str, partitioned: bool, seed: int, policy: str) -> None:
    sequence = Sequence(tmp_path / "t", random.Random(seed), table_type, partitioned, policy)
    sequence.run(STEPS)
    # the metadata table's own services ran in the sequence
    assert "commit" in sequence.metadata_actions, sequence.log  # its compaction
    if policy == "KEEP_LATEST_FILE_VERSIONS":
        assert "clean" in sequence.metadata_actions, sequence.log
