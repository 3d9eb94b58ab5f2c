"""The metadata table's metrics: how often and how long it was initialised, kept in step
with the data table, looked up, scanned, compacted and cleaned, and how many
differences its validation found (RFC-15's ``HoodieMetadata.*`` metrics).

The catalogue is declared once here (:data:`METRICS`): each :class:`Metric` counts
operations by one label (the data action of a sync, the lookup's kind, the metadata
partition scanned...), the seconds they took and a few amounts of their own (keys asked,
records found, files and bytes read). Figures are recorded once per operation — a lookup,
a slice read, a delta commit —, never per record, so recording costs a lock and a few
additions beside work that reads files.

One :class:`MetadataMetrics` per owner, as the timeline server keeps one set of metrics
per server: whoever opens the metadata table for some work hands the reader, writer or
services one (a timeline server its own, exported on ``/metrics`` as ``hoodie_metadata_*``;
``hoodie metadata stats`` its own, printed), and they record into it; given none, they
record into one of their own. Nothing is kept at module level.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = [
    "CLEAN",
    "COMPACTION",
    "INITIALIZE",
    "LOOKUP",
    "METRICS",
    "SCAN",
    "SYNC",
    "VALIDATE",
    "Figure",
    "MetadataMetrics",
    "Metric",
]


@dataclass(frozen=True)
class Metric:
    """One kind of operation on the metadata table: counted and timed by ``label``'s
    value ("": not by any), with ``amounts`` summed over its operations."""

    name: str
    label: str
    amounts: tuple[str, ...]
    doc: str


INITIALIZE = Metric(
    "initialize", "partition", ("records", "file_groups"),
    "metadata partitions built from a listing of the data table (the first write with the metadata table on)",
)
SYNC = Metric(
    "sync", "action", ("records", "log_files"),
    "delta commits applying a completed data action (commit, deltacommit, clean, rollback...) to the metadata table",
)
LOOKUP = Metric(
    "lookup", "kind", ("keys", "hits"),
    "lookups: partitions and files listed, column statistics, bloom filters and record-index keys "
    "(keys asked, including key prefixes; records found)",
)
SCAN = Metric(
    "scan", "partition", ("base_files", "base_bytes", "base_blocks", "log_files", "log_bytes", "log_blocks", "records"),
    "reads of a metadata file slice: its base HFile (its size, and the HFile blocks a lookup read of it), its log files "
    "(their size and blocks), the records merged",
)
COMPACTION = Metric(
    "compaction", "", ("file_groups", "records"),
    "the metadata table's compactions (file groups given a new base HFile, records written into them)",
)
CLEAN = Metric("clean", "", ("files",), "the metadata table's cleans (files of older slices deleted)")
VALIDATE = Metric(
    "validate", "check", ("errors",),
    "comparisons of the metadata table with the data (hoodie metadata validate, hoodie.metadata.validate listings) "
    "and the differences they found",
)
#: every metric, in the order they are shown
METRICS: tuple[Metric, ...] = (INITIALIZE, SYNC, LOOKUP, SCAN, COMPACTION, CLEAN, VALIDATE)


@dataclass
class Figure:
    """The operations of one metric with one label value: how many, the seconds they
    took together and their amounts."""

    count: int = 0
    seconds: float = 0.0
    amounts: dict[str, int] = field(default_factory=dict)


class MetadataMetrics:
    """The figures one owner's metadata-table work recorded (thread-safe: a timeline
    server's views are built on worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._figures: dict[tuple[str, str], Figure] = {}

    def __getstate__(self) -> dict[str, object]:
        # a copy sent to another process (a table listed through its metadata table, in a
        # Spark task) records apart, from the figures it was sent with
        with self._lock:
            return {"_figures": {key: Figure(f.count, f.seconds, dict(f.amounts)) for key, f in self._figures.items()}}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def record(self, metric: Metric, label: str, seconds: float, **amounts: int) -> None:
        """One operation of ``metric`` by ``label`` that took ``seconds``."""
        unknown = set(amounts) - set(metric.amounts)
        if unknown:
            raise ValueError(f"metric {metric.name!r} has no amount {', '.join(sorted(unknown))} (it has {', '.join(metric.amounts)})")
        with self._lock:
            figure = self._figures.setdefault((metric.name, label), Figure())
            figure.count += 1
            figure.seconds += seconds
            for name, value in amounts.items():
                figure.amounts[name] = figure.amounts.get(name, 0) + value

    @contextmanager
    def timed(self, metric: Metric, label: str) -> Iterator[dict[str, int]]:
        """Record the operation the ``with`` body runs, once it succeeded; the body puts
        its amounts in the dict it is given."""
        amounts: dict[str, int] = {}
        started = time.perf_counter()
        yield amounts
        self.record(metric, label, time.perf_counter() - started, **amounts)

    def figures(self) -> list[tuple[Metric, str, Figure]]:
        """A copy of every figure recorded, in :data:`METRICS` order then by label."""
        with self._lock:
            copied = {key: Figure(f.count, f.seconds, dict(f.amounts)) for key, f in self._figures.items()}
        return [(m, label, copied[(m.name, label)]) for m in METRICS for (name, label) in sorted(copied) if name == m.name]

    def get(self, metric: Metric, label: str) -> Figure:
        """The figure of ``metric`` by ``label`` (zeros when nothing was recorded)."""
        with self._lock:
            f = self._figures.get((metric.name, label))
            return Figure(f.count, f.seconds, dict(f.amounts)) if f is not None else Figure()
