"""Test helper: where the shared conformance data lives: ``<repo>/../shared``, or the
folder ``HOODIE_SHARED_DIR`` names."""
from __future__ import annotations

import os
from pathlib import Path


def shared_dir() -> Path:
    env = os.environ.get("HOODIE_SHARED_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared"
