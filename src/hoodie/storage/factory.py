"""Pick a storage backend for a table path."""
from __future__ import annotations

import os

from hoodie.storage.base import Storage
from hoodie.storage.fsspec_storage import FsspecStorage
from hoodie.storage.local import LocalStorage


def normalize_path(path: str) -> str:
    """Canonical form of a table path: absolute for local files, URI otherwise."""
    if path.startswith("file://"):
        path = path[len("file://") :]
    if "://" in path:
        return path.rstrip("/")
    return os.path.abspath(path).rstrip("/") or "/"


def storage_for(path: str, **storage_options: object) -> Storage:
    """The storage that serves ``path``: local for plain paths, fsspec for URIs."""
    if "://" not in path or path.startswith("file://"):
        return LocalStorage()
    protocol = path.split("://", 1)[0]
    return FsspecStorage(protocol, **storage_options)
