"""Why a table service did nothing: the value a service returns instead of a result.

A service that decides not to run (nothing to clean, too few commits to archive, the table
already at the savepoint) says so with a :class:`ServiceDecision` rather than silently
returning ``None``, so that callers and ``hoodie explain`` can show the reason.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServiceDecision:
    """``service`` did not run, because ``reason``."""

    service: str
    reason: str

    @property
    def ran(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"{self.service}: {self.reason}"
