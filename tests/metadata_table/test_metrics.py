"""The metadata table's metrics (issue 29: "Metrics as the seed lists them (initialisation,
sync, lookup and scan durations and counts)"): the registry's arithmetic, the figures a
reader records for its lookups and slice reads and a validation for its checks on copies
of the tables Apache Hudi 0.15 wrote, those the writer records for an initialisation and
the syncs of a restore on a table hoodie wrote, and the figures the metadata timeline
persists (Apache Hudi's own write stats)."""
from __future__ import annotations

import json
import pickle
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from mdt_checks import SAMPLE_NAMES, check_files, copy_sample

import hoodie
from hoodie.metadata_table import MetadataMetrics, MetadataTableReader, metadata_table_stats, validate_metadata_table
from hoodie.metadata_table.metrics import INITIALIZE, LOOKUP, METRICS, SCAN, SYNC, VALIDATE, Figure
from hoodie.metadata_table.settings import BLOOM_FILTERS, COLUMN_STATS, FILES, RECORD_INDEX, MetadataSettings
from hoodie.metadata_table.stats import timeline_figures
from hoodie.metadata_table.sync import initialise, with_metadata_sync
from hoodie.services.restore import restore_to
from hoodie.services.savepoint import create_savepoint
from hoodie.table import HoodieTable
from hoodie.table.file_group import FileSlice
from hoodie.timeline.instant import Action


def test_figures_add_up_by_label() -> None:
    metrics = MetadataMetrics()
    metrics.record(SYNC, "commit", 0.5, records=3, log_files=1)
    metrics.record(SYNC, "commit", 0.25, records=2)
    metrics.record(SYNC, "clean", 0.125, records=1, log_files=1)
    assert metrics.get(SYNC, "commit") == Figure(2, 0.75, {"records": 5, "log_files": 1})
    assert metrics.get(SYNC, "clean") == Figure(1, 0.125, {"records": 1, "log_files": 1})
    assert metrics.get(SYNC, "rollback") == Figure()
    assert [(m.name, label) for m, label, _ in metrics.figures()] == [("sync", "clean"), ("sync", "commit")]


def test_an_operation_that_fails_is_not_counted_and_amounts_are_declared() -> None:
    metrics = MetadataMetrics()
    with pytest.raises(RuntimeError), metrics.timed(LOOKUP, "files") as amounts:
        amounts["keys"] = 4
        raise RuntimeError("the lookup failed")
    assert metrics.figures() == []
    with metrics.timed(LOOKUP, "files") as amounts:
        amounts.update(keys=4, hits=3)
    figure = metrics.get(LOOKUP, "files")
    assert (figure.count, figure.amounts) == (1, {"keys": 4, "hits": 3}) and figure.seconds >= 0
    with pytest.raises(ValueError, match="metric 'lookup' has no amount bytes"):
        metrics.record(LOOKUP, "files", 0.0, bytes=1)


def test_figures_recorded_from_many_threads_all_count() -> None:
    metrics = MetadataMetrics()

    def work() -> None:
        for _ in range(1000):
            metrics.record(SCAN, "files", 0.001, log_blocks=2)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    figure = metrics.get(SCAN, "files")
    assert figure.count == 8000 and figure.amounts == {"log_blocks": 16000}
    assert figure.seconds == pytest.approx(8.0)


def test_metric_names_are_unique_and_prometheus_safe() -> None:
    names = [m.name for m in METRICS]
    assert len(set(names)) == len(names)
    for m in METRICS:
        assert all(part.replace("_", "").isalnum() and part.islower() for part in (m.name, *m.amounts, m.label or "x"))


def _slice_sums(slices: list[FileSlice]) -> dict[str, int]:
    return {
        "base_files": sum(1 for s in slices if s.base_file is not None),
        "base_bytes": sum(s.base_file.size for s in slices if s.base_file is not None),
        "log_files": sum(len(s.log_files) for s in slices),
        "log_bytes": sum(lf.size for s in slices for lf in s.log_files),
    }


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_reader_records_each_lookup_and_slice_read(tmp_path: Path, name: str) -> None:
    base = copy_sample(name, tmp_path)
    metrics = MetadataMetrics()
    reader = MetadataTableReader(HoodieTable.open(str(base)), metrics)

    partitions = reader.all_partition_paths()
    assert partitions
    figure = metrics.get(LOOKUP, "partitions")
    assert (figure.count, figure.amounts) == (1, {"keys": 1, "hits": 1})

    files = reader.files_in_many([*partitions, "no/such/partition"])
    figure = metrics.get(LOOKUP, "files")
    assert (figure.count, figure.amounts) == (1, {"keys": len(partitions) + 1, "hits": len(partitions)})
    # two lookups of the one file group of the files partition: each read its whole slice
    scan = metrics.get(SCAN, FILES)
    expected = _slice_sums(reader.file_slices(FILES))
    assert scan.count == 2
    assert {k: scan.amounts[k] for k in expected} == {k: 2 * v for k, v in expected.items()}
    assert scan.amounts["log_blocks"] >= scan.amounts["log_files"] and scan.amounts["records"] > 0

    partition, names = next((p, sorted(f)) for p, f in files.items() if f)
    base_files = [n for n in names if n.endswith(".parquet")]
    stats = reader.column_stats_many([(partition, n) for n in base_files], ["_hoodie_record_key"])
    assert metrics.get(LOOKUP, COLUMN_STATS).amounts == {"keys": len(base_files), "hits": sum(len(s) for s in stats.values())}
    reader.column_stats_of("_hoodie_record_key")  # one key prefix, every file group read
    figure = metrics.get(LOOKUP, COLUMN_STATS)
    assert figure.count == 2 and figure.amounts["keys"] == len(base_files) + 1
    assert metrics.get(SCAN, COLUMN_STATS).count >= len(reader.file_slices(COLUMN_STATS))

    assert reader.bloom_filter(partition, base_files[0]) is not None
    assert metrics.get(LOOKUP, BLOOM_FILTERS).amounts == {"keys": 1, "hits": 1}

    keys = sorted({k for group in reader.record_locations_by_file_group() for k in group})[:5]
    found = reader.record_locations([*keys, "no-such-key"])
    assert set(found) == set(keys)
    figure = metrics.get(LOOKUP, RECORD_INDEX)
    assert (figure.count, figure.amounts) == (1, {"keys": len(keys) + 1, "hits": len(keys)})
    # the walk over every file group of the record index, then the groups the keys hash to
    assert metrics.get(SCAN, RECORD_INDEX).count >= len(reader.file_slices(RECORD_INDEX)) + 1


def _commit_sums(mdt_timeline: Path, suffix: str) -> dict[str, int]:
    """The sums of Hudi's write stats in the completed ``*.<suffix>`` files, read as JSON."""
    out = {"instants": 0, "files": 0, "records": 0, "bytes": 0, "log_files": 0, "log_bytes": 0, "ms": 0}
    for f in sorted(mdt_timeline.glob(f"*.{suffix}")):
        out["instants"] += 1
        for stats in json.loads(f.read_text())["partitionToWriteStats"].values():
            for s in stats:
                out["files"] += 1
                out["records"] += s["numWrites"] + s["numDeletes"]
                out["bytes"] += s["totalWriteBytes"]
                out["log_files"] += s["totalLogFilesCompacted"]
                out["log_bytes"] += s["totalLogSizeCompacted"]
                out["ms"] += sum(s["runtimeStats"].values())
    return out


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_timeline_figures_are_the_write_stats_hudi_persisted(tmp_path: Path, name: str) -> None:
    base = copy_sample(name, tmp_path)
    table = HoodieTable.open(str(base))
    mdt = HoodieTable.open(str(base / ".hoodie" / "metadata"))
    figures = {f.action: f for f in timeline_figures(mdt.timeline)}
    assert set(figures) == {i.action for i in mdt.timeline.completed()}
    for action in ("deltacommit", "commit"):
        expected = _commit_sums(base / ".hoodie" / "metadata" / ".hoodie", action)
        f = figures[action]
        assert (f.instants, f.files_written, f.records_written, f.bytes_written, f.log_files_compacted, f.log_bytes_compacted, f.milliseconds) == (
            expected["instants"], expected["files"], expected["records"], expected["bytes"], expected["log_files"], expected["log_bytes"], expected["ms"]
        )
    assert figures["commit"].log_files_compacted > 0 and figures["deltacommit"].log_files_compacted == 0
    assert metadata_table_stats(table).history == timeline_figures(mdt.timeline)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_stats_walk_records_what_it_read(tmp_path: Path, name: str) -> None:
    base = copy_sample(name, tmp_path)
    metrics = MetadataMetrics()
    report = metadata_table_stats(HoodieTable.open(str(base)), metrics)
    for partition in report.on_storage:
        mine = [s for s in report.slices if s.partition == partition]
        scan = metrics.get(SCAN, partition)
        assert scan.count == len(mine)
        assert scan.amounts["log_files"] == sum(s.log_files for s in mine)
        assert scan.amounts["log_bytes"] == sum(s.log_bytes for s in mine)
        assert scan.amounts["base_bytes"] == sum(s.base_file_size or 0 for s in mine)
        assert scan.amounts["records"] == sum((s.base_records or 0) + s.log_records for s in mine)


WRITE = {
    "hoodie.table.name": "m",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.compact.inline": "false",
}


def _write(path: Path, keys: range, ts: int, metadata: bool) -> str:
    rows = pa.table({"id": [f"k{k}" for k in keys], "p": [f"p{k % 2}" for k in keys], "ts": [ts] * len(keys)})
    return hoodie.write(rows, str(path), {**WRITE, "hoodie.metadata.enable": str(metadata).lower()})


def test_initialisation_and_syncs_are_recorded_by_partition_and_action(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _write(path, range(10), 1, metadata=False)
    saved = _write(path, range(5, 15), 2, metadata=False)
    settings = MetadataSettings(enable=True)
    metrics = MetadataMetrics()
    table = initialise(with_metadata_sync(HoodieTable.open(str(path)), settings), settings, metrics=metrics)
    figure = metrics.get(INITIALIZE, FILES)
    # the files partition: every data partition's record and the list of partitions
    assert (figure.count, figure.amounts) == (1, {"records": 3, "file_groups": 1})
    assert [label for m, label, _ in metrics.figures()] == [FILES]

    create_savepoint(with_metadata_sync(table, settings, metrics), saved)
    later = [_write(path, range(k, k + 5), k, metadata=True) for k in (20, 30)]
    assert metrics.get(SYNC, Action.DELTA_COMMIT) == Figure()  # the writes synced into their own metrics
    restore_to(with_metadata_sync(HoodieTable.open(str(path)), settings, metrics), saved)
    restore = metrics.get(SYNC, Action.RESTORE)
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    restored = mdt.timeline.get(HoodieTable.open(str(path)).timeline.completed([Action.RESTORE])[-1].timestamp)
    written = mdt.timeline.commit_metadata(restored).write_stats()
    assert restore.count == 1 and restore.amounts["records"] == sum(s.numWrites for s in written) > 0
    assert not set(later) & {i.timestamp for i in mdt.timeline.instants}
    assert check_files(MetadataTableReader(HoodieTable.open(str(path))), HoodieTable.open(str(path)))


@pytest.mark.parametrize("name", SAMPLE_NAMES[:1])
def test_validation_records_each_check_and_its_differences(tmp_path: Path, name: str) -> None:
    base = copy_sample(name, tmp_path)
    metrics = MetadataMetrics()
    table = HoodieTable.open(str(base))
    report = validate_metadata_table(table, reader=MetadataTableReader(table, metrics))
    assert report.ok
    assert [label for m, label, _ in metrics.figures() if m is VALIDATE] == sorted(report.checks)
    assert all(metrics.get(VALIDATE, c).amounts == {"errors": 0} for c in report.checks)

    gone = next(s.base_file for s in table.local_view().latest_slices_all() if s.base_file is not None)
    Path(gone.path).unlink()  # lost on storage: the files check finds it, the others too
    metrics = MetadataMetrics()
    table = HoodieTable.open(str(base))
    report = validate_metadata_table(table, reader=MetadataTableReader(table, metrics))
    assert not report.ok
    for check in report.checks:
        assert metrics.get(VALIDATE, check).amounts == {"errors": sum(1 for d in report.differences if d.check == check)}
    assert metrics.get(VALIDATE, FILES).amounts["errors"] >= 1


def test_a_copy_sent_to_another_process_records_apart() -> None:
    metrics = MetadataMetrics()
    metrics.record(SCAN, FILES, 0.5, log_files=2)
    copy = pickle.loads(pickle.dumps(metrics))
    copy.record(SCAN, FILES, 0.25, log_files=1)
    assert copy.get(SCAN, FILES) == Figure(2, 0.75, {"log_files": 3})
    assert metrics.get(SCAN, FILES) == Figure(1, 0.5, {"log_files": 2})
