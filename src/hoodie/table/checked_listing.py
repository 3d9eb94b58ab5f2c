"""A lister checked against storage (``hoodie.metadata.validate=true``): every answer of a
table's metadata table is compared with a listing of storage, and a difference is a
:class:`~hoodie.errors.MetadataOutOfSyncError` naming the partition and the files.

Storage holds more than a metadata table ever lists, and that is no difference: folders,
partition metadata files, and the files of instants that have not completed (a write in
flight, a failed one not rolled back yet). So a file on storage the metadata table lacks
counts only when a completed instant must have written it: a base file of a committed
instant, or a log file while no instant is pending (a log file names the slice it
extends, not the instant that appended to it). A file the metadata table lists that
storage lacks counts unless a clean, rollback or restore is under way (it deletes before
it completes). Sizes must agree for base files; a log file may have grown on storage (an
append in flight), never shrunk. Read-only: listings go through a storage view
(:class:`~hoodie.table.fs_view.FileSystemView`), the one place partitions are listed.
Each comparison is reported to ``on_check`` (``partitions`` or ``files``, the seconds
its storage listing and comparison took, the differences found) before any is raised.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from hoodie.errors import MetadataOutOfSyncError
from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.table.fs_view import FileSystemView, PartitionLister
from hoodie.timeline.instant import Action

_DELETERS = (Action.CLEAN, Action.ROLLBACK, Action.RESTORE)
_SHOWN = 20  # files a message names at most per kind of difference
#: ``on_check(kind, seconds, differences)``: one comparison done
CheckReport = Callable[[str, float, int], None]


class CheckedLister:
    """``lister``'s answers, each compared with what ``storage_view`` (a view listing
    storage, of the same timeline) lists."""

    def __init__(self, lister: PartitionLister, storage_view: FileSystemView, what: str, on_check: CheckReport | None = None) -> None:
        self.lister = lister
        self.storage_view = storage_view
        self.what = what  # the lister, as messages name it ("the metadata table")
        self.on_check = on_check
        pending = [i for i in storage_view.timeline.instants if not i.is_completed]
        self._instant_pending = bool(pending)
        self._deleting = any(i.action in _DELETERS for i in pending)

    def all_partition_paths(self) -> list[str]:
        listed = self.lister.all_partition_paths()
        started = time.perf_counter()
        on_storage = self.storage_view.all_partition_paths()
        problems = []
        if not self._deleting and (gone := sorted(set(listed) - set(on_storage))):
            problems.append(f"partitions {_named(gone)} are listed by {self.what}, not on storage")
        unknown = [p for p in sorted(set(on_storage) - set(listed)) if self._must_know(self._stored(p))]
        if unknown:
            problems.append(f"partitions {_named(unknown)} hold committed files on storage and are missing from {self.what}")
        self._raise("partitions", started, problems)
        return listed

    def files_in_many(self, partitions: Iterable[str]) -> dict[str, dict[str, int]]:
        listed = self.lister.files_in_many(partitions)
        started = time.perf_counter()
        problems = []
        for partition, files in sorted(listed.items()):
            problems.extend(self._differences(partition, files, self._stored(partition)))
        self._raise("files", started, problems)
        return listed

    def _stored(self, partition: str) -> dict[str, int]:
        """The data files storage holds in ``partition`` (base and log files)."""
        return {
            f.name: f.size for f in self.storage_view.partition_files(partition)
            if parse_base_file_name(f.name) is not None or parse_log_file_name(f.name) is not None
        }

    def _must_know(self, stored: dict[str, int]) -> list[str]:
        """The files of ``stored`` that completed instants wrote, as far as a listing tells."""
        out = []
        for name in sorted(stored):
            base = parse_base_file_name(name)
            if base is not None:
                if self.storage_view.is_committed(base.instant):
                    out.append(name)
            elif not self._instant_pending:
                out.append(name)
        return out

    def _differences(self, partition: str, listed: dict[str, int], stored: dict[str, int]) -> list[str]:
        where = f"partition {partition!r}"
        out = []
        if not self._deleting and (gone := sorted(listed.keys() - stored.keys())):
            out.append(f"{where}: {_named(gone)} listed by {self.what}, not on storage")
        unknown = self._must_know({n: s for n, s in stored.items() if n not in listed})
        if unknown:
            out.append(f"{where}: {_named(unknown)} on storage, missing from {self.what}")
        for name in sorted(listed.keys() & stored.keys()):
            size, on_disk = listed[name], stored[name]
            grown_log = parse_log_file_name(name) is not None and on_disk > size
            if size != on_disk and not grown_log:
                out.append(f"{where}: {name} is {size} bytes in {self.what} and {on_disk} bytes on storage")
        return out

    def _raise(self, kind: str, started: float, problems: list[str]) -> None:
        if self.on_check is not None:
            self.on_check(kind, time.perf_counter() - started, len(problems))
        if problems:
            raise MetadataOutOfSyncError(
                f"{self.what} of {self.storage_view.base_path} is out of sync with storage: {'; '.join(problems)} "
                "(hoodie.metadata.validate=true compares it with storage; hoodie.metadata.enable=false lists storage instead)"
            )


def _named(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_SHOWN])
    return shown if len(names) <= _SHOWN else f"{shown} and {len(names) - _SHOWN} more"
