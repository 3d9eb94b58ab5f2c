"""A metadata partition a write no longer enables is dropped, as Apache Hudi 0.15's writers
drop it: a table whose metadata table has ``column_stats`` (``bloom_filters``,
``record_index``), written with ``hoodie.metadata.index.column.stats.enable=false`` (...),
loses that partition from ``hoodie.table.metadata.partitions`` and from storage before
the write, and no later commit maintains it; ``files`` stays. Readers stop using it (data
skipping reads every slice, RECORD_INDEX refuses); a write enabling it again builds it
anew; a write asking RECORD_INDEX with its partition off is refused before anything is
dropped."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow as pa
import pytest
from mdt_checks import check_files, drop_apache_hudis_way

import hoodie
from hoodie.errors import ConfigError, TableError
from hoodie.layout import InstantTime
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.query.skipping import RowFilter, prune_slices
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

OPTIONS = {
    "hoodie.table.name": "d",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.metadata.compact.max.delta.commits": "3",
}
ALL_ON = {
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
}
OFF = {
    "column_stats": {"hoodie.metadata.index.column.stats.enable": "false"},
    "bloom_filters": {"hoodie.metadata.index.bloom.filter.enable": "false"},
    "record_index": {"hoodie.metadata.record.index.enable": "false"},
}


_NEGATIVE = RowFilter.of([("v", "<", 0)])
assert _NEGATIVE is not None


def _batch(keys: range, ts: int) -> pa.Table:
    return pa.table({"id": list(keys), "p": [f"p{k % 3}" for k in keys], "ts": [ts] * len(keys), "v": [k * 10 + ts for k in keys]})


def _touched(path: Path, instant: str) -> set[str]:
    """The metadata partitions the metadata table's delta commit at ``instant`` wrote to."""
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    [done] = [i for i in mdt.timeline.completed([Action.DELTA_COMMIT]) if i.timestamp == instant]
    return set(json.loads(mdt.timeline.read_content(done))["partitionToWriteStats"])


def _write(path: Path, keys: range, ts: int, extra: dict[str, str], table_type: str = "COPY_ON_WRITE") -> str:
    return hoodie.write(_batch(keys, ts), str(path), {**OPTIONS, "hoodie.datasource.write.table.type": table_type, **extra})


def test_a_write_with_column_stats_off_drops_the_partition_and_stops_maintaining_it(tmp_path: Path) -> None:
    """The issue's reproduction: column_stats built, then writes with its option off."""
    path = tmp_path / "t"
    on = {"hoodie.metadata.index.column.stats.enable": "true"}
    _write(path, range(0, 30), 1, on)
    first = _write(path, range(20, 40), 2, on)
    assert "column_stats" in _touched(path, first)
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("column_stats", "files")
    everything = sorted(s.file_id for s in table.local_view().latest_slices_all())
    pruned = prune_slices(table, table.local_view().latest_slices_all(), _NEGATIVE)
    assert pruned == []  # (the statistics rule every file out)

    off = {"hoodie.metadata.index.column.stats.enable": "false"}
    later = [_write(path, range(k, k + 10), 3 + k, off) for k in range(0, 50, 10)]
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("files",)
    assert table.config.props["hoodie.table.metadata.partitions"] == "files"
    assert not (path / ".hoodie" / "metadata" / "column_stats").exists()
    assert all(_touched(path, t) == {"files"} for t in later)
    # the metadata table's services went on (compactions of what is left), and it lists right
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert [c for c in mdt.timeline.completed([Action.COMMIT]) if c.time > InstantTime(later[0])]
    check_files(MetadataTableReader(table), table)
    assert validate_metadata_table(table).ok
    # data skipping falls back to reading every slice, and reads stay exact
    slices = table.local_view().latest_slices_all()
    assert sorted(s.file_id for s in prune_slices(table, slices, _NEGATIVE)) == sorted(s.file_id for s in slices)
    assert set(everything) <= {s.file_id for s in slices}
    rows = hoodie.read(str(path), filters=[("id", "<", 5)]).sort_by("id")
    assert rows.column("id").to_pylist() == [0, 1, 2, 3, 4] and rows.column("v").to_pylist() == [3, 13, 23, 33, 43]

    # enabled again: built anew from a listing, complete and right
    again = _write(path, range(0, 5), 60, on)
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("column_stats", "files")
    assert "column_stats" in _touched(path, again)
    assert validate_metadata_table(table).ok
    assert prune_slices(table, table.local_view().latest_slices_all(), _NEGATIVE) == []


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("dropped", ["column_stats", "bloom_filters", "record_index"])
def test_each_index_partition_is_dropped_alone(tmp_path: Path, dropped: str, table_type: str) -> None:
    path = tmp_path / "t"
    _write(path, range(0, 30), 1, ALL_ON, table_type)
    assert HoodieTable.open(str(path)).config.metadata_partitions == ("bloom_filters", "column_stats", "files", "record_index")
    instant = _write(path, range(10, 40), 2, {**ALL_ON, **OFF[dropped]}, table_type)
    table = HoodieTable.open(str(path))
    kept = {"bloom_filters", "column_stats", "files", "record_index"} - {dropped}
    assert set(table.config.metadata_partitions) == kept
    assert not (path / ".hoodie" / "metadata" / dropped).exists()
    assert _touched(path, instant) == kept
    assert validate_metadata_table(table).ok
    assert hoodie.read(str(path)).num_rows == 40


def test_files_stays_with_every_index_off(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _write(path, range(0, 10), 1, ALL_ON)
    instant = _write(path, range(5, 15), 2, {})  # (Apache Hudi 0.15's defaults: every index off)
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("files",)
    assert sorted(p.name for p in (path / ".hoodie" / "metadata").iterdir() if not p.name.startswith(".")) == ["files"]
    assert _touched(path, instant) == {"files"}
    check_files(MetadataTableReader(table), table)


def test_record_index_asked_for_with_its_partition_off_is_refused_before_anything_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "t"
    rli = {"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true"}
    _write(path, range(0, 10), 1, rli)
    before = HoodieTable.open(str(path)).timeline.completed()
    with pytest.raises(ConfigError, match="hoodie.metadata.record.index.enable is off for this write .*set hoodie.metadata.record.index.enable=true"):
        _write(path, range(0, 10), 2, {"hoodie.index.type": "RECORD_INDEX"})
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("files", "record_index") and table.timeline.completed() == before
    assert (path / ".hoodie" / "metadata" / "record_index").is_dir()

    # dropped by a write with another index: its lookups then refuse, naming what is missing
    _write(path, range(0, 10), 3, {})
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("files",)
    with pytest.raises(TableError, match="has no complete 'record_index' partition .hoodie.table.metadata.partitions: files"):
        MetadataTableReader(table).record_locations(["1"])
    assert hoodie.read(str(path), filters=[("id", "=", 1)]).column("ts").to_pylist() == [3]


def test_a_partition_dropped_apache_hudis_way_is_built_again_by_the_next_write(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Apache Hudi 0.15 drops a partition by deleting its folder and its name from
    ``hoodie.properties``; the metadata table's completed instants still name its files.
    The next write builds the metadata table again, and its services run as before
    (kept as it was, its compaction and clean would fail on every write)."""
    path = tmp_path / "t"
    on = {"hoodie.metadata.index.column.stats.enable": "true", "hoodie.metadata.index.bloom.filter.enable": "true"}
    for ts in range(1, 4):
        _write(path, range(ts * 5, ts * 5 + 10), ts, on)
    drop_apache_hudis_way(path, "column_stats")
    keep_filters = {"hoodie.metadata.index.bloom.filter.enable": "true"}
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        first = _write(path, range(0, 5), 4, keep_filters)
        later = [_write(path, range(k, k + 3), 5 + k, keep_filters) for k in range(4)]
    assert "whose folder another writer deleted" in caplog.text
    assert "services failed" not in caplog.text
    table = HoodieTable.open(str(path))
    assert table.config.metadata_partitions == ("bloom_filters", "files")
    assert _touched(path, first) == _touched(path, later[-1]) == {"bloom_filters", "files"}
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert [c for c in mdt.timeline.completed([Action.COMMIT]) if c.time > InstantTime(first)]
    assert validate_metadata_table(table).ok


def test_each_write_reads_only_the_metadata_instants_completed_since_the_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a partition was dropped Apache Hudi's way is asked on every write that leaves
    one unused (the usual case): the partitions each metadata instant wrote are read once
    a process, and forgotten with the metadata table."""
    from hoodie.metadata_table import writer as mdt_writer
    from hoodie.timeline.active import ActiveTimeline

    read: list[str] = []
    original = ActiveTimeline.commit_metadata_of

    def counted(self: ActiveTimeline, instants: list) -> object:  # type: ignore[type-arg]
        if self.base_path.endswith("metadata"):
            read.extend(i.timestamp for i in instants)
        return original(self, instants)

    monkeypatch.setattr(ActiveTimeline, "commit_metadata_of", counted)
    path = str(tmp_path / "t")
    for ts in range(1, 5):
        hoodie.write(_batch(range(6), ts), path, OPTIONS)
    mdt = HoodieTable.open(str(tmp_path / "t" / ".hoodie" / "metadata")).timeline
    read.clear()
    assert "files" in mdt_writer.written_partitions(mdt)
    assert len(read) == 1, read  # the last write's: the writes before read the others
    read.clear()
    assert "files" in mdt_writer.written_partitions(mdt)
    assert read == []
    learned: list[tuple[str, str, str]] = []

    class Counting(dict):  # type: ignore[type-arg]
        def __setitem__(self, key: tuple[str, str, str], value: frozenset[str]) -> None:
            learned.append(key)
            super().__setitem__(key, value)

    monkeypatch.setattr(mdt_writer, "_WRITTEN_PARTITIONS", Counting(mdt_writer._WRITTEN_PARTITIONS))
    hoodie.write(_batch(range(6), 5), path, OPTIONS)
    assert learned == []  # nothing completed since the calls above
    hoodie.write(_batch(range(6), 6), path, OPTIONS)
    assert 1 <= len(learned) <= 2, learned  # the instants of the write before, not the whole timeline
    mdt_writer.delete_metadata_table(HoodieTable.open(path))
    assert not [k for k in mdt_writer._WRITTEN_PARTITIONS if k[0].startswith(path)]
