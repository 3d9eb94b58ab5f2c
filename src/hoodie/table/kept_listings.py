"""The listings one process keeps of a table from one of its writes to the next.

A Spark application keeps its embedded timeline server, and the server its synced view
of a table, across the application's writes (RFC-03): each write then costs the view
only what completed since the last one. In process, without a server, a write and its
inline services share :class:`~hoodie.table.synced_listings.SharedListings`; this module
keeps those listings when the write is done, so that the next write of the same table in
the same process takes them up instead of looking every partition's files up again in
the metadata table (whose ``files`` partition gathers a log block each write until its
compaction). The writer keeps them only for tables listed through their metadata table
(a table listed from storage is listed again by each write, which then finds a file gone
from storage outside any commit). The listings are synced to each write's timeline
before a view answers from them (:meth:`SyncedListings.sync`): the commits, cleans and
compactions of every writer are applied from their metadata, and a rollback, a restore,
an instant pending at the last sync and gone since (completed and archived unseen) or a
timeline that does not follow the one synced (a table deleted and made again, an
archived gap) makes them list again.

A write takes the kept listings of its table for itself (:func:`take_listings`): two
writes of one table at once in one process never share them, the second starts afresh.
Only a write that committed gives them back (:func:`keep_listings`); at most
:data:`MAX_TABLES` tables' listings are kept, the least recently written one given up
first, and a table's listings of more than :data:`MAX_BYTES` bytes are not kept at all
(a table of many partitions lists them again at its next write, as without this module).

This module never lists or reads storage; it only holds listings between writes.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from hoodie.storage.base import Storage
from hoodie.table.synced_listings import SharedListings

#: how many tables' listings a process keeps between writes
MAX_TABLES = 8
#: a table's listings larger than this (their encoded bytes in memory) are not kept
MAX_BYTES = 64 << 20

_Key = tuple[str, str]
_kept: OrderedDict[_Key, SharedListings] = OrderedDict()
_lock = threading.Lock()


def _key(storage: Storage, base_path: str) -> _Key:
    # the same path through another kind of storage (another object store, other
    # options) may be another table: listings are kept per path and storage
    return base_path, _storage_kind(storage)


def _storage_kind(storage: object) -> str:
    options = getattr(storage, "storage_options", None)
    inner = getattr(storage, "inner", None)  # a wrapper (added latency): what it wraps too
    kind = f"{type(storage).__qualname__}:{getattr(storage, 'protocol', '')}:{sorted(options.items()) if isinstance(options, dict) else ''}"
    return kind if inner is None else f"{kind} over {_storage_kind(inner)}"


def take_listings(storage: Storage, base_path: str) -> SharedListings:
    """The listings kept of the table at ``base_path`` for a new write, now its own
    (their storage calls are now ``storage``'s), or new ones when none are kept."""
    with _lock:
        listings = _kept.pop(_key(storage, base_path), None)
    if listings is None:
        return SharedListings(storage, base_path)
    listings.listings.storage = storage
    return listings


def keep_listings(storage: Storage, base_path: str, listings: SharedListings) -> None:
    """Keep ``listings`` of a write that committed for the next write of the table."""
    if listings.listings.store.memory_bytes() > MAX_BYTES:
        return
    with _lock:
        key = _key(storage, base_path)
        _kept.pop(key, None)
        _kept[key] = listings
        while len(_kept) > MAX_TABLES:
            _kept.popitem(last=False)


def forget_kept_listings() -> None:
    """Keep no listings any more (a process that knows its tables changed outside any
    timeline, as a test that deletes a table and makes it again with the same instants)."""
    with _lock:
        _kept.clear()
