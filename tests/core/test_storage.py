"""Storage backends: write-once semantics, listing, rename without overwrite, counters."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from hoodie.errors import FileAlreadyExistsError
from hoodie.storage.fsspec_storage import FsspecStorage
from hoodie.storage.local import LocalStorage
from hoodie.storage.paths import relative_to
from hoodie.storage.paths import under as join


@pytest.fixture(params=["local", "memory"])
def storage_and_root(request, tmp_path: Path):
    if request.param == "local":
        return LocalStorage(), str(tmp_path)
    return FsspecStorage("memory"), f"memory://hoodie-test-{uuid.uuid4().hex}"


def test_create_new_is_write_once(storage_and_root) -> None:
    storage, root = storage_and_root
    path = join(root, ".hoodie", "001.commit")
    storage.create_new(path, b"one")
    with pytest.raises(FileAlreadyExistsError, match="001.commit"):
        storage.create_new(path, b"two")
    assert storage.read_bytes(path) == b"one"
    assert storage.counters["create"] == 2


@pytest.mark.parametrize("durable", [True, False])
def test_create_new_empty_file_is_write_once_and_makes_its_directories(storage_and_root, durable: bool) -> None:
    storage, root = storage_and_root
    path = join(root, ".hoodie", ".temp", "001", "p=1", "f.parquet.marker.CREATE")
    storage.create_new(path, b"", durable=durable)
    with pytest.raises(FileAlreadyExistsError, match="f.parquet.marker.CREATE"):
        storage.create_new(path, b"", durable=durable)
    assert storage.read_bytes(path) == b""
    assert [e.name for e in storage.list_dir(join(root, ".hoodie", ".temp", "001", "p=1"))] == ["f.parquet.marker.CREATE"]


def test_create_empty_is_write_once_and_may_share_an_earlier_empty_file(storage_and_root) -> None:
    storage, root = storage_and_root
    first = join(root, ".hoodie", ".temp", "001", "p=1", "a.parquet.marker.CREATE")
    second = join(root, ".hoodie", ".temp", "001", "p=2", "b.parquet.marker.CREATE")
    assert storage.create_empty(first) is False
    shared = storage.create_empty(second, like=first)  # p=2 does not exist yet
    with pytest.raises(FileAlreadyExistsError, match="b.parquet.marker.CREATE"):
        storage.create_empty(second, like=first)
    with pytest.raises(FileAlreadyExistsError, match="a.parquet.marker.CREATE"):
        storage.create_empty(first)
    assert storage.read_bytes(first) == storage.read_bytes(second) == b""
    if isinstance(storage, LocalStorage):
        assert shared and os.stat(first).st_ino == os.stat(second).st_ino  # a hard link: no new inode
        storage.delete(first)
        assert storage.read_bytes(second) == b""  # a link outlives its source
    else:
        assert not shared


def test_create_empty_like_a_file_that_is_gone_creates_a_new_one(tmp_path: Path) -> None:
    storage = LocalStorage()
    gone, path = str(tmp_path / "d1" / "gone"), str(tmp_path / "d2" / "new")
    assert storage.create_empty(path, like=gone) is False
    assert os.path.getsize(path) == 0 and not os.path.exists(gone)


def test_list_delete_rename(storage_and_root) -> None:
    storage, root = storage_and_root
    storage.write_bytes(join(root, "p", "a.parquet"), b"x" * 10)
    storage.write_bytes(join(root, "p", "sub", "b"), b"y")
    entries = {e.name: e for e in storage.list_dir(join(root, "p"))}
    assert set(entries) == {"a.parquet", "sub"}
    assert entries["a.parquet"].size == 10 and not entries["a.parquet"].is_dir
    assert entries["sub"].is_dir
    assert sorted(storage.list_names(join(root, "p"))) == [("a.parquet", False), ("sub", True)]
    assert storage.list_dir(join(root, "missing")) == [] and storage.list_names(join(root, "missing")) == []
    storage.rename(join(root, "p", "a.parquet"), join(root, "p", "c.parquet"))
    assert not storage.exists(join(root, "p", "a.parquet"))
    storage.write_bytes(join(root, "p", "d"), b"d")
    with pytest.raises(FileAlreadyExistsError):
        storage.rename(join(root, "p", "d"), join(root, "p", "c.parquet"))
    assert storage.delete(join(root, "p", "d")) and not storage.delete(join(root, "p", "d"))
    storage.delete_dir(join(root, "p"))
    assert storage.list_dir(join(root, "p")) == []


def test_local_storage_leaves_no_temp_files(tmp_path: Path) -> None:
    storage = LocalStorage()
    storage.create_new(str(tmp_path / "x"), b"1")
    storage.write_bytes(str(tmp_path / "y"), b"2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x", "y"]


def test_local_storage_drops_the_hadoop_checksum_of_a_file_it_replaces_or_deletes(tmp_path: Path) -> None:
    # Apache Hudi on file:// (Hadoop's checksummed local file system) writes .<name>.crc
    # beside each file and checks it on read: a stale one makes hoodie.properties unreadable
    storage = LocalStorage()
    props, data = tmp_path / "hoodie.properties", tmp_path / "f.parquet"
    for f in (props, data):
        f.write_bytes(b"written by Hadoop")
        (tmp_path / f".{f.name}.crc").write_bytes(b"crc of it")
    storage.write_bytes(str(props), b"rewritten")
    assert storage.delete(str(data))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hoodie.properties"]
    assert props.read_bytes() == b"rewritten"
    assert not storage.delete(str(data))


def test_path_helpers() -> None:
    assert join("/base", "", "f") == "/base/f"
    assert join("s3://bucket/t", "p=1", "f") == "s3://bucket/t/p=1/f"
    assert relative_to("/base/p/f", "/base") == "p/f"
    assert relative_to("/base", "/base") == ""
    with pytest.raises(ValueError):
        relative_to("/other/f", "/base")


def test_whole_write_read_cycle_on_fsspec_memory_storage() -> None:
    import pyarrow as pa

    import hoodie

    path = f"memory://tables/{uuid.uuid4().hex}"
    opts = {
        "hoodie.table.name": "m",
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
    }
    first = hoodie.write(pa.table({"k": ["a", "b"], "p": ["x", "y"], "ts": [1, 1]}), path, opts)
    hoodie.write(pa.table({"k": ["a", "c"], "p": ["x", "y"], "ts": [2, 2]}), path, opts)
    rows = sorted((r["k"], r["ts"]) for r in hoodie.read(path).to_pylist())
    assert rows == [("a", 2), ("b", 1), ("c", 2)]
    pulled = hoodie.read(path, {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first})
    assert sorted(pulled.column("k").to_pylist()) == ["a", "c"]


def test_a_snapshot_lists_each_partition_once(tmp_path: Path) -> None:
    import pyarrow as pa

    import hoodie
    from hoodie.table.table import HoodieTable

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "p"}
    hoodie.write(pa.table({"k": ["a", "b", "c"], "p": ["x", "y", "z"]}), path, opts)
    storage = LocalStorage()
    table = HoodieTable.open(path, storage)
    storage.counters.reset()
    slices = table.view().latest_slices_all()
    assert len(slices) == 3
    assert storage.counters["list"] == 4, "the base path and each of the 3 partitions, once"
