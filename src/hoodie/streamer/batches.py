"""What one streamer batch takes from its source: the plan both engines read.

A source (:mod:`~hoodie.streamer.dfs_source`, :mod:`~hoodie.streamer.incr_source`)
decides from the last committed checkpoint which files or which commits the next batch
takes and what the checkpoint is once that batch is committed; an engine (in process:
:mod:`~hoodie.streamer.arrow_engine`; Spark: ``hoodie.spark.streamer``) reads exactly
that. Plans are plain frozen data, so the same plan reads the same on either engine.
"""
from __future__ import annotations

from dataclasses import dataclass

# the formats of the file sources, as Hudi's JsonDFSSource, CsvDFSSource, ParquetDFSSource
# and AvroDFSSource read them (JSON: one object a line)
JSON, CSV, PARQUET, AVRO = "json", "csv", "parquet", "avro"
FILE_FORMATS = (JSON, CSV, PARQUET, AVRO)


@dataclass(frozen=True)
class SourceFile:
    """A file of a file source: its storage path, its name relative to the source's root
    (the checkpoint names it so), its size and modification time."""

    path: str
    name: str
    size: int
    mtime_ms: int


@dataclass(frozen=True)
class FilesBatch:
    """New files of a folder, in (modification time, name) order, read as ``file_format``
    (with the CSV header and separator); ``checkpoint`` is the position of the last one."""

    file_format: str
    files: tuple[SourceFile, ...]
    checkpoint: str
    csv_header: bool = True
    csv_sep: str = ","
    files_behind: int = 0  # files after the batch's last one, not taken yet
    bytes_behind: int = 0

    def describe(self) -> str:
        return f"{len(self.files)} {self.file_format} file{'s' if len(self.files) != 1 else ''}"

    def lag(self) -> str:
        return f"{self.files_behind} file{'s' if self.files_behind != 1 else ''} ({self.bytes_behind} bytes) behind"


@dataclass(frozen=True)
class InstantsBatch:
    """The changes a Hudi table's commits in ``(begin, end]`` made (an incremental pull);
    ``checkpoint`` is ``end``. ``drop_all_meta`` drops the pulled rows' meta columns,
    otherwise ``_hoodie_partition_path`` stays (Hudi's HoodieIncrSource)."""

    source_path: str
    begin: str
    end: str
    instants: tuple[str, ...]
    drop_all_meta: bool = False
    instants_behind: int = 0  # completed commits of the source after ``end``

    @property
    def checkpoint(self) -> str:
        return self.end

    def describe(self) -> str:
        return f"{len(self.instants)} commit{'s' if len(self.instants) != 1 else ''} of {self.source_path} ({self.begin}, {self.end}]"

    def lag(self) -> str:
        return f"{self.instants_behind} commit{'s' if self.instants_behind != 1 else ''} behind"


SourceBatch = FilesBatch | InstantsBatch
