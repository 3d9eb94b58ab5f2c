"""The values every index type shares: file references, settings and tag results."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FileRef:
    """The latest base file of a file group, as an index sees it."""

    file_id: str
    base_instant: str
    path: str


@dataclass(frozen=True)
class IndexSettings:
    index_type: str = "BLOOM"
    prune_by_ranges: bool = True


@dataclass(frozen=True)
class TagResult:
    """Per input key: position of the file in the ``files`` list holding it, or -1."""

    file_pos: np.ndarray  # int32
    files_checked: int
    keys_verified: int
