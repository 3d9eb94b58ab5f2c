"""Reading one base file as a picklable task: the columns a read needs, conformed to its
schema (cast, reordered, missing columns as nulls) on the executor, and optionally the
file's record-key footer. It reads; it never writes.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.engine import TaskContext
from hoodie.errors import DamagedTableError, FormatError
from hoodie.formats.bloom_footer import FooterIndex, read_footer_index
from hoodie.formats.conform import conform
from hoodie.storage.base import Storage, arrow_path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BaseFileTask:
    """Read one base file, conformed to ``schema``; picklable for Spark executors."""

    storage: Storage
    path: str
    schema: pa.Schema
    # Arrow decodes columns on its own threads: only when the tasks are fewer than the
    # engine's workers, else those threads would oversubscribe the cores
    use_threads: bool = False
    # a base file Parquet cannot decode is skipped with a warning (ignoreCorruptFiles)
    ignore_corrupt: bool = False


def read_base_file_task(task: BaseFileTask, ctx: TaskContext | None = None) -> pa.Table:
    """Run a :class:`BaseFileTask`: read the columns it needs and conform them."""
    return _read(task, with_footer=False)[0]


def read_base_file_and_footer(task: BaseFileTask) -> tuple[pa.Table, FooterIndex | None]:
    """:func:`read_base_file_task`, and the file's record-key footer (bloom filter, key
    range) from the same open: compaction carries the filter over to the file it writes."""
    return _read(task, with_footer=True)


def _read(task: BaseFileTask, with_footer: bool) -> tuple[pa.Table, FooterIndex | None]:
    fs, path = arrow_path(task.storage, task.path)
    task.storage.counters.bump("read")
    try:
        with fs.open_input_file(path) as f:
            pf = pq.ParquetFile(f)
            present = set(pf.schema_arrow.names)
            wanted = [n for n in task.schema.names if n in present]
            # Tasks usually run one per core; Arrow's own column threads would only
            # oversubscribe them (measured 7-15% slower over the 200-file benchmark).
            data = pf.read(columns=wanted, use_threads=task.use_threads)
            footer = read_footer_index(pf.metadata.metadata) if with_footer else None
    except FileNotFoundError as e:
        # the view named it (from listings, or the metadata table's records): a file the
        # table's instants wrote is gone, which is damage, never a read around it
        raise DamagedTableError(
            f"base file {task.path} is missing from storage, though the table's file listing names it; `hoodie validate` lists every damaged file"
        ) from e
    except (pa.ArrowInvalid, OSError) as e:
        if not task.ignore_corrupt:
            raise FormatError(f"cannot read base file {task.path}: {e}") from e
        log.warning("base file %s cannot be read (%s); reading around it (ignoreCorruptFiles)", task.path, e)
        return task.schema.empty_table(), None
    return conform(data, task.schema, task.path), footer
