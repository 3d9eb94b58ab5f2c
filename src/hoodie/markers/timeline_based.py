"""Reading timeline-server-based markers: ``MARKERS.type`` plus ``MARKERS<n>`` files, each
listing marker names one per line (what Java's embedded timeline server writes)."""
from __future__ import annotations

from hoodie.storage.base import Storage


def read_batched_markers(storage: Storage, marker_dir: str) -> list[str]:
    names: list[str] = []
    for info in storage.list_dir(marker_dir):
        if info.is_dir or not info.name.startswith("MARKERS") or info.name == "MARKERS.type":
            continue
        text = storage.read_bytes(info.path).decode("utf-8")
        names.extend(line.strip() for line in text.splitlines() if line.strip())
    return names
