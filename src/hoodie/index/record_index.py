"""Record-level index (``hoodie.index.type=RECORD_INDEX``): each key's file group from
the metadata table's ``record_index`` partition, whatever partition the key is in.

The index is global, as Apache Hudi's: a key is found in the partition it lives in, not
only in the partition an incoming record names. This module knows nothing of the
metadata table (``index/`` sits beside it): it asks a :class:`KeyLocator`, which the
writer wires from the metadata table's reader, in batches of :data:`LOOKUP_BATCH` keys
(the locator groups each batch by the record index's file groups and reads each of
them once), as arrays aligned with the keys: no Python object a key.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

__all__ = ["LOOKUP_BATCH", "GlobalLocations", "KeyLocator", "locate_keys"]

#: keys asked of the locator at once: each batch reads every index block holding one of
#: its keys (nearly all of them, for a large batch), and its working arrays take some
#: tens of bytes a key
LOOKUP_BATCH = 1_000_000


@dataclass(frozen=True)
class GlobalLocations:
    """Per key, aligned with the keys asked: the partition path and file id the index
    names, null where it holds none."""

    partitions: pa.Array
    file_ids: pa.Array


class KeyLocator(Protocol):
    """Where the table's record index places keys. Picklable: engine tasks (Spark
    executors) call it themselves."""

    def locate(self, keys: pa.Array, workers: int = 1) -> tuple[pa.Array, pa.Array]:
        """Partition paths and file ids of ``keys`` (a string array), two string arrays
        aligned with them, null where the index holds none (plain arrays: the metadata
        table cannot import this package); ``workers``: threads it may use."""
        ...

    def stored_values(self, located: Mapping[str, tuple[str, str]], column: str | None) -> Mapping[str, Any]:
        """The stored record of each key of ``located`` in its file group (partition path,
        file id), merged as a snapshot read merges the group's latest slice: its value of
        ``column`` (None without a column). Keys whose record is gone are left out."""
        ...


def locate_keys(keys: pa.Array, locator: KeyLocator, batch: int = LOOKUP_BATCH, workers: int = 1) -> GlobalLocations:
    """Look every one of ``keys`` up in the record index, :data:`LOOKUP_BATCH` at a time
    (on up to ``workers`` threads)."""
    found = [locator.locate(keys.slice(start, batch), workers) for start in range(0, len(keys), batch)]
    partitions = [p for p, _ in found] or [pa.array([], pa.string())]
    file_ids = [f for _, f in found] or [pa.array([], pa.string())]
    return GlobalLocations(pa.concat_arrays(partitions), pa.concat_arrays(file_ids))
