"""Record-level index (``hoodie.index.type=RECORD_INDEX``): each key's file group from
the metadata table's ``record_index`` partition, whatever partition the key is in.

The index is global, as Apache Hudi's: a key is found in the partition it lives in, not
only in the partition an incoming record names. This module knows nothing of the
metadata table (``index/`` sits beside it): it asks a :class:`KeyLocator`, which the
writer wires from the metadata table's reader, in batches of :data:`LOOKUP_BATCH` keys
(the locator groups each batch by the record index's file groups and reads each of
them once), so memory holds one batch's locations at a time besides the answer.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

__all__ = ["LOOKUP_BATCH", "GlobalLocations", "KeyLocator", "locate_keys"]

#: keys asked of the locator at once
LOOKUP_BATCH = 100_000


class KeyLocator(Protocol):
    """Where the table's record index places keys. Picklable: engine tasks (Spark
    executors) call it themselves."""

    def locate(self, keys: Sequence[str]) -> Mapping[str, tuple[str, str]]:
        """Partition path and file id of each of ``keys`` the index holds (others left out)."""
        ...

    def stored_values(self, located: Mapping[str, tuple[str, str]], column: str | None) -> Mapping[str, Any]:
        """The stored record of each key of ``located`` in its file group (partition path,
        file id), merged as a snapshot read merges the group's latest slice: its value of
        ``column`` (None without a column). Keys whose record is gone are left out."""
        ...


@dataclass(frozen=True)
class GlobalLocations:
    """Per key, aligned with the keys asked: the partition path and file id the index
    names, null where it holds none."""

    partitions: pa.Array
    file_ids: pa.Array


def locate_keys(keys: pa.Array, locator: KeyLocator, batch: int = LOOKUP_BATCH) -> GlobalLocations:
    """Look every one of ``keys`` up in the record index, :data:`LOOKUP_BATCH` at a time."""
    partitions: list[str | None] = []
    file_ids: list[str | None] = []
    for start in range(0, len(keys), batch):
        chunk = keys.slice(start, batch).to_pylist()
        found = locator.locate(chunk)
        for key in chunk:
            where = found.get(key)
            partitions.append(where[0] if where is not None else None)
            file_ids.append(where[1] if where is not None else None)
    return GlobalLocations(pa.array(partitions, pa.string()), pa.array(file_ids, pa.string()))
