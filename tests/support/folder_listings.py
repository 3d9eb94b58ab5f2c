"""Test helper: local storage that counts the listings of a table's data folders (its
partitions, the root of a non-partitioned table, any folder outside ``.hoodie``)."""
from __future__ import annotations

from collections import Counter

from hoodie.storage.base import FileInfo
from hoodie.storage.local import LocalStorage


class FolderListings(LocalStorage):
    """Local storage recording each listing of a folder of the table at ``base_path``
    that is no folder of ``.hoodie`` (relative path, "" for the table's root)."""

    def __init__(self, base_path: str) -> None:
        super().__init__()
        self.base_path = base_path.rstrip("/")
        self.listed: Counter[str] = Counter()

    def list_dir(self, path: str) -> list[FileInfo]:
        path = path.rstrip("/")
        if path == self.base_path:
            self.listed[""] += 1
        elif path.startswith(self.base_path + "/"):
            rel = path[len(self.base_path) + 1 :]
            if rel.split("/", 1)[0] != ".hoodie":
                self.listed[rel] += 1
        return super().list_dir(path)
