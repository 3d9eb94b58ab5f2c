"""Batched marker creation on the timeline server (Java's ``MarkerDirState`` and batch
processing, in asyncio).

Create requests queue up; a batch is taken from the queue as soon as requests are there
and one of ``threads`` batch slots is free (group commit: while every slot is busy, the
queue fills and the next batch takes all of it), or every ``batch interval`` when one is
set (Java's cadence). A batch adds its names to one ``MARKERS<n>`` file of each marker
directory it touches, a file no other batch is writing (a name seen before is refused, as
a direct marker file that exists is), rewrites those files whole, writes ``MARKERS.type``
the first time, and only then answers its requests. Batches in flight write different
files side by side, as Java's threads do: a marker costs about one storage write of
latency even when the storage is slow. A directory's existing files are loaded the first
time it is asked for, so a restarted server refuses names an earlier one accepted. The
queue is bounded: past ``max_pending`` a request is refused at once (:class:`Overloaded`)
instead of growing it. So are the names kept for one directory: past ``max_dir_bytes``
(``hoodie.markers.timeline_server_based.dir.max_bytes``) a marker is refused
(:class:`TooManyMarkers`), and a directory whose files already hold more is not loaded.
Nor are names kept for instants that are over: when a new instant's directory is first
asked for, the table's timeline is read once and the directories of instants it shows
completed or no longer has (rolled back) are forgotten (their files stay; a directory asked
for again is loaded again), so a long-running server keeps the names of the instants in
progress only.

This module owns the batching and the in-memory state; the file format is
:mod:`hoodie.markers.timeline_based`'s, and which directories may be touched is decided
by the caller.
"""
from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hoodie.config import options as o
from hoodie.errors import HoodieError
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
from hoodie.table.table import HoodieTable
from hoodie.timeline.active import ActiveTimeline

log = logging.getLogger(__name__)


class Overloaded(Exception):
    """The marker queue is full: the request is refused, not queued."""


class TooManyMarkers(Exception):
    """A marker directory holds as many marker names as the server keeps for one: the
    marker is refused (asking again would be refused again)."""


@dataclass(frozen=True)
class MarkerBatching:
    """``hoodie.markers.timeline_server_based.batch.interval_ms`` and ``.num_threads``,
    and the bound of the request queue. An interval of 0 takes a batch as soon as requests
    wait and a slot is free; ``threads`` batches are written at once at most, and each
    marker directory has as many ``MARKERS<n>`` files."""

    interval_ms: int = 0
    threads: int = 20
    max_pending: int = 100_000
    max_dir_bytes: int = o.MARKERS_DIR_MAX_BYTES.default


class MarkerDirState:
    """The marker names of one marker directory, spread over ``files`` ``MARKERS<n>`` files.

    A batch takes a file no other batch is writing (:meth:`take_file`), adds its names to
    it and rewrites it whole, then gives it back: a file is never written by two batches
    at once, so the last write of a file always holds every name it was given."""

    def __init__(self, storage: Storage, marker_dir: str, files: int, max_bytes: int = o.MARKERS_DIR_MAX_BYTES.default) -> None:
        self.storage = storage
        self.marker_dir = marker_dir
        self.files = files
        self.max_bytes = max_bytes
        self.lines: dict[int, list[str]] = {i: [] for i in range(files)}
        self.names: set[str] = set()
        self.bytes = 0  # of the names' lines, as the MARKERS files hold them
        self.type_written = False
        # the write of MARKERS.type, by the first batch; later ones await it before answering
        self.type_writing: asyncio.Future[object] | None = None
        # names a batch added and is still writing, with that write's outcome: a second
        # request for one (a client's retry) is answered only once the name is durable
        self.writing: dict[str, asyncio.Future[None]] = {}
        self._in_use: set[int] = set()
        self._next = 0

    def load(self) -> None:
        """The names the directory's ``MARKERS<n>`` files hold already (a damaged file is a
        :class:`~hoodie.errors.FormatError`: its names cannot be told from a new one's)."""
        existing: set[int] = set()
        stored = 0
        for info in self.storage.list_dir(self.marker_dir):
            if info.name == MARKERS_TYPE_FILE:
                self.type_written = True
            elif (index := markers_file_index(info.name)) is not None:
                existing.add(index)
                stored += info.size
        if stored > self.max_bytes:  # not read into memory: no marker could be added anyway
            raise self._full(f"its MARKERS files hold {stored} bytes")
        for index in sorted(existing):
            names = read_markers_file(self.storage, self.marker_dir, index)
            self.lines[index] = names
            self.names.update(names)
            self.bytes += sum(_line_bytes(n) for n in names)

    def _full(self, held: str) -> TooManyMarkers:
        return TooManyMarkers(
            f"the marker directory {self.marker_dir} is full: {held}, and the timeline server keeps at most "
            f"{self.max_bytes} bytes of marker names for one instant ({o.MARKERS_DIR_MAX_BYTES.key})"
        )

    def take_file(self) -> int:
        """The next file in turn that no batch is writing, now the caller's (successive
        batches of a busy directory spread over all its files). There is always one: no
        more batches are in flight than the directory has files."""
        for step in range(self.files):
            index = (self._next + step) % self.files
            if index not in self._in_use:
                self._next = index + 1
                self._in_use.add(index)
                return index
        raise RuntimeError(f"every MARKERS file of {self.marker_dir} is being written")

    def give_back(self, index: int) -> None:
        self._in_use.discard(index)

    def add(self, name: str, index: int) -> bool:
        """Add a name to file ``index``; False if the directory has it already;
        :class:`TooManyMarkers` if it would hold more than ``max_bytes`` of names."""
        if name in self.names:
            return False
        size = _line_bytes(name)
        if self.bytes + size > self.max_bytes:
            raise self._full(f"{len(self.names)} marker names of {self.bytes} bytes")
        self.names.add(name)
        self.lines[index].append(name)
        self.bytes += size
        return True

    def forget(self, index: int, names: list[str], lines_before: int) -> None:
        """Undo a batch whose write failed: its names were never made, so asking again
        must make them, not find them."""
        del self.lines[index][lines_before:]
        self.names.difference_update(names)
        self.bytes -= sum(_line_bytes(n) for n in names)

    @property
    def idle(self) -> bool:
        """No batch is writing the directory's files."""
        return not self._in_use and not self.writing and (self.type_writing is None or self.type_writing.done())

    def file(self, index: int) -> tuple[str, bytes]:
        """(path, content) of file ``index``."""
        return under(self.marker_dir, markers_file_name(index)), render_markers(self.lines[index])

    def type_file(self) -> tuple[str, bytes]:
        return under(self.marker_dir, MARKERS_TYPE_FILE), TIMELINE_SERVER_BASED.encode()


def _line_bytes(name: str) -> int:
    return len(name.encode("utf-8")) + 1


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
    _slots: asyncio.Semaphore | None = None
    _in_flight: set[asyncio.Task[None]] = field(default_factory=set)
    _closed: bool = False

    def start(self) -> None:
        threads = max(1, self.batching.threads)
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="hoodie-markers")
        self._slots = asyncio.Semaphore(threads)
        self._flusher = asyncio.get_running_loop().create_task(self._flush_forever())

    async def stop(self) -> None:
        """Refuse new requests, write and answer the queued ones and those in flight, end
        the flusher (a batch taken from the queue is always answered)."""
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
            await self._forget_finished(storage, marker_dir)
            state = MarkerDirState(storage, marker_dir, max(1, self.batching.threads), self.batching.max_dir_bytes)
            await self._io(state.load)
            state = self._dirs.setdefault(marker_dir, state)
        return state

    async def _forget_finished(self, storage: Storage, marker_dir: str) -> None:
        """Forget the directories of the table of ``marker_dir`` (a new instant's) whose
        instants its timeline shows completed or no longer has."""
        temp = marker_dir.rsplit("/", 1)[0]  # <table>/.hoodie/.temp
        held = [d for d in self._dirs if d.rsplit("/", 1)[0] == temp]
        if not held:
            return
        base_path = temp.rsplit("/", 2)[0]
        try:
            timeline = await self._io(lambda: HoodieTable.open(base_path, storage).timeline)
        except (HoodieError, OSError) as e:
            log.warning("the timeline server keeps the marker names of %s: its timeline cannot be read (%s)", temp, e)
            return  # kept: forgetting a directory is never needed for a marker to be made
        assert isinstance(timeline, ActiveTimeline)
        pending = {i.timestamp for i in timeline.instants if not i.is_completed}
        for d in held:
            state = self._dirs.get(d)
            # (a batch still writing a finished instant's file keeps it until the next time)
            if state is not None and d.rsplit("/", 1)[1] not in pending and state.idle:
                del self._dirs[d]

    async def _flush_forever(self) -> None:
        assert self._slots is not None
        while not self._closed:
            if self.batching.interval_ms > 0:
                await asyncio.sleep(self.batching.interval_ms / 1000)
            else:
                await self._arrived.wait()
                self._arrived.clear()
            if not self._pending:
                continue
            # a free slot first: while all are busy, what arrives joins this batch
            await self._slots.acquire()
            task = asyncio.get_running_loop().create_task(self._write_batch(self._take_batch()))
            self._in_flight.add(task)
            task.add_done_callback(self._batch_done)

    def _take_batch(self) -> list[_Request]:
        batch, self._pending = self._pending, []
        return batch

    def _batch_done(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        assert self._slots is not None
        self._slots.release()

    async def flush(self) -> None:
        """Write the batches in flight and whatever is queued, and answer their requests."""
        while self._in_flight:
            await asyncio.gather(*self._in_flight, return_exceptions=True)
        await self._write_batch(self._take_batch())

    async def _write_batch(self, batch: list[_Request]) -> None:
        if not batch:
            return
        by_dir: dict[str, list[_Request]] = defaultdict(list)
        for request in batch:
            by_dir[request.marker_dir].append(request)
        results = await asyncio.gather(*(self._write_dir(requests) for requests in by_dir.values()), return_exceptions=True)
        for requests, result in zip(by_dir.values(), results):
            if isinstance(result, BaseException):
                for r in requests:
                    if not r.answer.done():
                        r.answer.set_exception(result)

    async def _type_written(self, state: MarkerDirState) -> None:
        """``MARKERS.type`` is durable: written by the first batch that needs it (the
        others wait for that write); a failed write is tried again by the next batch."""
        if state.type_written:
            return
        if state.type_writing is None:
            state.type_writing = asyncio.ensure_future(self._io(state.storage.write_bytes, *state.type_file()))
        writing = state.type_writing
        try:
            await asyncio.shield(writing)
        except BaseException:
            if state.type_writing is writing and writing.done():
                state.type_writing = None
            raise
        state.type_written = True

    async def _write_dir(self, requests: list[_Request]) -> None:
        state = await self._state(requests[0].storage, requests[0].marker_dir)
        index = state.take_file()
        lines_before = len(state.lines[index])
        elsewhere = {state.writing[r.name] for r in requests if r.name in state.writing}
        added: list[tuple[_Request, bool]] = []
        for r in requests:
            try:
                added.append((r, state.add(r.name, index)))
            except TooManyMarkers as e:
                r.answer.set_exception(e)  # refused now; the others of the batch go on
        new = [r.name for r, is_new in added if is_new]
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        state.writing.update(dict.fromkeys(new, written))
        try:
            if new:
                await asyncio.gather(self._io(state.storage.write_bytes, *state.file(index)), self._type_written(state))
                self.on_flush(len(new), 1)
            written.set_result(None)
        except BaseException as e:
            state.forget(index, new, lines_before)
            written.set_exception(e)
            written.exception()  # retrieved: only waiting duplicates need it
            raise
        finally:
            state.give_back(index)
            for name in new:
                state.writing.pop(name, None)
        for other in elsewhere:
            await asyncio.shield(other)
        for r, is_new in added:
            if not r.answer.done():
                r.answer.set_result(is_new)
