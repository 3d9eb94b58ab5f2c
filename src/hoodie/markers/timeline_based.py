"""Timeline-server-based marker files: ``MARKERS.type`` (the text ``TIMELINE_SERVER_BASED``)
plus ``MARKERS0`` .. ``MARKERS<n-1>``, each listing marker names one per line, rewritten
whole when names are added (what Java's embedded timeline server writes, and hoodie's).

This module owns the file format (names, reading, rendering); who batches the names is the
timeline server's business, which markers exist is :mod:`hoodie.markers.direct`'s.
"""
from __future__ import annotations

from hoodie.errors import FormatError
from hoodie.layout import is_ascii_digits, parse_marker_name
from hoodie.storage.base import Storage
from hoodie.storage.paths import under

MARKERS_TYPE_FILE = "MARKERS.type"
TIMELINE_SERVER_BASED = "TIMELINE_SERVER_BASED"
_PREFIX = "MARKERS"


def markers_file_name(index: int) -> str:
    return f"{_PREFIX}{index}"


def markers_file_index(name: str) -> int | None:
    """The index of a ``MARKERS<n>`` file name, or None for any other name."""
    digits = name[len(_PREFIX) :] if name.startswith(_PREFIX) else ""
    return int(digits) if is_ascii_digits(digits) else None


def render_markers(names: list[str]) -> bytes:
    return "".join(f"{n}\n" for n in names).encode("utf-8")


def parse_markers_file(content: bytes, path: str, strict: bool = True) -> list[str]:
    """The marker names of one ``MARKERS<n>`` file. A line that is not a marker name (a
    truncated or corrupt file) is a :class:`~hoodie.errors.FormatError` naming the file and
    the line when ``strict``, else skipped (a rollback lists the partitions as well)."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as e:
        if strict:
            raise FormatError(f"marker file {path} is not UTF-8 text: {e}") from e
        text = content.decode("utf-8", "replace")
    names = []
    for number, line in enumerate(text.splitlines(), 1):
        name = line.strip()
        if not name:
            continue
        if parse_marker_name(name) is None:
            if strict:
                raise FormatError(f"marker file {path} line {number} is not a marker name: {name[:200]!r}")
            continue
        names.append(name)
    return names


def read_markers_file(storage: Storage, marker_dir: str, index: int, strict: bool = True) -> list[str]:
    path = under(marker_dir, markers_file_name(index))
    try:
        content = storage.read_bytes(path)
    except FileNotFoundError:
        return []
    return parse_markers_file(content, path, strict)
