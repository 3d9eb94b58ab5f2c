"""Direct markers: every marker of an instant is listed, retried creates are harmless,
and markers after the first share its storage (hard links on a local disk), also when
the marker directory was removed in between (a compaction instant rerun after its
rollback)."""
from __future__ import annotations

import os
from pathlib import Path

from hoodie.markers import DirectMarkers, MarkerEntry
from hoodie.storage.fsspec_storage import FsspecStorage
from hoodie.storage.local import LocalStorage
from hoodie.storage.paths import under as join

FILES = [("p=1", "a_0-1-1_001.parquet", "CREATE"), ("p=2", "b_1-1-1_001.parquet", "CREATE"), ("p=1", "c_2-1-1_000.parquet", "APPEND")]


def _inodes(markers: DirectMarkers) -> set[int]:
    return {os.stat(join(markers.marker_dir, e.partition_path, f"{e.file_name}.marker.{e.io_type}")).st_ino for e in markers.entries()}


def test_markers_of_an_instant_are_listed_and_share_one_file(tmp_path: Path) -> None:
    markers = DirectMarkers(LocalStorage(), str(tmp_path), "001")
    for f in FILES:
        markers.create(*f)
    markers.create(*FILES[0])  # a retried task attempt
    assert sorted(markers.entries(), key=str) == sorted((MarkerEntry(*f) for f in FILES), key=str)
    assert len(_inodes(markers)) == 1
    assert markers.storage.counters["create"] == len(FILES) + 1


def test_markers_after_their_directory_was_removed_are_created_anew(tmp_path: Path) -> None:
    storage = LocalStorage()
    markers = DirectMarkers(storage, str(tmp_path), "002")
    markers.create(*FILES[0])
    markers.delete_all()
    markers.create(*FILES[1])
    # removed behind this process's back (another process rolled the instant back)
    storage.delete_dir(markers.marker_dir)
    markers.create(*FILES[2])
    markers.create(*FILES[0])
    assert sorted(markers.entries(), key=str) == sorted((MarkerEntry(*f) for f in (FILES[0], FILES[2])), key=str)
    assert len(_inodes(markers)) == 1


def test_markers_on_object_storage_are_plain_empty_objects() -> None:
    storage = FsspecStorage("memory")
    markers = DirectMarkers(storage, "memory://markers-test", "003")
    for f in FILES:
        markers.create(*f)
    assert sorted(markers.entries(), key=str) == sorted((MarkerEntry(*f) for f in FILES), key=str)
    markers.delete_all()
    assert markers.entries() == []
