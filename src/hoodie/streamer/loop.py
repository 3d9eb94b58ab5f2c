"""The streamer's loop: checkpoint, batch, transformation, commit — once or continuously.

One sync (Hudi's DeltaSync round) reads the checkpoint of the last committed batch back
from the target table (:func:`hoodie.timeline.checkpoints.latest_checkpoint`, key
``deltastreamer.checkpoint.key``), asks the source for the next batch after it, reads
it, runs the SQL transformation and writes it with the configured operation (upsert by
default) as ONE commit whose extra metadata holds the batch's checkpoint. The checkpoint
and the rows become visible together, so a job killed at any point resumes exactly after
the last committed batch: a batch in flight either committed (and is not taken again) or
did not (the next writer rolls its instant back, and the batch is taken again). No new
file or commit in the source: nothing is written. New ones whose rows are all gone after
the transformation (or empty files): an empty commit still records the checkpoint, as
Hudi's streamer does, so that they are not read again.

``--checkpoint`` (Hudi's): a batch starts there instead of at the committed checkpoint,
once — its commits record it under ``deltastreamer.checkpoint.reset_key``, and a restart
with the same value resumes from the committed checkpoint. A target table with commits
but no checkpoint on its active timeline (written by something else, or the streamer's
commits archived) needs one: without it the job stops with an error, as Apache Hudi's
does, rather than take the source again from its start.

An engine (:class:`BatchEngine`) reads, transforms and writes: in process
(:class:`~hoodie.streamer.arrow_engine.ArrowEngine`) or on Spark
(``hoodie.spark.streamer``); the loop and the sources are the same for both. Inline
table services run after each commit as the write options say (cleaning, archival).

A merge-on-read target is compacted as Apache Hudi's streamer compacts it, unless
``compaction`` is off (Hudi's ``--disable-compaction``): a job run once compacts inline
(``hoodie.compact.inline``, when due by ``hoodie.compact.inline.max.delta.commits``); a
continuous job compacts asynchronously
(:class:`~hoodie.services.async_compaction.AsyncCompactor`: after each batch, a due
compaction starts and runs while the next batches are written, in an OS process of its
own with the in-process engine, on a thread through Spark with Spark's), and the job
waits for it when it stops. ``hoodie.compact.inline`` given explicitly is kept as given.
"""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.errors import ConfigError, TimelineError
from hoodie.services.async_compaction import AsyncCompactor
from hoodie.storage.base import Storage
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.streamer import transform
from hoodie.streamer.batches import FILE_FORMATS, SourceBatch
from hoodie.streamer.dfs_source import DfsSource
from hoodie.streamer.incr_source import HoodieIncrSource
from hoodie.table.table import HoodieTable
from hoodie.timeline.checkpoints import STREAMER_CHECKPOINT_KEY, latest_checkpoint

# Apache Hudi's key for the --checkpoint a job was started with
CHECKPOINT_RESET_KEY = "deltastreamer.checkpoint.reset_key"
HOODIE_INCR = "hoodie"
SOURCE_KINDS = (*FILE_FORMATS, HOODIE_INCR)
# Hudi's source classes, for users who name them as they would for HoodieStreamer
SOURCE_CLASSES = {
    "org.apache.hudi.utilities.sources.JsonDFSSource": "json",
    "org.apache.hudi.utilities.sources.CsvDFSSource": "csv",
    "org.apache.hudi.utilities.sources.ParquetDFSSource": "parquet",
    "org.apache.hudi.utilities.sources.AvroDFSSource": "avro",
    "org.apache.hudi.utilities.sources.HoodieIncrSource": HOODIE_INCR,
}
IDLE_POLL_SECONDS = 1.0  # continuous mode with nothing new: ask the source again after this


class Source(Protocol):
    def describe(self) -> str: ...

    def plan(self, checkpoint: str | None, source_limit: int | None = None) -> SourceBatch | None: ...


class BatchEngine(Protocol):
    """Where a batch is read, transformed and written."""

    name: str

    def read(self, batch: Any) -> tuple[Any, int]:
        """The batch's data, and how many rows it took from the source."""
        ...

    def transform(self, data: Any, sql: str) -> Any: ...

    def write(self, data: Any, path: str, options: Mapping[str, Any], extra_metadata: Mapping[str, str]) -> str | None:
        """Write ``data`` as one commit carrying ``extra_metadata``: its instant (None:
        nothing to write, before the table exists)."""
        ...

    def compaction_engine(self) -> Engine | None:
        """The engine a continuous job's asynchronous compaction runs its tasks on, on a
        thread of this process; None: in an OS process of its own."""
        ...


@dataclass(frozen=True)
class StreamerSettings:
    """What ``hoodie streamer`` is told: the target, the source kind (json, csv, parquet,
    avro, or hoodie for another table's commits, or Hudi's class name of one), the Hudi
    options (write options and ``hoodie.streamer.*``), the source limit in bytes,
    ``--checkpoint``, and whether a merge-on-read target is compacted (``compaction``;
    Hudi's ``--disable-compaction`` turns it off)."""

    target_path: str
    source: str
    options: Mapping[str, Any] = field(default_factory=dict)
    source_limit: int | None = None
    checkpoint: str | None = None
    compaction: bool = True

    def __post_init__(self) -> None:
        if self.source_kind not in SOURCE_KINDS:
            kinds, classes = ", ".join(SOURCE_KINDS), ", ".join(SOURCE_CLASSES)
            raise ConfigError(f"unknown streamer source {self.source!r}: expected one of {kinds} or one of Hudi's {classes}")
        if self.source_limit is not None and self.source_limit < 1:
            raise ConfigError(f"invalid source limit {self.source_limit}: expected a number of bytes from 1")

    @property
    def source_kind(self) -> str:
        return SOURCE_CLASSES.get(self.source, self.source.lower())

    def config(self) -> HoodieConfig:
        return HoodieConfig.of(self.options)

    def compacts_inline(self, continuous: bool) -> bool:
        """Whether the writes compact a merge-on-read target inline: as given by
        ``hoodie.compact.inline``, else in a job run once (see the module docstring)."""
        given = self.options.get(o.COMPACT_INLINE.key)
        if given is not None:
            return bool(HoodieConfig.of({o.COMPACT_INLINE.key: given}).get(o.COMPACT_INLINE))
        return self.compaction and not continuous

    def compacts_async(self, continuous: bool) -> bool:
        """Whether a job compacts a merge-on-read target asynchronously beside its batches."""
        return self.compaction and continuous and not self.compacts_inline(continuous)

    def write_options(self, continuous: bool) -> dict[str, Any]:
        """The batches' write options: ``hoodie.compact.inline`` as the job compacts."""
        return {**self.options, o.COMPACT_INLINE.key: str(self.compacts_inline(continuous)).lower()}


@dataclass(frozen=True)
class BatchResult:
    """One committed batch: its instant, the rows it took from the source (before the
    transformation, deduplication or deletes), what it took and what is left, and the
    asynchronous compaction started after it, if one was."""

    number: int
    instant: str
    rows: int
    batch: SourceBatch
    seconds: float
    compaction: str | None = None


def make_source(settings: StreamerSettings) -> Source:
    config = settings.config()
    kind = settings.source_kind
    if kind == HOODIE_INCR:
        return HoodieIncrSource(
            normalize_path(str(config.require(o.STREAMER_INCR_PATH))),
            num_instants=config.get(o.STREAMER_INCR_NUM_INSTANTS),
            missing_checkpoint=config.get(o.STREAMER_INCR_MISSING_CHECKPOINT),
            drop_all_meta=config.get(o.STREAMER_INCR_DROP_ALL_META),
        )
    root = normalize_path(str(config.require(o.STREAMER_DFS_ROOT)))
    return DfsSource(storage_for(root), root, kind, csv_header=config.get(o.STREAMER_CSV_HEADER), csv_sep=config.get(o.STREAMER_CSV_SEP))


class Streamer:
    """Runs syncs of one source into one target table on one engine."""

    def __init__(self, settings: StreamerSettings, engine: BatchEngine, storage: Storage | None = None) -> None:
        self.settings = settings
        self.engine = engine
        self.target = normalize_path(settings.target_path)
        self.storage = storage or storage_for(self.target)
        self.source = make_source(settings)
        self.sql = transform.transformer_sql(settings.config())
        self.batches = 0
        self.compactor: AsyncCompactor | None = None  # a continuous job's, while it runs
        self._write_options = settings.write_options(continuous=False)

    def committed_checkpoint(self) -> str | None:
        """Where the next batch starts: the checkpoint of the last committed batch, or
        ``--checkpoint`` when the job was (re)started with a value its commits do not
        record as their reset key yet."""
        found, last = None, None
        if HoodieTable.exists(self.target, self.storage):
            timeline = HoodieTable.open(self.target, self.storage).timeline
            found, last = latest_checkpoint(timeline, STREAMER_CHECKPOINT_KEY), timeline.last_completed_write()
        reset = self.settings.checkpoint
        if reset is not None and (found is None or found.metadata.extra_metadata.get(CHECKPOINT_RESET_KEY) != reset):
            return reset
        if found is None and last is not None:
            # as Apache Hudi's streamer: starting the source over could apply batches twice
            raise TimelineError(
                f"no streamer checkpoint ({STREAMER_CHECKPOINT_KEY}) in the commits of {self.target} on its active timeline "
                f"(last commit {last.timestamp}): the table was not written by the streamer, or the commits holding it were "
                "archived; start with --checkpoint to say where the source stands (0: every file or commit of the source)"
            )
        return found.value if found is not None else None

    def sync_once(self) -> BatchResult | None:
        """One batch after the committed checkpoint, written as one commit; None when the
        source has nothing new (or only empty files, before the table exists)."""
        started = time.monotonic()
        batch = self.source.plan(self.committed_checkpoint(), self.settings.source_limit)
        if batch is None:
            return None
        data, rows = self.engine.read(batch)
        if self.sql is not None:
            data = self.engine.transform(data, self.sql)
        extra = {STREAMER_CHECKPOINT_KEY: batch.checkpoint}
        if self.settings.checkpoint is not None:
            extra[CHECKPOINT_RESET_KEY] = self.settings.checkpoint
        instant = self.engine.write(data, self.target, self._write_options, extra)
        if instant is None:
            return None  # empty files before the table exists: nothing committed
        self.batches += 1
        return BatchResult(self.batches, instant, rows, batch, time.monotonic() - started)

    def run(
        self,
        *,
        continuous: bool = False,
        min_sync_interval_seconds: float = 0.0,
        stop: threading.Event | None = None,
        on_batch: Callable[[BatchResult | None], None] | None = None,
    ) -> list[BatchResult]:
        """One sync, or (``continuous``) syncs until ``stop`` is set, each starting at least
        ``min_sync_interval_seconds`` after the previous one started (Hudi's
        ``--min-sync-interval-seconds``); ``stop`` is looked at between batches only. A
        merge-on-read target is compacted as the module docstring says; a continuous job
        waits for its running compaction before it returns."""
        stop = stop or threading.Event()
        results: list[BatchResult] = []
        self._write_options = self.settings.write_options(continuous)
        if self.settings.compacts_async(continuous):
            self.compactor = AsyncCompactor(self.target, self._write_options, self.engine.compaction_engine())
        try:
            while not stop.is_set():
                started = time.monotonic()
                result = self.sync_once()
                if result is not None:
                    if self.compactor is not None:  # a due compaction starts, unless one runs
                        result = replace(result, compaction=self.compactor.after_batch())
                    results.append(result)
                if on_batch is not None:
                    on_batch(result)
                if not continuous:
                    break
                wait = max(min_sync_interval_seconds - (time.monotonic() - started), 0.0 if result is not None else IDLE_POLL_SECONDS)
                stop.wait(wait)
        finally:
            if self.compactor is not None:
                self.compactor.close()  # never abandoned midway
        return results


@contextmanager
def stopping_on_signals(stop: threading.Event) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM set ``stop`` (the loop ends after the batch in
    flight commits); a second signal interrupts the batch itself (KeyboardInterrupt:
    its write rolls itself back, or the next writer rolls it back)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be installed by the main thread
        return

    def handle(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
