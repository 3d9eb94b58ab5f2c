"""Direct markers: an empty file ``.hoodie/.temp/<instant>/<partition>/<file>.marker.<IO>``
created *before* each data file, so that a commit can remove files of failed or duplicate
task attempts and a rollback can find everything a failed write created.
"""
from __future__ import annotations

from dataclasses import dataclass

from hoodie.errors import FileAlreadyExistsError
from hoodie.layout import HOODIE_FOLDER, TEMP_FOLDER, marker_name, parse_marker_name
from hoodie.storage.base import Storage, join, relative_to

MARKERS_TYPE_FILE = "MARKERS.type"


@dataclass(frozen=True)
class MarkerEntry:
    partition_path: str
    file_name: str
    io_type: str

    @property
    def data_file_path(self) -> str:
        """Data file path relative to the table's base path."""
        return f"{self.partition_path}/{self.file_name}" if self.partition_path else self.file_name


@dataclass(frozen=True)
class DirectMarkers:
    """Marker files of one instant."""

    storage: Storage
    base_path: str
    instant: str

    @property
    def marker_dir(self) -> str:
        return join(self.base_path, HOODIE_FOLDER, TEMP_FOLDER, self.instant)

    def create(self, partition_path: str, data_file_name: str, io_type: str) -> None:
        path = join(self.marker_dir, marker_name(partition_path, data_file_name, io_type))
        try:
            self.storage.create_new(path, b"", durable=False)
        except FileAlreadyExistsError:
            pass  # a retried task attempt may create the same marker again

    def exists(self) -> bool:
        return self.storage.exists(self.marker_dir)

    def entries(self) -> list[MarkerEntry]:
        """Every marker of the instant (walks the marker directory, never the table)."""
        out: list[MarkerEntry] = []
        if self.storage.exists(join(self.marker_dir, MARKERS_TYPE_FILE)):
            from hoodie.writer.markers_timeline_based import read_batched_markers

            names = read_batched_markers(self.storage, self.marker_dir)
        else:
            names = []
            pending = [self.marker_dir]
            while pending:
                d = pending.pop()
                for info in self.storage.list_dir(d):
                    if info.is_dir:
                        pending.append(info.path)
                    else:
                        names.append(relative_to(info.path, self.marker_dir))
        for name in names:
            parsed = parse_marker_name(name)
            if parsed is not None:
                out.append(MarkerEntry(*parsed))
        return out

    def delete_all(self) -> None:
        self.storage.delete_dir(self.marker_dir)
