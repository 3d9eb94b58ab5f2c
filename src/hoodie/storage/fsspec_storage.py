"""Storage on any fsspec filesystem (S3, GCS, ABFS, memory, ...).

:func:`open_filesystem` turns what stops a filesystem from opening (an unknown scheme, its
library not installed, HDFS without Java) into one :class:`~hoodie.errors.StorageError`
line naming the scheme and what is missing.

Object stores make a single PUT atomic, so ``create_new`` writes the object in one call
after checking that it is absent. Concurrent writers of the same table need a lock
provider on top of this (as in Hudi); a single writer is safe.
"""
from __future__ import annotations

import posixpath
from collections.abc import Mapping

import fsspec
import pyarrow.fs as pafs
from fsspec.registry import known_implementations

from hoodie.errors import FileAlreadyExistsError, StorageError
from hoodie.storage.base import FileInfo, StorageCounters

_HDFS_NEEDS = " (pyarrow's HDFS needs Java and Hadoop's libhdfs: JAVA_HOME, HADOOP_HOME)"
_CAUSE_CHARS = 80  # of a library's own message quoted in ours (pyarrow's can run to kilobytes)


def open_filesystem(protocol: str, storage_options: Mapping[str, object]) -> fsspec.AbstractFileSystem:
    """fsspec's filesystem for ``protocol``; a scheme fsspec does not know, a package it
    needs that is not installed, or a filesystem that cannot start is a one-line
    :class:`StorageError` naming the scheme and what is missing."""
    if protocol not in fsspec.available_protocols():
        raise StorageError(f"unsupported storage scheme {protocol}:// (fsspec knows no such protocol)")
    try:
        return fsspec.filesystem(protocol, **storage_options)
    except ImportError as e:
        # fsspec re-raises the failed import with a hint of its own; the module is the cause's
        failed = e.__cause__ if isinstance(e.__cause__, ImportError) else e
        package = failed.name or str(known_implementations.get(protocol, {}).get("class", protocol)).split(".")[0]
        raise StorageError(f"{protocol}:// paths need the Python package {package}, which is not installed (pip install {package})") from e
    except (OSError, TypeError, ValueError) as e:
        # the filesystem would not start: a native library missing (HDFS), or options it
        # needs (a host) that the path alone does not give
        first = " ".join(str(e).split())
        cause = first if len(first) <= _CAUSE_CHARS else first[:_CAUSE_CHARS].rsplit(" ", 1)[0] + " ..."
        needs = _HDFS_NEEDS if protocol == "hdfs" else ""
        raise StorageError(f"{protocol}:// storage could not be opened: {cause}{needs}") from e


class FsspecStorage:
    """Files on an fsspec filesystem; paths are ``protocol://...`` URIs."""

    def __init__(self, protocol: str, **storage_options: object) -> None:
        self.protocol = protocol
        self.storage_options = storage_options
        self.fs = open_filesystem(protocol, storage_options)
        self.counters = StorageCounters()
        self.is_local = protocol in ("file", "local")

    def __getstate__(self) -> dict:
        return {"protocol": self.protocol, "storage_options": self.storage_options}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["protocol"], **state["storage_options"])  # type: ignore[misc]

    def _strip(self, path: str) -> str:
        prefix = f"{self.protocol}://"
        return path[len(prefix) :] if path.startswith(prefix) else path

    def read_bytes(self, path: str) -> bytes:
        self.counters.bump("read")
        return self.fs.cat_file(self._strip(path))

    def write_bytes(self, path: str, data: bytes) -> None:
        self.counters.bump("write")
        p = self._strip(path)
        self.fs.makedirs(posixpath.dirname(p), exist_ok=True)
        self.fs.pipe_file(p, data)

    def create_new(self, path: str, data: bytes, durable: bool = True) -> None:
        self.counters.bump("create")
        p = self._strip(path)
        if self.fs.exists(p):
            raise FileAlreadyExistsError(f"file already exists: {path}")
        self.fs.makedirs(posixpath.dirname(p), exist_ok=True)
        self.fs.pipe_file(p, data)

    def create_empty(self, path: str, like: str | None = None) -> bool:
        self.create_new(path, b"", durable=False)
        return False  # objects share nothing

    def exists(self, path: str) -> bool:
        self.counters.bump("exists")
        return self.fs.exists(self._strip(path))

    def size(self, path: str) -> int:
        self.counters.bump("stat")
        return int(self.fs.size(self._strip(path)))

    def list_dir(self, path: str) -> list[FileInfo]:
        self.counters.bump("list")
        p = self._strip(path).rstrip("/")
        try:
            entries = self.fs.ls(p, detail=True)
        except FileNotFoundError:
            return []
        base = path.rstrip("/")
        out = []
        for e in entries:
            name = posixpath.basename(e["name"].rstrip("/"))
            if not name:
                continue
            is_dir = e.get("type") == "directory"
            out.append(FileInfo(path=f"{base}/{name}", name=name, size=0 if is_dir else int(e.get("size") or 0), is_dir=is_dir))
        return out

    def list_names(self, path: str) -> list[tuple[str, bool]]:
        # (an object store lists with sizes anyway)
        return [(info.name, info.is_dir) for info in self.list_dir(path)]

    def delete(self, path: str) -> bool:
        self.counters.bump("delete")
        p = self._strip(path)
        if not self.fs.exists(p):
            return False
        self.fs.rm_file(p)
        return True

    def delete_dir(self, path: str) -> None:
        self.counters.bump("delete")
        p = self._strip(path)
        if self.fs.exists(p):
            self.fs.rm(p, recursive=True)

    def rename(self, src: str, dst: str) -> None:
        self.counters.bump("rename")
        if self.fs.exists(self._strip(dst)):
            raise FileAlreadyExistsError(f"rename target already exists: {dst}")
        self.fs.mv(self._strip(src), self._strip(dst))

    def makedirs(self, path: str) -> None:
        self.counters.bump("mkdir")
        self.fs.makedirs(self._strip(path), exist_ok=True)

    def check_file(self, path: str) -> None:
        """Object stores have no symbolic links. (fsspec's local file system is not
        checked: hoodie serves plain local paths with :class:`LocalStorage`.)"""

    def arrow_filesystem(self) -> tuple[pafs.FileSystem, str]:
        return pafs.PyFileSystem(pafs.FSSpecHandler(self.fs)), f"{self.protocol}://"
