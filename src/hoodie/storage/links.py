"""Symbolic links inside a table on a local file system: refused, never followed.

A folder or file inside a table that is a symbolic link would carry reads, writes and
deletes wherever it points: a cleaner sweeping ``.hoodie/.aux/.claims`` linked to a home
folder, a rollback deleting through a linked partition, foreign Parquet files in a linked
folder read as table data. Local storage therefore refuses, with an
:class:`~hoodie.errors.UnsafePathError` naming it, every path that passes through a link
below a table's base path, and lists no folder of a table holding one.

The rule, for a path on the local file system:

* Its table is the outermost folder above it (or the path itself) that holds a
  ``.hoodie`` entry. Above and at that folder nothing is checked: a table folder reached
  through a linked mount or home folder is the user's choice.
* Below it, no folder on the way may be a link, wherever the link points (inside the
  table too: a table holds real folders and files only, as Hudi writes them).
* The path itself may not be a link when its content is read (:meth:`LinkGuard.file`),
  and a listed folder may not hold one. Deleting or replacing a link that is the last
  segment of a path removes or replaces the link itself, never its target.

Object stores have no links; only local storage uses this guard. The check costs one
``lstat`` per folder the first time a process uses it: folders found safe are
remembered (a folder is forgotten when this process deletes it), folders not yet made,
or outside any table, are looked at again each time. At most :data:`MAX_FOLDERS` are
remembered, the least recently used forgotten first (a long-lived process, a timeline
server, touches every partition of its tables): a forgotten folder costs its ``lstat``
again.
"""
from __future__ import annotations

import os
import re
import stat
import threading
from collections import OrderedDict

from hoodie.errors import UnsafePathError
from hoodie.storage.paths import META_FOLDER

MAX_FOLDERS = 2048


class LinkGuard:
    """Which table each local folder belongs to, checked for links on the way."""

    def __init__(self) -> None:
        # folder -> the outermost table folder at or above it, every folder between them
        # checked to be a real folder (not a link)
        # (least recently used first)
        self._tables: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()  # the server's threads share one guard

    def folder(self, path: str) -> str | None:
        """The table ``path`` (a folder, existing or not) lies in, or None when it lies in
        none; :class:`UnsafePathError` if a folder below the table on the way to it,
        ``path`` included, is a symbolic link."""
        return self._folder(_absolute(path))

    def _folder(self, path: str) -> str | None:
        unknown: list[str] = []  # ``path`` and the folders above it not yet known, deepest first
        at = path
        with self._lock:
            while (table := self._tables.get(at)) is None:
                parent, _, name = at.rpartition("/")
                if not name:
                    break  # the file system root
                unknown.append(at)
                at = parent or "/"
            if table is not None:
                self._tables.move_to_end(at)
        for folder in reversed(unknown):
            if table is None:
                if not os.path.lexists(f"{folder}/{META_FOLDER}"):
                    continue  # not remembered: the folder may become a table later
                table = folder
            else:
                try:
                    mode = os.lstat(folder).st_mode
                except (FileNotFoundError, NotADirectoryError):
                    return table  # not remembered: whoever makes it next may make a link
                if stat.S_ISLNK(mode):
                    raise _refused(folder, table)
            with self._lock:
                self._tables[folder] = table
                if len(self._tables) > MAX_FOLDERS:
                    self._tables.popitem(last=False)
        return table

    def parent(self, path: str) -> str | None:
        """The table the file or folder ``path`` lies in, its folders checked as by
        :meth:`folder` (``path`` itself is not: see :meth:`file`)."""
        return self._folder(_absolute(path).rpartition("/")[0] or "/")

    def file(self, path: str) -> None:
        """Refuse ``path`` for reading or writing content: a folder on the way to it, or
        ``path`` itself, is a symbolic link inside a table."""
        table = self.parent(path)
        if table is not None and os.path.islink(path):
            raise _refused(path, table)

    @staticmethod
    def entries(table: str, entries: list[os.DirEntry[str]]) -> None:
        """Refuse the listing ``entries`` of a folder of ``table`` when it holds a
        symbolic link (``DirEntry.is_symlink`` costs no system call)."""
        for entry in entries:
            if entry.is_symlink():
                raise _refused(entry.path, table)

    def forget(self, folder: str) -> None:
        """``folder`` and what lay under it were deleted: check them again when used."""
        folder = _absolute(folder)
        with self._lock:
            for known in [k for k in self._tables if k == folder or k.startswith(folder + "/")]:
                del self._tables[known]


def _absolute(path: str) -> str:
    path = path if path.startswith("/") else os.path.abspath(path)
    if "//" in path:
        # ``a//b`` is ``a/b``: an empty segment met on the walk up is not the root. (Not
        # os.path.normpath: folding ``p/..`` away would skip checking ``p``, which the
        # kernel follows.)
        path = re.sub("/+", "/", path)
    return path.rstrip("/") or "/"


def _refused(link: str, table: str) -> UnsafePathError:
    try:
        target = f" (it points to {os.readlink(link)!r})"
    except OSError:
        target = ""
    return UnsafePathError(
        f"{link!r} is a symbolic link inside the table {table!r}{target}: hoodie does not read, write or delete through links inside a "
        "table; replace the link with the folder or file itself"
    )
