"""hoodie writes the metadata table: after every action of a write sequence (inserts,
upserts, deletes, insert overwrites; inline compaction and cleaning) on both table types,
the metadata table's reader lists exactly the committed files; an existing table without
one (hoodie's, Apache Hudi's) is initialised from one listing; a write that fails, or a
writer killed after the metadata table's delta commit and before its own commit, leaves
the metadata table as the committed data says once the next writer rolled it back;
rollback and restore undo the metadata table's delta commits of what they undid, and a
restore past the metadata table's compaction builds it again within the restore;
``hoodie.metadata.enable=false`` deletes it; a table keeping one refuses a completion
that would not update it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from folder_listings import FolderListings
from mdt_checks import check_files

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.errors import TimelineError
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.settings import MetadataSettings
from hoodie.metadata_table.sync import initialise, with_metadata_sync
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.services.restore import restore_to
from hoodie.services.savepoint import create_savepoint
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

BASE = {
    "hoodie.table.name": "mdt",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.cleaner.commits.retained": "1",
}
ON = {**BASE, "hoodie.metadata.enable": "true"}


def batch(keys: range | list[int], ts: int) -> pa.Table:
    keys = list(keys)
    return pa.table({
        "id": [f"k{k:03d}" for k in keys],
        "p": [f"p{k % 3}" for k in keys],
        "ts": [ts] * len(keys),
        "v": [k * ts for k in keys],
    })


def write(path: Path, keys: range | list[int], ts: int, op: str = "upsert", **extra: str) -> str:
    return hoodie.write(batch(keys, ts), str(path), {**ON, "hoodie.datasource.write.operation": op, **extra})


def mdt_instants(path: Path) -> dict[str, str]:
    """The metadata timeline's instants: time -> state of each delta commit."""
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    return {i.timestamp: i.state.value for i in mdt.timeline.instants if i.action == Action.DELTA_COMMIT}


def check(path: Path) -> list[str]:
    """The metadata table lists exactly the committed files; every completed data instant
    since it was built has its completed delta commit, and nothing is pending there."""
    table = HoodieTable.open(str(path))
    partitions = check_files(MetadataTableReader(table), table)
    deltas = mdt_instants(path)
    assert all(state == "COMPLETED" for state in deltas.values()), deltas
    first = min(deltas)
    for inst in table.timeline.completed():
        if inst.timestamp > first[:17]:
            assert inst.timestamp in deltas, (inst, sorted(deltas))
    return partitions


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_action_updates_the_metadata_table_first(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    steps = [
        (range(0, 30), 1, "insert"),
        (range(20, 40), 2, "upsert"),
        ([0, 5, 21, 33], 3, "delete"),
        (range(40, 45), 4, "insert_overwrite"),  # replaces the file groups of the partitions it writes
        (range(10, 50, 3), 5, "upsert"),
        (range(50, 60), 6, "insert"),
        ([11, 52], 7, "delete"),
        (range(0, 60, 7), 8, "upsert"),
    ]
    model: dict[str, int] = {}
    # the metadata table compacts itself every three delta commits (and cleans after)
    opts = {"hoodie.datasource.write.table.type": table_type, "hoodie.metadata.compact.max.delta.commits": "3"}
    for keys, ts, op in steps:
        write(path, keys, ts, op, **opts)
        if op == "delete":
            for k in keys:
                model.pop(f"k{k:03d}", None)
        elif op == "insert_overwrite":
            touched = {f"p{k % 3}" for k in keys}
            model = {k: v for k, v in model.items() if f"p{int(k[1:]) % 3}" not in touched}
            model.update({f"k{k:03d}": k * ts for k in keys})
        else:
            model.update({f"k{k:03d}": k * ts for k in keys})
        assert check(path) == ["p0", "p1", "p2"]
        rows = hoodie.read(str(path)).select(["id", "v"]).to_pylist()
        assert {r["id"]: r["v"] for r in rows} == model
    table = HoodieTable.open(str(path))
    actions = {i.action for i in table.timeline.completed()}
    assert Action.CLEAN in actions and Action.REPLACE_COMMIT in actions
    if table_type == "MERGE_ON_READ":
        assert Action.COMMIT in actions  # inline compaction, completed as a commit
    # every data instant has its metadata delta commit at the same time, before it completed
    deltas = mdt_instants(path)
    assert {i.timestamp for i in table.timeline.completed()} <= set(deltas)
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert mdt.timeline.completed([Action.COMMIT])  # it compacted itself
    props = table.config.props
    assert props["hoodie.table.metadata.partitions"] == "files"
    assert props["hoodie.table.metadata.partitions.inflight"] == ""


def test_the_metadata_table_is_laid_out_as_apache_hudi_does(tmp_path: Path) -> None:
    path = tmp_path / "t"
    first = write(path, range(10), 1, "insert")
    mdt = tmp_path / "t" / ".hoodie" / "metadata"
    props = dict(
        line.split("=", 1) for line in (mdt / ".hoodie" / "hoodie.properties").read_text().splitlines() if "=" in line and not line.startswith("#")
    )
    assert props["hoodie.table.name"] == "mdt_metadata"
    assert props["hoodie.table.type"] == "MERGE_ON_READ" and props["hoodie.table.base.file.format"] == "HFILE"
    assert props["hoodie.table.recordkey.fields"] == "key" and props["hoodie.populate.meta.fields"] == "false"
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
    assert props["hoodie.compaction.payload.class"] == "org.apache.hudi.metadata.HoodieMetadataPayload"
    files = sorted(p.name for p in (mdt / "files").iterdir())
    # initialised on the first write (no completed instant yet): at 00000000000000010
    assert files == [
        ".files-0000-0_00000000000000010.log.1_0-0-0",
        ".files-0000-0_00000000000000010.log.2_0-1-0",
        ".hoodie_partition_metadata",
        "files-0000-0_0-0-0_00000000000000010.hfile",
    ]
    assert "commitTime=00000000000000010" in (mdt / "files" / ".hoodie_partition_metadata").read_text()
    assert mdt_instants(path) == {"00000000000000010": "COMPLETED", first: "COMPLETED"}
    delta = json.loads((mdt / ".hoodie" / f"{first}.deltacommit").read_text())
    [stat] = delta["partitionToWriteStats"]["files"]
    assert stat["path"] == "files/.files-0000-0_00000000000000010.log.2_0-1-0"
    assert stat["baseFile"] == "files-0000-0_0-0-0_00000000000000010.hfile"
    assert stat["prevCommit"] == "00000000000000010" and stat["logVersion"] == 2
    assert delta["operationType"] == "UPSERT_PREPPED" and "HoodieMetadataRecord" in delta["extraMetadata"]["schema"]


def test_a_table_written_without_one_is_initialised_from_one_listing(tmp_path: Path) -> None:
    path = tmp_path / "t"
    off = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.metadata.enable": "false"}
    for ts in range(1, 5):
        write(path, range(ts * 5, ts * 5 + 20), ts, **off)
    table = HoodieTable.open(str(path))
    assert not (path / ".hoodie" / "metadata").exists() and not table.config.metadata_partitions
    latest = table.timeline.completed()[-1].timestamp
    t = write(path, range(3), 9)
    deltas = mdt_instants(path)
    assert min(deltas) == f"{latest}010" and t in deltas  # built at <latest completed instant>010
    check(path)


def test_a_table_apache_hudi_wrote_without_one_is_initialised(conformance_table, tmp_path: Path) -> None:
    source = conformance_table("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle")
    path = tmp_path / "hudi"
    subprocess.run(["cp", "-a", str(source), str(path)], check=True)
    table = HoodieTable.open(str(path))
    assert not table.config.metadata_partitions
    table = initialise(with_metadata_sync(table, MetadataSettings(enable=True)), MetadataSettings(enable=True))
    assert table.config.metadata_partitions == ("files",)
    latest = table.timeline.completed()[-1].timestamp
    assert mdt_instants(path) == {f"{latest}010": "COMPLETED"}
    assert check_files(MetadataTableReader(table), table) == ["10", "20", "30"]


def test_disabled_deletes_the_metadata_table(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write(path, range(10), 1)
    write(path, range(5, 15), 2)
    assert (path / ".hoodie" / "metadata").is_dir()
    write(path, range(5), 3, **{"hoodie.metadata.enable": "false"})
    table = HoodieTable.open(str(path))
    assert not (path / ".hoodie" / "metadata").exists()
    assert not table.config.metadata_partitions and "hoodie.table.metadata.partitions" not in table.config.props
    # and turned on again, it is built afresh from the table as it stands
    write(path, range(20, 25), 4)
    check(path)


def test_a_table_keeping_one_refuses_a_completion_that_would_not_update_it(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write(path, range(10), 1)
    table = HoodieTable.open(str(path))  # no completion hook installed
    requested = table.timeline.request_new(Action.COMMIT)
    inflight = table.timeline.transition_to_inflight(requested, b"{}")
    with pytest.raises(TimelineError, match=f"{path}.*metadata table"):
        table.timeline.transition_to_completed(inflight, b"{}")
    assert not (path / ".hoodie" / f"{requested.timestamp}.commit").exists()
    # the next write rolls the stranded instant back, and the metadata table stays right
    write(path, range(5, 12), 2)
    check(path)


class Killed(BaseException):
    """The writer dies (no error the write would handle)."""


def test_a_failed_write_leaves_no_trace_in_the_metadata_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t"
    write(path, range(10), 1, **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    real = LocalStorage.create_new

    def fail_data_commit(self: LocalStorage, target: str, data: bytes, durable: bool = True) -> None:
        name = os.path.basename(target)
        if "/metadata/" not in target and name.endswith(".deltacommit"):
            raise Killed  # after the metadata table's delta commit completed
        real(self, target, data, durable)

    monkeypatch.setattr(LocalStorage, "create_new", fail_data_commit)
    with pytest.raises(Killed):
        write(path, range(5, 20), 2)
    monkeypatch.undo()
    table = HoodieTable.open(str(path))
    assert len(table.timeline.completed_writes()) == 1 and table.timeline.completed()[-1].action == Action.ROLLBACK
    check(path)  # the failed write was rolled back, in the metadata table too
    assert len(mdt_instants(path)) == 3  # init, the first write, the rollback
    write(path, range(5, 20), 3)
    check(path)


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import pyarrow as pa
    import hoodie
    from hoodie.timeline.active import ActiveTimeline

    path, opts = sys.argv[1], eval(sys.argv[2])
    real = ActiveTimeline._create

    def create(self, instant, content):
        if instant.is_completed and "/metadata" not in self.base_path:
            os.kill(os.getpid(), signal.SIGKILL)  # the metadata table's delta commit is complete
        return real(self, instant, content)

    ActiveTimeline._create = create
    hoodie.write(pa.table({"id": ["k001", "k100"], "p": ["p1", "p1"], "ts": [9, 9], "v": [0, 0]}), path, opts)
    print("NOT KILLED")
    """
)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_writer_killed_between_the_two_commits_is_rolled_back_in_both(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    opts = {**ON, "hoodie.datasource.write.table.type": table_type}
    write(path, range(10), 1, **opts)
    before = hoodie.read(str(path)).sort_by("id")
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), repr(opts)], capture_output=True, text=True, env=os.environ.copy())
    assert done.returncode == -signal.SIGKILL, done.stderr
    table = HoodieTable.open(str(path))
    [pending] = table.timeline.pending()
    assert mdt_instants(path)[pending.timestamp] == "COMPLETED"
    # readers: the metadata table does not show the pending write's files
    check_files(MetadataTableReader(table), table)
    assert hoodie.read(str(path)).sort_by("id").equals(before)
    # nor while a rollback of it is pending (its files may be half deleted)
    from hoodie.services import rollback

    def die(*args: object, **kwargs: object) -> None:
        raise Killed

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rollback, "_execute", die)
        with pytest.raises(Killed):
            rollback.rollback_failed_writes(with_metadata_sync(table, MetadataSettings(enable=True)))
    table = HoodieTable.open(str(path))
    assert table.timeline.pending([Action.ROLLBACK])
    check_files(MetadataTableReader(table), table)
    write(path, range(20, 25), 2, **opts)  # rolls the killed write back, in both tables
    assert pending.timestamp not in mdt_instants(path)
    check(path)


def _savepointed(path: Path, opts: dict[str, str]) -> str:
    """Two writes, a savepoint of the second (taken through the metadata table's hook)."""
    write(path, range(10), 1, **opts)
    saved = write(path, range(5, 15), 2, **opts)
    create_savepoint(_synced(path), saved)
    return saved


def _synced(path: Path) -> HoodieTable:
    return with_metadata_sync(HoodieTable.open(str(path)), MetadataSettings(enable=True))


def test_restore_undoes_the_metadata_delta_commits(tmp_path: Path) -> None:
    path = tmp_path / "t"
    opts = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "false"}
    saved = _savepointed(path, opts)
    later = [write(path, range(k, k + 5), 3 + k, **opts) for k in (20, 30)]
    assert set(later) <= set(mdt_instants(path))
    restore_to(_synced(path), saved)
    assert not set(later) & set(mdt_instants(path))
    check(path)
    write(path, range(40, 45), 9, **opts)  # writing on: the metadata table keeps up
    check(path)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_restore_past_a_metadata_compaction_builds_it_again_with_every_partition(tmp_path: Path, table_type: str) -> None:
    """The restore undoes instants whose records the metadata table compacted into its
    base files: within the restore, the metadata table is built again from one listing,
    with all the partitions it had, and the restore's own delta commit on top. It
    validates, and reads list no partition folder (no write needed first)."""
    path = tmp_path / "t"
    everything = {
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.compact.inline": "false",
        "hoodie.metadata.compact.max.delta.commits": "1",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.bloom.filter.enable": "true",
        "hoodie.metadata.record.index.enable": "true",
    }
    saved = _savepointed(path, everything)
    later = [write(path, range(k, k + 8), 3 + k, **everything) for k in (3, 20)]  # updates and inserts
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert mdt.timeline.completed([Action.COMMIT])[-1].timestamp[:17] >= later[-1]  # compacted past them
    had = HoodieTable.open(str(path)).config.metadata_partitions
    assert sorted(had) == ["bloom_filters", "column_stats", "files", "record_index"]
    restore_to(with_metadata_sync(HoodieTable.open(str(path)), MetadataSettings.of(HoodieConfig.of(everything))), saved)

    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == had
    assert table.config.props["hoodie.table.metadata.partitions.inflight"] == ""
    restore = table.timeline.completed([Action.RESTORE])[-1].timestamp
    deltas = mdt_instants(path)
    assert deltas[restore] == "COMPLETED" and not set(later) & set(deltas)
    report = validate_metadata_table(table)
    assert sorted(report.checks) == sorted(had) and report.ok, report.differences[:5]
    check(path)
    storage = FolderListings(str(path))
    rows = hoodie.read(str(path), storage=storage)
    assert not storage.listed, storage.listed
    assert sorted(rows.column("id").to_pylist()) == [f"k{k:03d}" for k in range(15)]
    write(path, range(30, 35), 4, **everything)  # writing on: the metadata table keeps up
    assert validate_metadata_table(HoodieTable.open(str(path))).ok
