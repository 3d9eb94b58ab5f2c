"""Decoded commit metadata of completed instants, shared by every timeline snapshot of
this process.

Each write opens its table, its metadata table and the views of its services afresh, and
every view checks its listing against the write stats of every completed write on the
timeline (:mod:`hoodie.table.committed`): without sharing, one write decodes each past
commit's metadata several times over, a cost that grows with the commits and with the
files each commit names. A completed instant's file never changes, and decoding is a pure
function of its bytes, so what is kept is keyed by the instant file's path *and* its
bytes: a file read again still costs its read (a deleted or rewritten table never gets
another table's metadata back), only its decoding is saved. What is kept is bounded by
the size of the decoded files, least recently used first out.

A long-lived owner that keeps its own bounded records (a timeline server's views) opts
out with :meth:`ActiveTimeline.without_metadata_cache`.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from hoodie.timeline.commit_metadata import CommitMetadata

# Bytes of instant files whose decoded metadata is kept (the decoded objects take a few
# times that): an active timeline of tens of commits naming thousands of files each.
MAX_BYTES = 16 * 1024 * 1024


class DecodedMetadata:
    """A bounded least-recently-used map (instant path, its bytes) → decoded metadata."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, bytes], CommitMetadata] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.decoded = 0  # how many decodings it could not save (for tests and benchmarks)

    def get(self, path: str, content: bytes, decode: Callable[[bytes], CommitMetadata]) -> CommitMetadata:
        key = (path, content)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
        metadata = decode(content)  # outside the lock: other threads decode other files meanwhile
        with self._lock:
            self.decoded += 1
            if len(content) > self.max_bytes:
                return metadata
            if key not in self._entries:
                self._entries[key] = metadata
                self._bytes += len(content)
                while self._bytes > self.max_bytes:
                    (_, old), _ = self._entries.popitem(last=False)
                    self._bytes -= len(old)
            return self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


#: the process's shared map
SHARED = DecodedMetadata()
