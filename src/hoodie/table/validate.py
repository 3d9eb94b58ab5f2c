"""Check the files a table's latest slices read against what its commits say they wrote.

``hoodie validate PATH`` runs :func:`validate_table`. For every partition of the view (and
every partition a completed write of the active timeline wrote into, listed or not) it
reports, without reading any data:

* **missing**: a base or log file a completed instant wrote, that the latest slices need,
  and that storage no longer has (found by the listing, or, on a table listed through its
  metadata table, when the file is opened for the other checks);
* **size**: a base file whose size differs from its write stat's ``fileSizeInBytes``;
* **unreadable**: a base file whose Parquet footer cannot be decoded;
* **truncated**: a log file shorter than the bytes completed delta commits wrote into it;
* **corrupt**: a log block that does not frame where a completed delta commit wrote.

A torn block after the committed bytes (left by a failed writer, skipped by readers as
Java skips it) is not a problem. The commits archival moved off the active timeline are
read from the archived timeline (:func:`hoodie.table.archived.archived_commits`), so a
file only they wrote is checked like any other: the latest base file of a file group
they alone wrote, or a whole partition only they wrote into, gone from storage is
**missing** (reads do not read the archive, and miss it). Read-only.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.formats.log import CorruptBlock, LogFileReader
from hoodie.storage.base import arrow_path
from hoodie.table.archived import archived_commits
from hoodie.table.file_group import BaseFile, FileSlice, LogFile
from hoodie.table.fs_view import FileSystemView
from hoodie.table.table import HoodieTable

_GONE = "written by a completed instant, gone from storage"


@dataclass(frozen=True)
class FileProblem:
    """One damaged file: where, which instant wrote it, what is wrong."""

    partition_path: str
    file_name: str
    instant: str
    kind: str  # missing, size, unreadable, truncated, corrupt
    detail: str


@dataclass(frozen=True)
class ValidationReport:
    base_path: str
    as_of: str | None
    files_checked: int
    problems: tuple[FileProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_table(table: HoodieTable, as_of: str | None = None, on_slice: Callable[[FileSlice], None] | None = None) -> ValidationReport:
    """Check every file of the latest slices (as of ``as_of``) of ``table``;
    ``on_slice`` is called after each slice (progress)."""
    view = table.local_view(as_of, ignore_missing_files=True, archived=archived_commits(table, as_of))
    slices = view.latest_slices_all()
    problems = [FileProblem(m.partition_path, m.file_name, m.instant, "missing", _GONE) for m in view.missing]
    checked = 0
    for s in slices:
        if s.base_file is not None:
            checked += 1
            problems.extend(_base_problems(table, view, s, s.base_file))
        for lf in s.log_files:
            checked += 1
            problems.extend(_log_problems(table, s, lf))
        if on_slice is not None:
            on_slice(s)
    problems.sort(key=lambda p: (p.partition_path, p.file_name, p.kind))
    return ValidationReport(table.base_path, as_of, checked + len(view.missing), tuple(problems))


def _base_problems(table: HoodieTable, view: FileSystemView, s: FileSlice, base: BaseFile) -> list[FileProblem]:
    committed = view.committed.partition(s.partition_path).bases.get(s.file_id)
    instant = committed.instant if committed is not None and committed.file_name == base.file_name else base.instant
    out = []
    if committed is not None and committed.file_name == base.file_name and committed.size and committed.size != base.size:
        out.append(FileProblem(s.partition_path, base.file_name, instant, "size", f"{base.size} bytes; its commit wrote {committed.size}"))
    fs, path = arrow_path(table.storage, base.path)
    try:
        with fs.open_input_file(path) as f:
            pq.ParquetFile(f).metadata  # noqa: B018  (decoding the footer is the check)
    except FileNotFoundError:
        # listed by the metadata table, gone from storage
        return [FileProblem(s.partition_path, base.file_name, instant, "missing", _GONE)]
    except (pa.ArrowInvalid, OSError) as e:
        out.append(FileProblem(s.partition_path, base.file_name, instant, "unreadable", " ".join(str(e).split())))
    return out


def _log_problems(table: HoodieTable, s: FileSlice, lf: LogFile) -> list[FileProblem]:
    if not lf.committed:
        return []
    out = []
    furthest = lf.committed_end()
    assert furthest is not None
    try:
        reader = LogFileReader(table.storage, lf.path)
    except FileNotFoundError:  # listed by the metadata table, gone from storage
        return [FileProblem(s.partition_path, lf.file_name, furthest.instant, "missing", _GONE)]
    with reader:
        if reader.size < furthest.end:
            out.append(
                FileProblem(s.partition_path, lf.file_name, furthest.instant, "truncated", f"{reader.size} bytes; its commits wrote up to byte {furthest.end}")
            )
        for found in reader.scan():
            if not isinstance(found, CorruptBlock):
                continue
            end = found.offset + found.length
            hit = lf.committed_within(found.offset, end)
            if hit is not None:
                out.append(FileProblem(s.partition_path, lf.file_name, hit.instant, "corrupt", f"bytes {found.offset}-{end}: {found.reason}"))
    return out
