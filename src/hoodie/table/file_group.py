"""File groups and file slices (value types)."""
from __future__ import annotations

from dataclasses import dataclass, field

from hoodie.layout import BaseFileName, LogFileName


@dataclass(frozen=True)
class BaseFile:
    path: str
    name: BaseFileName
    size: int

    @property
    def file_name(self) -> str:
        return self.name.name

    @property
    def file_id(self) -> str:
        return self.name.file_id

    @property
    def instant(self) -> str:
        return self.name.instant


@dataclass(frozen=True)
class LogExtent:
    """Bytes ``[start, end)`` of a log file that the completed ``instant`` wrote."""

    start: int
    end: int
    instant: str


@dataclass(frozen=True)
class LogFile:
    path: str
    name: LogFileName
    size: int
    # what completed delta commits wrote into it (from their write stats; empty when
    # unknown): a corrupt block there is damage, not the torn tail of a failed writer
    committed: tuple[LogExtent, ...] = ()

    @property
    def file_name(self) -> str:
        return self.name.name

    def committed_end(self) -> LogExtent | None:
        """The committed extent that reaches furthest into the file, or None."""
        return max(self.committed, key=lambda e: e.end, default=None)

    def committed_within(self, start: int, end: int) -> LogExtent | None:
        """A committed extent overlapping bytes ``[start, end)``, or None."""
        return next((e for e in self.committed if e.start < end and start < e.end), None)


@dataclass(frozen=True)
class FileSlice:
    """A base file and the log files written on top of it, identified by its base instant."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None
    log_files: tuple[LogFile, ...] = ()

    @property
    def total_size(self) -> int:
        return (self.base_file.size if self.base_file else 0) + sum(lf.size for lf in self.log_files)


@dataclass(frozen=True)
class FileGroup:
    """All slices of one file id in one partition, oldest first."""

    partition_path: str
    file_id: str
    slices: tuple[FileSlice, ...] = field(default_factory=tuple)

    @property
    def latest_slice(self) -> FileSlice | None:
        return self.slices[-1] if self.slices else None
