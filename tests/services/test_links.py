"""No symbolic link carries a read, a write or a delete out of a table: a link inside a
table (the claims folder, a partition folder, a folder inside a partition,
``.hoodie/archived``, a base file) is refused by writes, reads and every service with an
:class:`UnsafePathError` naming it, and whatever it points to stays byte for byte as it
was. A table folder reached through a link keeps working; the claims sweep deletes only
the claim files it writes itself."""
from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from hostile_paths import tree_state
from typer.testing import CliRunner

import hoodie
from hoodie.cli.main import app
from hoodie.errors import UnsafePathError
from hoodie.services.archival import ArchiveSettings, archive
from hoodie.services.cleaning import CleanSettings, clean
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable
from hoodie.timeline import write_claims

OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "1000",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.clean.automatic": "false",  # cleans run where a test asks, with work to do
    "hoodie.metadata.enable": "false",  # (through the library, on tables opened plainly)
}


def batch(keys: list[str], part: str, ts: int) -> pa.Table:
    n = len(keys)
    return pa.table({"key": keys, "part": [part] * n, "ts": [ts] * n, "val": [float(ts)] * n})


def write(path: Path, keys: list[str], part: str, ts: int, table_type: str = "COPY_ON_WRITE", **extra: str) -> str:
    return hoodie.write(batch(keys, part, ts), str(path), {**OPTIONS, "hoodie.datasource.write.table.type": table_type, **extra})


class Scene:
    """``work/t``, a table (partitions ``sf`` and ``us/la``, two commits), beside
    ``outside``: someone's folder, holding the partition ``la`` of another Hudi table
    (Hudi-named Parquet files a cleaner would take for its own), notes and files named
    like claims."""

    def __init__(self, root: Path, table_type: str) -> None:
        self.root = root
        self.t = root / "work" / "t"
        self.table_type = table_type
        other = root / "outside" / "other"
        write(other, ["o1"], "la", 1)
        write(other, ["o1", "o2"], "la", 2)  # two slices of one file group: a cleaner would delete one
        self.outside = root / "outside"
        (self.outside / "notes.txt").write_text("keep me")
        (self.outside / "20200101000000000").write_text("not a claim")
        (self.outside / "20200101000000001").write_text(f"commit 0 {socket.gethostname()} 999999999")  # a claim's form
        self.commits = [self.write(["k1", "k2"], "sf", 1), self.write(["k3"], "us/la", 1), self.write(["k1"], "sf", 2)]

    def write(self, keys: list[str], part: str, ts: int, **extra: str) -> str:
        return write(self.t, keys, part, ts, self.table_type, **extra)

    def link(self, inside: str, target: Path) -> str:
        """Make ``inside`` (relative to the table) a link to ``target``; its path."""
        path = self.t / inside
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        return str(path)

    def state(self) -> dict[str, tuple[int, str]]:
        return tree_state(self.outside)


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def scene(tmp_path: Path, request: pytest.FixtureRequest) -> Scene:
    return Scene(tmp_path, request.param)


def refused(call: Callable[[], object], link: str) -> None:
    with pytest.raises(UnsafePathError) as info:
        call()
    assert repr(link) in str(info.value) and "symbolic link" in str(info.value), str(info.value)


def cli_refused(link: str, *args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 1, result.output
    assert link in result.output and "symbolic link" in result.output, result.output


def test_a_linked_claims_folder_is_refused_and_left_whole(tmp_path: Path) -> None:
    """The reproduction: .hoodie/.aux/.claims linked to another folder; a clean with work
    to do, and a write (whose commit claims its instant, then cleans inline), would have
    swept every file there."""
    scene = Scene(tmp_path, "COPY_ON_WRITE")
    scene.write(["k1"], "sf", 3)  # the slice of the first commit is now cleanable
    link = scene.link(".hoodie/.aux/.claims", scene.outside)
    before = scene.state()
    cli_refused(link, "clean", str(scene.t), "-o", "hoodie.cleaner.commits.retained=1")
    refused(lambda: scene.write(["k4"], "sf", 4, **{"hoodie.clean.automatic": "true"}), link)
    assert scene.state() == before


@pytest.mark.parametrize("inside", ["la", "us", "us/la"], ids=["new-partition", "partition", "folder-in-partition"])
def test_a_linked_partition_folder_is_refused_and_left_whole(scene: Scene, inside: str) -> None:
    """A partition folder (``la``, new; ``us``, the first level of ``us/la``) or a folder
    inside one (``us/la``) linked to another table's partition: its Hudi-named Parquet
    files are not read as table data, not cleaned, and a write there creates nothing."""
    link = scene.link(inside, scene.outside / "other" / "la")
    before = scene.state()
    refused(lambda: hoodie.read(str(scene.t)), link)
    refused(lambda: clean(HoodieTable.open(str(scene.t)), CleanSettings(commits_retained=1)), link)
    cli_refused(link, "clean", str(scene.t), "-o", "hoodie.cleaner.commits.retained=1")
    cli_refused(link, "read", str(scene.t))
    refused(lambda: scene.write(["k5"], inside, 3), link)
    refused(lambda: scene.write(["k6"], inside, 3, **{"hoodie.datasource.write.operation": "insert_overwrite_table"}), link)
    assert scene.state() == before


def test_a_rollback_does_not_delete_through_a_linked_partition(scene: Scene) -> None:
    """A writer killed after writing a file into ``us/la``; the folder then moved out and
    linked back. The next writer's rollback would delete the failed file over there."""
    table = HoodieTable.open(str(scene.t))
    failed = table.timeline.new_instant_time()
    written = next((scene.t / "us" / "la").glob("*.parquet"), None) or next((scene.t / "us" / "la").glob(".*.log.*"))
    name = written.name.replace(scene.commits[1], failed)
    shutil.copy(written, written.parent / name)
    hoodie_dir = scene.t / ".hoodie"
    action = "commit" if scene.table_type == "COPY_ON_WRITE" else "deltacommit"
    (hoodie_dir / f"{failed}.{action}.requested").write_bytes(b"")
    (hoodie_dir / f"{failed}.{action}.inflight").write_bytes(b"")
    marker = hoodie_dir / ".temp" / failed / "us" / "la" / f"{name}.marker.CREATE"
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    moved = scene.outside / "la"
    shutil.move(str(scene.t / "us" / "la"), moved)
    link = scene.link("us/la", moved)
    before = scene.state()
    refused(lambda: scene.write(["k7"], "sf", 3), link)
    refused(lambda: hoodie.read(str(scene.t)), link)
    assert scene.state() == before
    assert (moved / name).exists()


def test_a_linked_archive_folder_is_refused_and_left_whole(scene: Scene) -> None:
    link = scene.link(".hoodie/archived", scene.outside)
    before = scene.state()
    for ts in range(3, 6):
        refused(lambda ts=ts: scene.write(["k1"], "sf", ts, **{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}), link)
    refused(lambda: archive(HoodieTable.open(str(scene.t)), ArchiveSettings(min_commits=1, max_commits=2)), link)
    cli_refused(link, "archive", str(scene.t))
    assert scene.state() == before


def test_a_linked_base_file_is_not_read_and_deleting_it_keeps_its_target(tmp_path: Path) -> None:
    """A base file replaced by a link to a copy outside: reads refuse it (naming it) rather
    than pass the copy for table data; a delete removes the link, never the copy."""
    t = tmp_path / "t"
    write(t, ["k1", "k2"], "sf", 1)
    [base] = (t / "sf").glob("*.parquet")
    outside = tmp_path / "outside"
    outside.mkdir()
    copy = outside / base.name
    shutil.copy(base, copy)
    base.unlink()
    base.symlink_to(copy)
    before = tree_state(outside)
    refused(lambda: hoodie.read(str(t)), str(base))
    refused(lambda: write(t, ["k1"], "sf", 2), str(base))
    cli_refused(str(base), "validate", str(t))
    storage = LocalStorage()
    refused(lambda: storage.read_bytes(str(base)), str(base))
    refused(lambda: storage.size(str(base)), str(base))
    refused(lambda: storage.exists(str(base)), str(base))
    refused(lambda: storage.check_file(str(base)), str(base))
    refused(lambda: storage.rename(str(base), str(t / "sf" / "moved.parquet")), str(base))
    assert storage.delete(str(base)) and not base.is_symlink()
    assert tree_state(outside) == before


def test_a_link_inside_the_table_to_the_table_itself_is_refused(tmp_path: Path) -> None:
    """Links inside a table are refused wherever they point, inside the table too."""
    t = tmp_path / "t"
    write(t, ["k1"], "sf", 1)
    (t / "sf-again").symlink_to(t / "sf")
    refused(lambda: hoodie.read(str(t)), str(t / "sf-again"))


def test_a_table_reached_through_a_linked_folder_works(tmp_path: Path) -> None:
    """The base path itself may be a link (a mount, a home folder): only links below it
    are refused."""
    real = tmp_path / "disk" / "t"
    real.mkdir(parents=True)
    (tmp_path / "mnt").symlink_to(tmp_path / "disk")
    (tmp_path / "t").symlink_to(real)
    for path in (tmp_path / "mnt" / "t", tmp_path / "t"):
        for ts in range(1, 4):
            write(path, ["k1", f"n{ts}"], "sf", ts)
        assert sorted(hoodie.read(str(path)).column("key").to_pylist()) == ["k1", "n1", "n2", "n3"]
        clean(HoodieTable.open(str(path)), CleanSettings(commits_retained=1))
        archive(HoodieTable.open(str(path)), ArchiveSettings(min_commits=1, max_commits=2))
    assert len(hoodie.read(str(real))) == 4


def test_the_claims_sweep_deletes_only_claims(tmp_path: Path) -> None:
    """A file in the claims folder that is not a claim this module writes (another name,
    or other content) stays; an abandoned claim goes."""
    t = tmp_path / "t"
    write(t, ["k1"], "sf", 1)
    claims = t / ".hoodie" / ".aux" / ".claims"
    claims.mkdir(parents=True, exist_ok=True)
    strangers = {"notes.txt": "keep", "20200101000000000": "not a claim", "20200101000000002.bak": "commit 0 h 1"}
    for name, text in strangers.items():
        (claims / name).write_text(text)
    (claims / "20200101000000001").write_text(f"rollback {time.time() - 7200:.3f} elsewhere 1")  # abandoned
    assert write_claims.sweep(LocalStorage(), str(t)) == 1
    assert sorted(os.listdir(claims)) == sorted(strangers)
