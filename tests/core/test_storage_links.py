"""Local storage refuses every call that would pass through a symbolic link inside a table
(a folder below the outermost folder holding ``.hoodie``), naming the link; the table
folder itself, and everything outside tables, may be reached through links. Deleting a
link removes the link, never its target."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_paths import tree_state

from hoodie.errors import UnsafePathError
from hoodie.formats.parquet import read_base_file
from hoodie.storage.local import LocalStorage


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """``t``, a table folder (it holds ``.hoodie``), beside ``outside`` (one file)."""
    t = tmp_path / "t"
    (t / ".hoodie" / ".aux").mkdir(parents=True)
    (t / "p").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "precious").write_bytes(b"mine")
    return t


def refused(link: Path, call: Callable[[], object]) -> None:
    with pytest.raises(UnsafePathError, match="symbolic link") as info:
        call()
    assert repr(str(link)) in str(info.value)


def test_every_call_through_a_linked_folder_is_refused(table: Path) -> None:
    outside = table.parent / "outside"
    link = table / ".hoodie" / ".aux" / ".claims"
    link.symlink_to(outside)
    before = tree_state(outside)
    storage = LocalStorage()
    inside = str(link / "precious")
    for call in (
        lambda: storage.list_dir(str(link)),
        lambda: storage.read_bytes(inside),
        lambda: storage.exists(inside),
        lambda: storage.size(inside),
        lambda: storage.delete(inside),
        lambda: storage.write_bytes(inside, b"x"),
        lambda: storage.create_new(str(link / "new"), b"x"),
        lambda: storage.create_new(str(link / "empty"), b""),
        lambda: storage.create_empty(str(link / "marker")),
        lambda: storage.rename(inside, str(table / "p" / "taken")),
        lambda: storage.rename(str(table / "p" / "nothing"), str(link / "given")),
        lambda: storage.makedirs(str(link / "sub")),
        lambda: storage.delete_dir(str(link)),
        lambda: storage.delete_dir(str(link / "sub")),
        lambda: storage.check_file(inside),
        lambda: read_base_file(storage, inside),
        lambda: storage.list_dir(str(link.parent)),  # a listing holding a link
        lambda: storage.list_names(str(link)),
        lambda: storage.list_names(str(link.parent)),
    ):
        refused(link, call)
    assert tree_state(outside) == before


def test_a_linked_file_is_neither_read_nor_written_and_its_delete_removes_the_link(table: Path) -> None:
    outside = table.parent / "outside"
    pq.write_table(pa.table({"a": [1]}), outside / "foreign.parquet")
    link = table / "p" / "base.parquet"
    link.symlink_to(outside / "foreign.parquet")
    before = tree_state(outside)
    storage = LocalStorage()
    for call in (
        lambda: storage.read_bytes(str(link)),
        lambda: storage.size(str(link)),
        lambda: storage.exists(str(link)),
        lambda: read_base_file(storage, str(link)),
        lambda: storage.list_dir(str(link.parent)),
    ):
        refused(link, call)
    storage.write_bytes(str(link), b"new")  # replaces the link, not its target
    assert not link.is_symlink() and link.read_bytes() == b"new"
    link.unlink()
    link.symlink_to(outside / "foreign.parquet")
    assert storage.delete(str(link)) and not os.path.lexists(link)
    assert tree_state(outside) == before


def test_a_linked_table_folder_and_links_outside_tables_are_followed(tmp_path: Path, table: Path) -> None:
    (tmp_path / "mnt").symlink_to(tmp_path)
    via = tmp_path / "mnt" / "t"
    (tmp_path / "t-link").symlink_to(table)
    storage = LocalStorage()
    for base in (via, tmp_path / "t-link"):
        storage.write_bytes(str(base / "p" / "f"), b"1")
        assert storage.read_bytes(str(base / "p" / "f")) == b"1" and storage.exists(str(base / "p" / "f"))
        assert {e.name for e in storage.list_dir(str(base))} == {".hoodie", "p"}
    # not a table: no .hoodie above
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "linked").symlink_to(tmp_path / "outside")
    assert storage.read_bytes(str(tmp_path / "plain" / "linked" / "precious")) == b"mine"
    assert [e.name for e in storage.list_dir(str(tmp_path / "plain"))] == ["linked"]


def test_a_folder_checked_once_is_checked_again_after_this_process_deletes_it(table: Path) -> None:
    storage = LocalStorage()
    storage.write_bytes(str(table / "p" / "sub" / "f"), b"1")
    storage.delete_dir(str(table / "p"))
    (table / "p").symlink_to(table.parent / "outside")
    refused(table / "p", lambda: storage.write_bytes(str(table / "p" / "sub" / "f"), b"2"))
    assert (table.parent / "outside" / "precious").read_bytes() == b"mine"


def test_a_folder_made_a_link_before_the_table_existed_is_refused_once_it_does(tmp_path: Path) -> None:
    t = tmp_path / "t"
    t.mkdir()
    (tmp_path / "outside").mkdir()
    (t / "p").symlink_to(tmp_path / "outside")
    storage = LocalStorage()
    assert storage.list_dir(str(t / "p")) == []  # no table yet: nothing to refuse
    storage.write_bytes(str(t / ".hoodie" / "hoodie.properties"), b"")
    refused(t / "p", lambda: storage.write_bytes(str(t / "p" / "f"), b"1"))
    assert os.listdir(tmp_path / "outside") == []


def test_a_nested_table_is_checked_from_the_outermost_table(table: Path) -> None:
    """The metadata table lives in ``.hoodie/metadata`` and has its own ``.hoodie``: links
    between the two tables are inside the outer one."""
    (table / ".hoodie" / "metadata" / ".hoodie").mkdir(parents=True)
    os.rename(table / ".hoodie" / "metadata", table.parent / "outside" / "metadata")
    link = table / ".hoodie" / "metadata"
    link.symlink_to(table.parent / "outside" / "metadata")
    refused(link, lambda: LocalStorage().write_bytes(str(link / "files" / "f"), b"1"))


def test_a_doubled_slash_below_the_table_does_not_hide_a_link(table: Path) -> None:
    """``t//p/f`` names the same file as ``t/p/f``: an empty segment is not the root."""
    outside = table.parent / "outside"
    (table / "p" / "linked").symlink_to(outside)
    storage = LocalStorage()
    doubled = f"{table}//p/linked/precious"
    refused(table / "p" / "linked", lambda: storage.read_bytes(doubled))
    refused(table / "p" / "linked", lambda: storage.delete(doubled))
    assert (outside / "precious").read_bytes() == b"mine"


def test_the_folders_remembered_are_bounded_and_a_forgotten_one_is_checked_again(table: Path) -> None:
    """A long-lived process (a timeline server) touches every partition of its tables:
    the guard remembers at most MAX_FOLDERS folders, and one it forgot that has become a
    link since is refused when next used."""
    from hoodie.storage.links import MAX_FOLDERS

    storage = LocalStorage()
    first = table / "p0000"
    first.mkdir()
    storage.list_dir(str(first))
    for i in range(1, MAX_FOLDERS + 100):
        folder = table / f"p{i:04d}"
        folder.mkdir()
        storage.list_dir(str(folder))
    assert len(storage.links._tables) <= MAX_FOLDERS
    first.rmdir()  # (by another process: this one was not told)
    first.symlink_to(table.parent / "outside")
    refused(first, lambda: storage.list_dir(str(first)))
