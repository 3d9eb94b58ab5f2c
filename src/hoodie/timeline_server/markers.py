"""Batched marker creation on the timeline server (Java's ``MarkerDirState`` and batch
processing, in asyncio).

Create requests queue up; the queue is drained as soon as the previous batch is written
(group commit), or every ``batch interval`` when one is set (Java's cadence): new names are
added to their marker directory's state (a name seen before is refused, as a direct marker
file that exists is), the ``MARKERS<n>`` files that gained names are rewritten whole by up
to ``threads`` workers, ``MARKERS.type`` is written once, and only then are the requests
answered. A directory's existing files are loaded the first time it is asked for, so a
restarted server refuses names an earlier one accepted. The queue is bounded: past
``max_pending`` a request is refused at once (:class:`Overloaded`) instead of growing it.

This module owns the batching and the in-memory state; the file format is
:mod:`hoodie.markers.timeline_based`'s, and which directories may be touched is decided
by the caller.
"""
from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hoodie.markers.timeline_based import (
    MARKERS_TYPE_FILE,
    TIMELINE_SERVER_BASED,
    markers_file_index,
    markers_file_name,
    read_markers_file,
    render_markers,
)
from hoodie.storage.base import Storage
from hoodie.storage.paths import under


class Overloaded(Exception):
    """The marker queue is full: the request is refused, not queued."""


@dataclass(frozen=True)
class MarkerBatching:
    """``hoodie.markers.timeline_server_based.batch.interval_ms`` and ``.num_threads``,
    and the bound of the request queue. An interval of 0 writes each batch as soon as the
    one before it is written (group commit: the batch is whatever queued meanwhile)."""

    interval_ms: int = 0
    threads: int = 20
    max_pending: int = 100_000


class MarkerDirState:
    """The marker names of one marker directory, spread over ``files`` ``MARKERS<n>`` files."""

    def __init__(self, storage: Storage, marker_dir: str, files: int) -> None:
        self.storage = storage
        self.marker_dir = marker_dir
        self.files = files
        self.lines: dict[int, list[str]] = {i: [] for i in range(files)}
        self.names: set[str] = set()
        self.dirty: set[int] = set()
        self.type_written = False
        self._next = 0

    def load(self) -> None:
        """The names the directory's ``MARKERS<n>`` files hold already (a damaged file is a
        :class:`~hoodie.errors.FormatError`: its names cannot be told from a new one's)."""
        existing: set[int] = set()
        for info in self.storage.list_dir(self.marker_dir):
            if info.name == MARKERS_TYPE_FILE:
                self.type_written = True
            elif (index := markers_file_index(info.name)) is not None:
                existing.add(index)
        for index in sorted(existing):
            names = read_markers_file(self.storage, self.marker_dir, index)
            self.lines[index] = names
            self.names.update(names)

    def next_file(self) -> int:
        """The file a flush adds its names to: the next in turn (each flush of a busy
        directory rewrites one file, and successive flushes spread over them all)."""
        index = self._next % self.files
        self._next += 1
        return index

    def add(self, name: str, index: int) -> bool:
        """Add a name to file ``index``; False if the directory has it already."""
        if name in self.names:
            return False
        self.names.add(name)
        self.lines[index].append(name)
        self.dirty.add(index)
        return True

    def pending_writes(self) -> list[tuple[str, bytes]]:
        """(path, content) of every file that gained names, ``MARKERS.type`` first."""
        writes = []
        if not self.type_written:
            writes.append((under(self.marker_dir, MARKERS_TYPE_FILE), TIMELINE_SERVER_BASED.encode()))
        writes += [(under(self.marker_dir, markers_file_name(i)), render_markers(self.lines[i])) for i in sorted(self.dirty)]
        return writes

    def written(self) -> None:
        self.type_written = True
        self.dirty.clear()


@dataclass
class _Request:
    storage: Storage
    marker_dir: str
    name: str
    answer: asyncio.Future[bool]


@dataclass
class MarkerService:
    """Marker directories served by one timeline server; its coroutines run on the server's
    event loop, file I/O on a pool of ``batching.threads`` threads."""

    batching: MarkerBatching = field(default_factory=MarkerBatching)
    on_flush: Callable[[int, int], None] = lambda markers, files: None  # metrics
    _dirs: dict[str, MarkerDirState] = field(default_factory=dict)
    _pending: list[_Request] = field(default_factory=list)
    _pool: ThreadPoolExecutor | None = None
    _flusher: asyncio.Task[None] | None = None
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _closed: bool = False

    def start(self) -> None:
        self._pool = ThreadPoolExecutor(max(1, self.batching.threads), thread_name_prefix="hoodie-markers")
        self._flusher = asyncio.get_running_loop().create_task(self._flush_forever())

    async def stop(self) -> None:
        """Refuse new requests, write and answer the queued ones, end the flusher (after
        the batch it is writing: a batch taken from the queue is always answered)."""
        self._closed = True
        self._arrived.set()
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        await self.flush()
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    async def create(self, storage: Storage, marker_dir: str, name: str) -> bool:
        """Queue a marker; True once it is written, False if the directory had it."""
        if self._closed:
            raise Overloaded("the timeline server is stopping")
        if len(self._pending) >= self.batching.max_pending:
            raise Overloaded(f"{len(self._pending)} marker requests are queued already")
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(storage, marker_dir, name, answer))
        self._arrived.set()
        return await answer

    async def names(self, storage: Storage, marker_dir: str) -> list[str]:
        state = await self._state(storage, marker_dir)
        return sorted(state.names)

    async def exists(self, storage: Storage, marker_dir: str) -> bool:
        return bool(await self._io(storage.exists, marker_dir))

    async def delete_dir(self, storage: Storage, marker_dir: str) -> bool:
        self._dirs.pop(marker_dir, None)
        existed = await self._io(storage.exists, marker_dir)
        await self._io(storage.delete_dir, marker_dir)
        return bool(existed)

    async def _io(self, fn: Callable[..., object], *args: object) -> object:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def _state(self, storage: Storage, marker_dir: str) -> MarkerDirState:
        state = self._dirs.get(marker_dir)
        if state is None:
            state = MarkerDirState(storage, marker_dir, max(1, self.batching.threads))
            await self._io(state.load)
            state = self._dirs.setdefault(marker_dir, state)
        return state

    async def _flush_forever(self) -> None:
        while not self._closed:
            if self.batching.interval_ms > 0:
                await asyncio.sleep(self.batching.interval_ms / 1000)
            else:
                # group commit: what queued while the last batch was written is the next
                await self._arrived.wait()
                self._arrived.clear()
            await self.flush()

    async def flush(self) -> None:
        """Add the queued names, write the files that gained some, answer the requests."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        by_dir: dict[str, list[_Request]] = defaultdict(list)
        for request in batch:
            by_dir[request.marker_dir].append(request)
        results = await asyncio.gather(*(self._flush_dir(requests) for requests in by_dir.values()), return_exceptions=True)
        for requests, result in zip(by_dir.values(), results):
            if isinstance(result, BaseException):
                for r in requests:
                    if not r.answer.done():
                        r.answer.set_exception(result)

    async def _flush_dir(self, requests: list[_Request]) -> None:
        state = await self._state(requests[0].storage, requests[0].marker_dir)
        index = state.next_file()
        added = [(r, state.add(r.name, index)) for r in requests]
        writes = state.pending_writes()
        if writes:
            await asyncio.gather(*(self._io(state.storage.write_bytes, path, content) for path, content in writes))
            state.written()
            self.on_flush(sum(1 for _, new in added if new), len(writes))
        for r, new in added:
            if not r.answer.done():
                r.answer.set_result(new)
