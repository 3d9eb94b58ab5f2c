"""The metadata table's own services on a metadata table laid out on disk (real HFiles,
log files and timelines): compaction into new base HFiles keeps every answer of the
reader, waits for pending data instants, survives a crash midway (readers ignore the
pending compaction; the next run rolls it back and runs it again); cleaning deletes the
slices older than its retention; archival stops where the data table still needs the
metadata table's instants (and the data table's waits for the metadata table's
compaction). hoodie's writes run them after each commit."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from mdt_checks import check_files, check_record_index
from mdt_layout import INIT, base_hfile, create_tables, delta_commits, files_record, hfile_block

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.errors import TableError
from hoodie.formats.bloom import new_bloom_filter, serialized_text
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import HFileDataBlock, write_log_file
from hoodie.formats.log.blocks import DeleteBlock, DeleteRecord
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table import compaction as mdt_compaction
from hoodie.metadata_table.compaction import MetadataCompactionSettings
from hoodie.metadata_table.keys import bloom_filter_key, column_stats_key, file_group_index
from hoodie.metadata_table.metrics import CLEAN, COMPACTION, SCAN, Figure, MetadataMetrics
from hoodie.metadata_table.records import BloomFilterInfo, ColumnStats, MetadataRecord, RecordLocation
from hoodie.metadata_table.services import (
    MetadataArchiveRule,
    MetadataCleanRule,
    MetadataServiceSettings,
    archive_limits,
    run_table_services,
)
from hoodie.services.archival import ArchiveResult, ArchiveSettings, archive
from hoodie.services.decision import ServiceDecision
from hoodie.services.for_metadata import METADATA_SERVICES
from hoodie.storage.local import LocalStorage
from hoodie.table.archived import read_archived_instants
from hoodie.table.table import HoodieTable
from hoodie.timeline.compaction_plan import CompactionPlan
from hoodie.timeline.instant import Action, Instant, State

T1, T2, T3, T4, T5, T6 = (f"2025010100000{i}000" for i in range(1, 7))
FILE_ID = "4f8e6c1a-3b2d-4e5f-9a7b-1c2d3e4f5a6b-0"
KEYS = [f"key{i}" for i in range(12)]
FILTER = serialized_text(new_bloom_filter())


def _settings(max_delta_commits: int = 3, **rules: Any) -> MetadataServiceSettings:
    return MetadataServiceSettings(MetadataCompactionSettings(max_delta_commits=max_delta_commits), **rules)


def _stats(file: str, column: str, lo: int, hi: int, deleted: bool = False) -> MetadataRecord:
    return MetadataRecord(column_stats_key("p1", file, column), 3, ColumnStats(file, column, lo, hi, 10, 0, 100, 200, deleted))


def _bloom(file: str, deleted: bool = False) -> MetadataRecord:
    return MetadataRecord(bloom_filter_key("p1", file), 4, BloomFilterInfo("DYNAMIC_V0", T1, FILTER, deleted))


def _log(mdt: Path, partition: str, file_id: str, base_instant: str, version: int, *blocks: HFileDataBlock | DeleteBlock) -> None:
    write_log_file(LocalStorage(), str(mdt / partition / f".{file_id}_{base_instant}.log.{version}_0-0-0"), list(blocks))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A data table with delta commits T1..T3 and its metadata table: files (a base file
    and a log per delta commit), column_stats and bloom_filters (logs only, with
    deletions) and a record index of two file groups (base files, a delete block)."""
    base = tmp_path / "t"
    mdt = create_tables(base, "files,bloom_filters,column_stats,record_index")
    delta_commits(base / ".hoodie", [T1, T2, T3])
    delta_commits(mdt / ".hoodie", [INIT, T1, T2, T3])
    base_hfile(mdt / "files" / f"files-0000-0_0-0-0_{INIT}.hfile",
               files_record("__all_partitions__", p1=0), files_record("p1", a_parquet=100, b_parquet=5))
    _log(mdt, "files", "files-0000-0", INIT, 1, hfile_block(T1, files_record("p1", b_parquet=9, c_parquet=10)))
    _log(mdt, "files", "files-0000-0", INIT, 2, hfile_block(T2, files_record("p1", a_parquet=-1, z_parquet=-1)))
    _log(mdt, "files", "files-0000-0", INIT, 3, hfile_block(T3, files_record("__all_partitions__", p2=0), files_record("p2", d_parquet=4)))
    _log(mdt, "column_stats", "col-stats-0000-0", INIT, 1, hfile_block(INIT, _stats("a.parquet", "x", 1, 5), _stats("b.parquet", "x", 2, 3)))
    _log(mdt, "column_stats", "col-stats-0000-0", INIT, 2, hfile_block(T1, _stats("b.parquet", "x", 0, 9), _stats("c.parquet", "x", 4, 4)))
    _log(mdt, "column_stats", "col-stats-0000-0", INIT, 3, hfile_block(T2, _stats("a.parquet", "x", 0, 0, deleted=True)))
    _log(mdt, "bloom_filters", "bloom-filters-0000-0", INIT, 1, hfile_block(T1, _bloom("b.parquet"), _bloom("c.parquet")))
    _log(mdt, "bloom_filters", "bloom-filters-0000-0", INIT, 2, hfile_block(T2, _bloom("a.parquet", deleted=True)))
    for group in (0, 1):
        mine = [k for k in KEYS if file_group_index(k, 2) == group]
        base_hfile(mdt / "record_index" / f"record-index-000{group}-0_0-0-0_{INIT}.hfile",
                   *(MetadataRecord(k, 5, RecordLocation("p1", FILE_ID, 1735689600000)) for k in mine))
        _log(mdt, "record_index", f"record-index-000{group}-0", INIT, 1, DeleteBlock.create([DeleteRecord(mine[0], None)], T2))
    return base


def _answers(base: Path) -> dict[str, Any]:
    """Everything the reader says: the live records of every partition, partitions, files."""
    reader = MetadataTableReader.open(str(base))
    out: dict[str, Any] = {p: {r.key: r for r in reader.records(p) if not r.is_deleted} for p in sorted(reader.partitions)}
    out["partitions"] = reader.all_partition_paths()
    out["files"] = reader.files_in_many(["p1", "p2"])
    return out


def _mdt(base: Path) -> HoodieTable:
    return HoodieTable.open(str(base / ".hoodie" / "metadata"))


def test_compaction_writes_every_slice_as_a_base_hfile_and_answers_stay(table: Path) -> None:
    before = _answers(table)
    assert before["files"] == {"p1": {"b.parquet": 9, "c.parquet": 10}, "p2": {"d.parquet": 4}}
    report = run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES)
    instant = T3 + "001"
    assert report.compactions == [instant]
    assert _answers(table) == before
    mdt = _mdt(table)
    assert mdt.timeline.get(instant) == Instant(instant, Action.COMMIT, State.COMPLETED)
    plan = CompactionPlan.decode(mdt.timeline.read_content(Instant(instant, Action.COMPACTION, State.REQUESTED)))
    assert sorted((op.partition_path, op.file_id, len(op.log_files)) for op in plan.operations) == [
        ("bloom_filters", "bloom-filters-0000-0", 2), ("column_stats", "col-stats-0000-0", 3), ("files", "files-0000-0", 3),
        ("record_index", "record-index-0000-0", 1), ("record_index", "record-index-0001-0", 1),
    ]
    meta = mdt.commit_metadata(mdt.timeline.get(instant))
    assert meta.compacted and meta.operation_type == "COMPACT"
    stats = {s.fileId: s for partition in meta.partition_to_write_stats.values() for s in partition}
    assert (stats["files-0000-0"].numWrites, stats["files-0000-0"].numInserts, stats["files-0000-0"].numUpdateWrites) == (3, 1, 2)
    assert stats["files-0000-0"].prevCommit == INIT and stats["col-stats-0000-0"].prevCommit == "null"
    assert stats["record-index-0000-0"].numDeletes == 1
    # every latest slice is a base file alone; deleted statistics and filters are not in it
    reader = MetadataTableReader.open(str(table))
    for partition in sorted(reader.partitions):
        for slc in reader.file_slices(partition):
            assert slc.base_instant == instant and not slc.log_files and slc.base_file is not None
            with HFileReader.open(reader.storage, slc.base_file.path) as hfile:
                keys = [k for k, _ in hfile.read_all()]
                assert keys == sorted(keys) and hfile.entry_count == stats[slc.file_id].numWrites
                assert hfile.file_info["minRecordKey"] == keys[0].encode() and hfile.file_info["maxRecordKey"] == keys[-1].encode()
                assert hfile.file_info["bloomFilterTypeCode"] == b"DYNAMIC_V0" and hfile.meta_block("bloomFilter")
                assert _stats("a.parquet", "x", 0, 0).key not in keys and _bloom("a.parquet").key not in keys
    # run again: that compaction is done, nothing else to do
    again = run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES)
    assert again.compactions == [] and f"the compaction at {instant} already completed" in " ".join(again.notes)


def test_compaction_is_not_due_below_the_threshold(table: Path) -> None:
    report = run_table_services(HoodieTable.open(str(table)), _settings(max_delta_commits=5), METADATA_SERVICES)
    assert report.compactions == []
    assert any("4 delta commits since the last compaction, hoodie.metadata.compact.max.delta.commits is 5" in n for n in report.notes)
    assert not _mdt(table).timeline.filter([Action.COMPACTION, Action.COMMIT])


def test_compaction_waits_for_a_pending_data_instant(table: Path) -> None:
    # T4 completed in the metadata table, not (yet) in the data table: it may still fail
    delta_commits(table / ".hoodie", [], [T4])
    delta_commits(table / ".hoodie" / "metadata" / ".hoodie", [T4])
    before = _answers(table)
    report = run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES)
    assert report.compactions == [] and any(f"data instant {T4} (deltacommit) is pending" in n for n in report.notes)
    assert _answers(table) == before
    strict = MetadataServiceSettings(MetadataCompactionSettings(max_delta_commits=3, max_delta_commits_when_pending=4))
    with pytest.raises(TableError, match=f"5 delta commits since its last compaction.*{T4}"):
        run_table_services(HoodieTable.open(str(table)), strict, METADATA_SERVICES)


def test_a_compaction_killed_midway_is_invisible_then_rolled_back_and_run_again(table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _answers(table)
    real = mdt_compaction.write_hfile
    written: list[str] = []

    def dies_on_the_third(storage: Any, path: str, *args: Any, **kwargs: Any) -> int:
        if len(written) == 2:
            raise KeyboardInterrupt("killed")
        written.append(path)
        return real(storage, path, *args, **kwargs)

    monkeypatch.setattr(mdt_compaction, "write_hfile", dies_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES)
    monkeypatch.undo()
    instant = T3 + "001"
    assert _mdt(table).timeline.get(instant).state is State.INFLIGHT and all(Path(p).exists() for p in written)
    # readers ignore the pending compaction's base files
    assert _answers(table) == before
    # a delta commit after the crash names its log after the pending compaction: seen
    delta_commits(table / ".hoodie", [T4])
    delta_commits(table / ".hoodie" / "metadata" / ".hoodie", [T4])
    _log(table / ".hoodie" / "metadata", "files", "files-0000-0", instant, 1, hfile_block(T4, files_record("p2", e_parquet=1)))
    # ... or after the slice the compaction reads: its records go into the new base file
    delta_commits(table / ".hoodie", [T5])
    delta_commits(table / ".hoodie" / "metadata" / ".hoodie", [T5])
    _log(table / ".hoodie" / "metadata", "files", "files-0000-0", INIT, 4, hfile_block(T5, files_record("p1", g_parquet=2)))
    after = _answers(table)
    assert after["files"] == {"p1": {"b.parquet": 9, "c.parquet": 10, "g.parquet": 2}, "p2": {"d.parquet": 4, "e.parquet": 1}}
    report = run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES)
    assert report.compactions == [instant]
    assert _answers(table) == after
    mdt = _mdt(table)
    # a rollback instant deleted the failed attempt's files (the run wrote them again)
    rollbacks = mdt.timeline.completed([Action.ROLLBACK])
    assert [mdt.timeline.rollback_metadata(rb).commits_rollback for rb in rollbacks] == [(instant,)]
    deleted = mdt.timeline.rollback_metadata(rollbacks[0]).deleted_files()
    assert sorted(Path(p).name for p in deleted) == sorted(Path(p).name for p in written)
    files = MetadataTableReader.open(str(table)).file_slices("files")[0]
    assert files.base_instant == instant and [lf.file_name for lf in files.log_files] == [f".files-0000-0_{instant}.log.1_0-0-0"]


def _three_more_delta_commits(table: Path, compaction: str) -> None:
    mdt = table / ".hoodie" / "metadata"
    for version, t in enumerate((T4, T5, T6), start=1):
        delta_commits(table / ".hoodie", [t])
        delta_commits(mdt / ".hoodie", [t])
        _log(mdt, "files", "files-0000-0", compaction, version, hfile_block(t, files_record("p2", **{f"f{version}_parquet": version})))


def test_clean_deletes_the_slices_older_than_its_retention(table: Path) -> None:
    metrics = MetadataMetrics()
    run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES, metrics)
    compaction = T3 + "001"
    written = _mdt(table).timeline.commit_metadata(_mdt(table).timeline.get(compaction)).write_stats()
    figure = metrics.get(COMPACTION, "")
    assert (figure.count, figure.amounts) == (1, {"file_groups": len(written), "records": sum(s.numWrites for s in written)})
    assert metrics.get(SCAN, "files").count >= 1  # the slices it merged
    assert metrics.get(CLEAN, "") == Figure()
    old = sorted(p for p in (table / ".hoodie" / "metadata").rglob(f"*{INIT}*") if p.parent.name != ".hoodie")
    assert len(old) == 13  # base files and logs of the slices the compaction replaced
    delta_commits(table / ".hoodie", [T4])
    delta_commits(table / ".hoodie" / "metadata" / ".hoodie", [T4])
    quiet = run_table_services(HoodieTable.open(str(table)), _settings(max_delta_commits=9), METADATA_SERVICES)
    assert quiet.clean is None and any("cleans after 3" in n for n in quiet.notes)  # too soon after the compaction
    _three_more_delta_commits(table, compaction)
    before = _answers(table)
    rules = _settings(max_delta_commits=9, clean=MetadataCleanRule(commits_retained=2))
    report = run_table_services(HoodieTable.open(str(table)), rules, METADATA_SERVICES, metrics)
    assert report.clean is not None and getattr(report.clean, "instant", None) == T6 + "002"
    assert not any(p.exists() for p in old)
    figure = metrics.get(CLEAN, "")
    assert (figure.count, figure.amounts) == (1, {"files": len(old)})  # the metrics of the clean that deleted them
    assert _answers(table) == before
    assert _mdt(table).timeline.get(T6 + "002").state is State.COMPLETED


def test_archival_keeps_what_the_data_table_still_needs(table: Path) -> None:
    run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES)
    _three_more_delta_commits(table, T3 + "001")
    data = HoodieTable.open(str(table))
    limits = archive_limits(data, _mdt(table))
    assert [t for t, _ in limits] == [T1, T3 + "001"]
    before = _answers(table)
    rules = _settings(max_delta_commits=9, archive=MetadataArchiveRule(min_commits=2, max_commits=3))
    report = run_table_services(data, rules, METADATA_SERVICES)
    # more than three commits, but the data table's first commit T1 bounds the archival
    assert [i.timestamp for i in report.archive.archived] == [INIT]  # type: ignore[attr-defined]
    assert [i.timestamp for i in read_archived_instants(_mdt(table))] == [INIT]
    assert _mdt(table).timeline.completed()[0].timestamp == T1
    assert _answers(table) == before


def test_settings_follow_the_data_tables_cleaner_and_archival() -> None:
    config = HoodieConfig.of({
        "hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": "30",
        "hoodie.keep.min.commits": "40", "hoodie.keep.max.commits": "50", "hoodie.metadata.compact.max.delta.commits": "3",
    })
    settings = MetadataServiceSettings.of(config)
    assert settings.clean.commits_retained == 36 and settings.compaction.max_delta_commits == 3
    assert (settings.archive.min_commits, settings.archive.max_commits) == (41, 51)
    assert MetadataServiceSettings.of(HoodieConfig.of({})).clean.commits_retained == 20  # max(20, 1.2 x 10)
    hours = MetadataServiceSettings.of(HoodieConfig.of({"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "5"}))
    assert (hours.clean.policy, hours.clean.hours_retained) == ("KEEP_LATEST_BY_HOURS", 6)


def test_the_data_tables_archival_waits_for_the_metadata_tables_compaction(table: Path) -> None:
    settings = ArchiveSettings(min_commits=1, max_commits=2)
    before = archive(HoodieTable.open(str(table)), settings)
    assert isinstance(before, ServiceDecision) and "the metadata table has not compacted yet" in before.reason
    run_table_services(HoodieTable.open(str(table)), _settings(), METADATA_SERVICES)
    _three_more_delta_commits(table, T3 + "001")
    done = archive(HoodieTable.open(str(table)), settings)
    assert isinstance(done, ArchiveResult), done
    assert [i.timestamp for i in done.archived] == [T1, T2, T3]
    assert f"the metadata table's latest compaction is {T3}001" in done.reason


def test_writes_keep_the_metadata_table_compacted_and_cleaned(tmp_path: Path) -> None:
    """hoodie's writes run the services after each commit: the metadata table compacts
    every three delta commits, cleans once more than 20 commits (its retention) are
    active, and reads stay right."""
    path = str(tmp_path / "t")
    options = {
        "hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
    }
    for i in range(23):
        batch = pa.table({"k": [f"k{j}" for j in range(i, i + 5)], "p": [f"p{j % 2}" for j in range(i, i + 5)], "ts": [i] * 5})
        hoodie.write(batch, path, {**options, "hoodie.datasource.write.operation": "upsert"})
    table = HoodieTable.open(path)
    reader = MetadataTableReader(table)
    check_files(reader, table)
    check_record_index(reader, path)
    timeline = reader.table.timeline
    cleans = timeline.completed([Action.CLEAN])
    assert cleans and all(c.timestamp.endswith("002") for c in cleans)
    assert all(c.timestamp.endswith("001") for c in timeline.completed([Action.COMMIT]))
    # the slices before the cleaner's boundary are gone: fewer base files than compactions
    bases = list((tmp_path / "t" / ".hoodie" / "metadata" / "files").glob("files-0000-0_*.hfile"))
    assert len(bases) < len(timeline.completed([Action.COMMIT]))
