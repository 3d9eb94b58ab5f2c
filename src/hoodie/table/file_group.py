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
class LogFile:
    path: str
    name: LogFileName
    size: int

    @property
    def file_name(self) -> str:
        return self.name.name


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
