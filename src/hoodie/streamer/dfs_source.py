"""The file source: new files landing in a folder (Hudi's DFS sources), and its checkpoint.

Files are taken in (modification time, name) order, the name being the path relative to
the root (``hoodie.streamer.source.dfs.root``, listed recursively; names starting with
``.`` or ``_`` are skipped, as Hudi skips them, so a writer can land a file under a
temporary name and rename it when complete). The checkpoint is the position of the last
file a committed batch took, ``<mtime in ms>:<name>``: the next batch takes the files
after it. Apache Hudi's DFS sources keep the modification time alone, so files landing
in the same millisecond as the last one taken could be skipped; the name makes the
position exact. A checkpoint Apache Hudi wrote (a bare number of milliseconds) is read
as "every file modified up to then was taken".

A batch takes files until the next one would pass the source limit (bytes; Hudi's
``--source-limit``), and always at least one file. What the source sees of a file is its
listing: a file must not change once it carries its final name.
"""
from __future__ import annotations

from dataclasses import dataclass

from hoodie.errors import ConfigError
from hoodie.storage.base import Storage
from hoodie.storage.paths import relative_to
from hoodie.streamer.batches import FILE_FORMATS, FilesBatch, SourceFile

# Hudi's DFSPathSelector skips these (IGNORE_FILEPREFIX_LIST)
IGNORED_PREFIXES = (".", "_")


@dataclass(frozen=True)
class FilePosition:
    """Where a file source stands: the modification time and name of the last file taken.
    ``name`` None (a checkpoint of Apache Hudi's): every file of that millisecond was taken."""

    mtime_ms: int
    name: str | None = None

    def encode(self) -> str:
        return str(self.mtime_ms) if self.name is None else f"{self.mtime_ms}:{self.name}"

    @classmethod
    def decode(cls, checkpoint: str) -> FilePosition:
        mtime, sep, name = checkpoint.partition(":")
        if not mtime.isascii() or not mtime.isdigit() or (sep and not name):
            raise ConfigError(
                f"checkpoint {checkpoint!r} is not a file source's position: expected <modification time in ms>:<file name> "
                "(or Apache Hudi's <modification time in ms>)"
            )
        return cls(int(mtime), name if sep else None)

    def before(self, f: SourceFile) -> bool:
        """Whether ``f`` comes after this position (is not taken yet)."""
        if f.mtime_ms != self.mtime_ms:
            return f.mtime_ms > self.mtime_ms
        return self.name is not None and f.name > self.name


class DfsSource:
    """New files under ``root`` in ``file_format`` (json, csv, parquet or avro)."""

    def __init__(self, storage: Storage, root: str, file_format: str, *, csv_header: bool = True, csv_sep: str = ",") -> None:
        if file_format not in FILE_FORMATS:
            raise ConfigError(f"unknown file source format {file_format!r}: expected one of {', '.join(FILE_FORMATS)}")
        self.storage = storage
        self.root = root.rstrip("/") or root
        self.file_format = file_format
        self.csv_header = csv_header
        self.csv_sep = csv_sep

    def describe(self) -> str:
        return f"{self.file_format} files under {self.root}"

    def files(self) -> list[SourceFile]:
        """Every file under the root, in (modification time, name) order."""
        found: list[SourceFile] = []
        folders = [self.root]
        while folders:
            folder = folders.pop()
            for info in self.storage.list_dir(folder):
                if info.name.startswith(IGNORED_PREFIXES):
                    continue
                if info.is_dir:
                    folders.append(info.path)
                else:
                    found.append(SourceFile(info.path, relative_to(info.path, self.root), info.size, info.mtime_ms))
        return sorted(found, key=lambda f: (f.mtime_ms, f.name))

    def plan(self, checkpoint: str | None, source_limit: int | None = None) -> FilesBatch | None:
        """The next batch after ``checkpoint`` (None: from the first file), at most
        ``source_limit`` bytes but at least one file; None when no file is new."""
        position = FilePosition.decode(checkpoint) if checkpoint else None
        new = [f for f in self.files() if position is None or position.before(f)]
        if not new:
            return None
        taken: list[SourceFile] = []
        total = 0
        for f in new:
            if taken and source_limit is not None and total + f.size > source_limit:
                break
            taken.append(f)
            total += f.size
        rest = new[len(taken) :]
        last = taken[-1]
        return FilesBatch(
            self.file_format,
            tuple(taken),
            FilePosition(last.mtime_ms, last.name).encode(),
            self.csv_header,
            self.csv_sep,
            files_behind=len(rest),
            bytes_behind=sum(f.size for f in rest),
        )
