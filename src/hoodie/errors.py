"""Errors raised by hoodie.

Every error a user can meet derives from :class:`HoodieError`; its message names the
offending value (the option, key, path or instant) so that the cause is visible without a
debugger. This module holds no logic.

::

    HoodieError
    ├── ConfigError              unknown option, bad option value, missing required option
    ├── TableError               no table at a path, a different table at a path, bad table config
    │   ├── UnsupportedTableError    table version / feature hoodie cannot read or write
    │   └── DamagedTableError        a file a completed instant wrote is missing, truncated or corrupt
    │       └── MetadataOutOfSyncError   the metadata table disagrees with storage or the timeline
    ├── UnsafePathError          a path from data or table metadata would leave the table, or a link inside it
    ├── TimelineError            instant transitions, missing or conflicting instants
    │   └── InstantNotFoundError     a requested instant is not on the timeline
    ├── StorageError             a storage operation failed
    │   └── FileAlreadyExistsError   a write-once file already exists
    ├── FormatError              a data file, log block or metadata file cannot be decoded
    ├── SchemaError              a batch's schema does not fit the table's schema
    ├── TableServiceError        a table service run inline after a commit failed (the commit stands)
    ├── RecordError              a record is unusable: null/empty key, missing field
    │   └── PartitionPathError       a partition value that cannot be a path under the table
    └── WriteError               a write could not be committed
        └── ConcurrentWriteError     another writer rolled the write back as failed
"""
from __future__ import annotations

from collections.abc import Sequence


class HoodieError(Exception):
    """Base of every hoodie error."""


class ConfigError(HoodieError):
    """An option is unknown, malformed or missing."""


class TableError(HoodieError):
    """The table at a path is missing, different from what was asked, or misconfigured."""


class UnsupportedTableError(TableError):
    """The table uses a version or feature that hoodie does not support."""


class DamagedTableError(TableError):
    """A file that a completed instant wrote, and that a read or service needs, is missing,
    shorter than its commit says, or corrupt where the commit wrote it."""


class MetadataOutOfSyncError(DamagedTableError):
    """The metadata table disagrees with its data table: it lists partitions or files that
    storage does not hold as the completed instants left them, or lacks some it does, or
    it lacks instants the data table completed after it began (a writer that does not
    maintain it wrote them; ``instants`` names those, oldest first). What it says is
    stale."""

    def __init__(self, message: str, instants: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.instants = tuple(instants)


class UnsafePathError(HoodieError):
    """A path built from a data value or from table metadata would leave the table's base
    path (absolute, ``..`` or ``.`` segments, empty segments, control characters, or a
    segment too long for a file system), or a local path passes through a symbolic link
    inside a table."""


class RequestError(HoodieError):
    """A request to the timeline server lacks a parameter its endpoint requires, or gives
    one a value of the wrong kind; the message names the parameter and the value."""


class TimelineError(HoodieError):
    """An instant could not be created, transitioned or found."""


class InstantNotFoundError(TimelineError):
    """A requested instant is not (or no longer) on the active timeline."""


class StorageError(HoodieError):
    """A storage operation failed."""


class FileAlreadyExistsError(StorageError):
    """A write-once file already exists."""


class FormatError(HoodieError):
    """A file or block cannot be decoded."""


class SchemaError(HoodieError):
    """Incoming data does not match the table schema."""


class TableServiceError(HoodieError):
    """A table service (compaction, clean, archive) that a write runs inline after its
    commit failed. The commit stands: ``instant`` is the committed write, ``service`` the
    service that failed; the original error is the ``__cause__``."""

    def __init__(self, service: str, instant: str, cause: BaseException) -> None:
        super().__init__(f"write {instant} committed, but its inline {service} failed: {type(cause).__name__}: {cause}")
        self.service = service
        self.instant = instant


class RecordError(HoodieError):
    """A record cannot be written as given (null key, missing field, ...)."""


class PartitionPathError(RecordError):
    """A partition value cannot be a path under the table; names the value, field and key."""


class WriteError(HoodieError):
    """A write could not be completed."""


class ConcurrentWriteError(WriteError):
    """Another writer found this write's instant pending, took it for a failed write and
    rolled it back: a table takes one writer at a time. Nothing of the write was committed."""
