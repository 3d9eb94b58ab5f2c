"""Keys that live only in a log file of their file group: a key deleted and written
again while a compaction of its slice is pending lands in a log on the compaction's
slice, and the compacted base file lacks it. Every index must still find it there (one
row per key, always), for upserts and deletes, with each index type; and the usual
write of new keys reads no log file to learn that.
"""
from __future__ import annotations

import pytest
from log_resident import INDEXES, Sequence, deleted_then_rewritten_during_compaction

from hoodie.formats.parquet import BaseFileReader
from hoodie.index import log_keys
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable


@pytest.mark.parametrize("index", sorted(INDEXES))
def test_upsert_of_a_key_living_only_in_a_log_updates_it(table_path: str, index: str) -> None:
    seq = Sequence(table_path, INDEXES[index])
    deleted_then_rewritten_during_compaction(seq)
    seq.upsert([("k1", "sf", 4, 11.0), ("k3", "nyc", 4, 31.0), ("k5", "sf", 4, 5.0)])
    seq.check("the upsert after the compaction")
    seq.upsert([("k1", "sf", 5, 12.0)])
    seq.check_finally()


@pytest.mark.parametrize("index", sorted(INDEXES))
def test_delete_of_a_key_living_only_in_a_log_deletes_it(table_path: str, index: str) -> None:
    seq = Sequence(table_path, INDEXES[index])
    deleted_then_rewritten_during_compaction(seq)
    seq.delete(["k1"])
    seq.check("the delete after the compaction")
    seq.upsert([("k1", "sf", 6, 13.0)])  # written again: one row, wherever it goes
    seq.check_finally()


@pytest.mark.parametrize("index", ["bloom", "simple"])
def test_a_key_deleted_and_written_again_before_the_compaction_stays_one_row(table_path: str, index: str) -> None:
    seq = Sequence(table_path, INDEXES[index])
    seq.upsert([("k1", "sf", 1, 1.0), ("k2", "sf", 1, 2.0)])
    seq.delete(["k1"])
    seq.upsert([("k1", "sf", 3, 10.0)])
    seq.run_compaction(seq.schedule_compaction())
    seq.upsert([("k1", "sf", 4, 11.0)])
    seq.check_finally()


def test_the_compacted_base_file_keeps_the_removed_keys_in_its_filter(table_path: str) -> None:
    """The compacted file holds k2 alone, so its filter is built afresh (the old one holds
    too many keys for it), yet it lets the removed k1 through: the index's signal to look
    in the slice's logs."""
    seq = Sequence(table_path, INDEXES["bloom"])
    deleted_then_rewritten_during_compaction(seq)
    (sf,) = [s for s in HoodieTable.open(table_path).view().latest_slices("sf")]
    assert sf.base_file is not None and sf.log_files, "the compaction's slice: a base file and the log written meanwhile"
    with BaseFileReader(LocalStorage(), sf.base_file.path) as reader:
        assert reader.record_keys().to_pylist() == ["k2"]
        footer = reader.footer.index
    assert footer is not None and footer.bloom is not None
    assert footer.bloom.might_contain("k1") and footer.bloom.might_contain("k2")
    assert (footer.min_key, footer.max_key) == ("k2", "k2")


@pytest.mark.parametrize("index", ["bloom", "simple", "bloom_from_metadata"])
def test_new_keys_read_no_log_file(table_path: str, index: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Logs are read only on a slice whose base file a compaction wrote, and only when a
    key that base file lacks passes its filter: inserts of new keys beside file groups
    with logs read none; the key living in a log is read for."""
    reads: list[str] = []
    live_log_keys = log_keys.live_log_keys

    def counted(storage, file_slice, reading):  # type: ignore[no-untyped-def]
        reads.append(file_slice.file_id)
        return live_log_keys(storage, file_slice, reading)

    monkeypatch.setattr(log_keys, "live_log_keys", counted)
    seq = Sequence(table_path, INDEXES[index])
    seq.upsert([(f"a{i}", "sf", 1, 1.0) for i in range(20)] + [("b1", "nyc", 1, 1.0)])
    seq.upsert([("a1", "sf", 2, 2.0), ("b1", "nyc", 2, 2.0)])  # logs on both file groups
    assert all(s.log_files for s in HoodieTable.open(table_path).view().latest_slices_all())
    seq.upsert([(f"n{i}", "sf", 3, 3.0) for i in range(50)] + [("a2", "sf", 3, 3.0), ("m1", "nyc", 3, 3.0)])
    seq.check("inserts beside slices with logs")
    assert reads == []
    seq2 = Sequence(table_path + "_2", INDEXES[index])
    deleted_then_rewritten_during_compaction(seq2)
    seq2.upsert([(f"n{i}", "sf", 4, 4.0) for i in range(50)])
    seq2.check("inserts beside a compacted slice with logs")
    assert reads == [], "the compacted file's filter rules the new keys out: its logs are not read"
    seq2.upsert([("k1", "sf", 5, 11.0)])
    seq2.check("the upsert of the key living in a log")
    assert reads, "the key the compacted base file lacks was looked for in its slice's logs"
