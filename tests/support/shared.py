"""Test helper: where the shared conformance data lives: ``<repo>/../shared``, or the
folder ``HOODIE_SHARED_DIR`` names; and the single skipped case a test parametrized over
that data gets when there is none (with the reason, not pytest's "got empty parameter set")."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest


def shared_dir() -> Path:
    env = os.environ.get("HOODIE_SHARED_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared"


def no_conformance_reason(what: str = "tables") -> str:
    """Why a test over the conformance ``what`` has no case: the folder is missing, or it
    holds none of them."""
    root = shared_dir() / "conformance"
    if not root.is_dir():
        return f"no conformance {what}: {root} not found (set HOODIE_SHARED_DIR)"
    return f"no conformance {what} under {root}"


def cases_or_skip(cases: Sequence[Any], ids: Sequence[str], what: str = "tables", argcount: int = 1) -> list[Any]:
    """``cases`` as ``pytest.param``s with their ids, or, when there are none, one case
    skipped with :func:`no_conformance_reason`. With ``argcount`` > 1 each case is a tuple
    of that many values (one per argname)."""
    if cases:
        return [pytest.param(*(c if argcount > 1 else (c,)), id=i) for c, i in zip(cases, ids)]
    skip = pytest.mark.skip(reason=no_conformance_reason(what))
    return [pytest.param(*([None] * argcount), id="no-conformance-data", marks=skip)]
