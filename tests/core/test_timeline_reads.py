"""A view checks its listing against every completed write of the timeline: on storage
that is not local, those instant files are read side by side (each read is a round trip
to object storage), decoded in timeline order, each once."""
from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pyarrow as pa
from table_options import kp_insert_options

import hoodie
from hoodie.metadata_table.listing import MetadataListing, listed_through_metadata
from hoodie.storage import LatencyStorage
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable

OPTS = kp_insert_options(**{"hoodie.parquet.small.file.limit": "0", "hoodie.metadata.enable": "true"})


class MeetingStorage(LatencyStorage):
    """Object storage without latency whose first two reads of commit files must be in
    flight together: the second arrives while the first waits (a barrier), else the first
    gives up after a while and the reads are known to be one after another."""

    def __init__(self) -> None:
        super().__init__(LocalStorage(), 0.0)
        self.barrier = threading.Barrier(2)
        self.commit_reads: Counter[str] = Counter()
        self.overlapped = False
        self._lock = threading.Lock()

    def read_bytes(self, path: str) -> bytes:
        if path.endswith(".commit") and "/metadata/" not in path:
            with self._lock:
                self.commit_reads[path] += 1
                first_two = sum(self.commit_reads.values()) <= 2
            if first_two:
                try:
                    self.barrier.wait(timeout=10)
                    self.overlapped = True
                except threading.BrokenBarrierError:
                    pass
        return super().read_bytes(path)


def _table(tmp_path: Path, commits: int) -> str:
    path = str(tmp_path / "t")
    for c in range(commits):
        rows = pa.table({"k": [f"k{c}-{i}" for i in range(3)], "p": ["a", "b", "c"], "ts": [c] * 3})
        hoodie.write(rows, path, OPTS)
    return path


def _slices(table: HoodieTable) -> list[tuple[str, str, str | None]]:
    return sorted((s.partition_path, s.file_id, s.base_file.path if s.base_file else None) for s in table.local_view().latest_slices_all())


def test_the_commits_a_view_checks_are_read_side_by_side_on_object_storage(tmp_path: Path) -> None:
    path = _table(tmp_path, 5)
    expected = _slices(HoodieTable.open(path, LocalStorage()))
    assert len(expected) == 15
    for through_metadata in (False, True):
        storage = MeetingStorage()
        table = HoodieTable.open(path, storage)
        if through_metadata:
            table = listed_through_metadata(table, MetadataListing())
        assert _slices(table) == expected
        assert storage.overlapped, "the commit files were read one after another"
        assert len(storage.commit_reads) == 5 and set(storage.commit_reads.values()) == {1}


def test_commit_metadata_of_keeps_the_timeline_order_and_decodes_once(tmp_path: Path) -> None:
    path = _table(tmp_path, 20)  # more than one batch of reads
    local = HoodieTable.open(path, LocalStorage()).timeline
    remote = HoodieTable.open(path, LatencyStorage(LocalStorage(), 0.0)).timeline
    writes = remote.completed_writes()
    assert len(writes) == 20
    got = list(remote.commit_metadata_of(writes))
    assert [i for i, _ in got] == writes
    assert [m for _, m in got] == [local.commit_metadata(i) for i in writes]
    # decoded once: asked again, the same objects, no read
    remote.storage.counters.reset()
    assert [m for _, m in remote.commit_metadata_of(writes)] == [m for _, m in got]
    assert all(a is b for (_, a), (_, b) in zip(remote.commit_metadata_of(writes), got))
    assert remote.storage.counters.by_kind()["read"] == 0
