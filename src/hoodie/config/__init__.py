"""Typed configuration.

:mod:`hoodie.config.options` declares every option once (Hudi's own ``hoodie.*`` key,
type, default, aliases, doc); :class:`HoodieConfig` parses user options against it and
reports unknown ones. :mod:`hoodie.config.table_config` reads and writes
``.hoodie/hoodie.properties`` with its checksum.
"""
from __future__ import annotations

from hoodie.config.options import OPTIONS, HoodieConfig, Option
from hoodie.config.table_config import TableConfig

__all__ = ["HoodieConfig", "OPTIONS", "Option", "TableConfig"]
