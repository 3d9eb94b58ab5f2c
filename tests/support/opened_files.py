"""Local storage that remembers every file pyarrow opened through it (a Parquet footer, a
column read): what tagging or a read touched, beyond the counts by kind."""
from __future__ import annotations

from hoodie.storage.local import LocalStorage


class OpenedFiles(LocalStorage):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def check_file(self, path: str) -> None:
        self.opened.append(path)
        super().check_file(path)
