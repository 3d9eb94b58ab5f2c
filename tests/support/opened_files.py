"""Local storage that remembers every file pyarrow opened through it (a Parquet footer, a
column read): what tagging or a read touched, beyond the counts by kind."""
from __future__ import annotations

import pyarrow.fs as pafs

from hoodie.storage.local import LocalStorage


class OpenedFiles(LocalStorage):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def check_file(self, path: str) -> None:
        self.opened.append(path)
        super().check_file(path)


class _RecordingHandler(pafs.FSSpecHandler):
    """Arrow's view of the local file system that appends the path of every file it
    opens for reading to a log file (a file, so that copies of the storage pickled into
    an engine's plan, and the engine's threads, record to the same place)."""

    def __init__(self, log: str) -> None:
        import fsspec

        super().__init__(fsspec.filesystem("file"))
        self.log = log

    def __reduce__(self):
        return (_RecordingHandler, (self.log,))

    def _record(self, path: str) -> None:
        with open(self.log, "a") as f:
            f.write(path + "\n")

    def open_input_file(self, path: str):
        self._record(path)
        return super().open_input_file(path)

    def open_input_stream(self, path: str):
        self._record(path)
        return super().open_input_stream(path)


class ArrowOpenedFiles(LocalStorage):
    """Local storage whose pyarrow file system records every file opened through it:
    what an engine scanning a table's dataset (or a read) actually opened, Parquet
    fragments and merged slices' files alike."""

    def __init__(self, log: str) -> None:
        super().__init__()
        self.log = log
        open(log, "a").close()

    def __getstate__(self) -> dict:
        return {"log": self.log}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["log"])  # type: ignore[misc]

    def arrow_filesystem(self) -> tuple[pafs.FileSystem, str]:
        return pafs.PyFileSystem(_RecordingHandler(self.log)), "file://"

    def opened(self) -> list[str]:
        with open(self.log) as f:
            return [line.rstrip("\n") for line in f if line.strip()]

    def forget(self) -> None:
        open(self.log, "w").close()
