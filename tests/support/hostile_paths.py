"""Test helper: partition values that must never become paths outside a table, and a
byte-level picture of a folder tree to prove that nothing around a table changed."""
from __future__ import annotations

import hashlib
from pathlib import Path

#: Partition values refused whatever the options (encoding cannot make them safe).
ALWAYS_REFUSED = {
    "dot-dot": "..",
    "dot": ".",
    "nul": "a\x00b",
    "too-long": "x" * 300,
    "metadata-folder": ".hoodie",
}

#: Partition values refused unless hoodie.datasource.write.partitionpath.urlencode=true,
#: which turns them into one safe folder name.
REFUSED_UNLESS_ENCODED = {
    "neighbour": "../b/y",
    "absolute": "/abs",
    "climb-out": "x/../..",
    "two-up": "../../escape",
    "empty-segment": "a//b",
    "trailing-slash": "a/",
    "newline": "a\nb",
}

HOSTILE = {**ALWAYS_REFUSED, **REFUSED_UNLESS_ENCODED}


def tree_state(root: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``root`` with its size and content digest, and every folder."""
    out: dict[str, tuple[int, str]] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_dir():
            out[rel + "/"] = (0, "")
        else:
            data = p.read_bytes()
            out[rel] = (len(data), hashlib.sha256(data).hexdigest())
    return out
