"""Partitions are listed in one place: the file-system view (``table/fs_view.py``) and the
listings it is given (``table/synced_listings.py``). Every other ``list_dir`` in the
package lists a folder that is no partition, and each one is named here with the folder
it lists, so that a new listing of a partition folder outside the view fails this test
(and the metadata table can replace every partition listing in one place).

The check walks the source for every use of ``list_dir`` or ``list_names`` (a call, or
the method handed on, as to a thread pool) and names the function it is in; ``storage/`` implements it and
is exempt.
"""
from __future__ import annotations

import ast
from pathlib import Path

import hoodie

SOURCE = Path(hoodie.__file__).parent

# (module, function) -> the folder it lists
PARTITION_LISTINGS = {
    ("table/fs_view.py", "walk_partitions"): "the table's folders, to find its partitions",
    ("table/fs_view.py", "FileSystemView._list_storage"): "a partition, for the view (its file groups, or its raw listing)",
    ("table/synced_listings.py", "SyncedListings.list_partition"): "a partition, for a synced view",
}
OTHER_FOLDERS = {
    ("timeline/active.py", "ActiveTimeline.load"): "the timeline folder",
    ("timeline/active.py", "ActiveTimeline.request_new"): "the timeline folder (instant times taken meanwhile)",
    ("timeline/write_claims.py", "sweep"): "the write claims folder under .hoodie",
    ("timeline/write_claims.py", "sweep_guards"): "the write claims folder under .hoodie (takeover guards)",
    ("services/timeline_files.py", "timeline_files"): "the timeline folder",
    ("table/archived.py", "archive_files"): "the archive folder",
    ("query/planner.py", "has_archived_instants"): "the archive folder",
    ("markers/direct.py", "DirectMarkers.entries"): "the marker folder of an instant",
    ("timeline_server/markers.py", "MarkerDirState.load"): "the marker folder of an instant",
    ("table/home.py", "foreign_contents"): "a folder before a table is created in it",
    ("streamer/dfs_source.py", "DfsSource.files"): "a streamer's source folder, where new files land (no table)",
    ("spark/source_write.py", "remove_abandoned_staging"): "the .hoodie/.temp folder, for data-source writes' staging folders",
    ("spark/source_write.py", "_last_change_ms"): "a data-source write's staging folder",
}


def list_dir_uses(source: str) -> set[str]:
    """The qualified names of the functions of ``source`` that use ``list_dir``."""
    found: set[str] = set()

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, (*scope, child.name))
                continue
            if isinstance(child, ast.Attribute) and child.attr in ("list_dir", "list_names"):
                found.add(".".join(scope) or "<module>")
            visit(child, scope)

    visit(ast.parse(source), ())
    return found


def test_list_dir_uses_are_exactly_the_named_ones() -> None:
    uses = set()
    for path in SOURCE.rglob("*.py"):
        rel = path.relative_to(SOURCE).as_posix()
        if rel.startswith("storage/"):
            continue
        uses.update((rel, function) for function in list_dir_uses(path.read_text()))
    allowed = PARTITION_LISTINGS.keys() | OTHER_FOLDERS.keys()
    assert sorted(uses - allowed) == [], "list partitions through the file-system view (FileSystemView.partition_files), or name the folder here"
    assert sorted(allowed - uses) == [], "a named listing is gone: drop it here"


def test_the_check_finds_a_partition_listing_and_a_method_handed_on() -> None:
    source = (
        "class Cleaner:\n"
        "    def scan(self, table, p):\n"
        "        return table.storage.list_dir(p)\n"
        "    def names(self, table, p):\n"
        "        return table.storage.list_names(p)\n"
        "def walk(pool, storage, level):\n"
        "    return list(pool.map(storage.list_dir, level))\n"
    )
    assert list_dir_uses(source) == {"Cleaner.scan", "Cleaner.names", "walk"}
