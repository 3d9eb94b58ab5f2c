"""The table services a write runs beside itself, as Apache Hudi's write client runs its
async cleaner (``hoodie.clean.async``): the clean starts on a thread of its own once the
write's instant exists, runs while the write tags and writes its files, and the write
waits for it after its commit, before its inline services (which then leave the clean
out). It cleans what it would have cleaned after the write's previous commit: the write's
own instant is pending, so no file it writes is the clean's to delete.

Only the starting and waiting are here; the clean is :func:`hoodie.services.cleaning.clean`.
"""
from __future__ import annotations

import logging
import threading

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.engine.base import Engine
from hoodie.errors import TableServiceError
from hoodie.services.cleaning import clean
from hoodie.services.inline import clean_settings, describe
from hoodie.table.table import HoodieTable

log = logging.getLogger(__name__)


def cleans_beside_write(config: HoodieConfig) -> bool:
    """Whether a write's clean runs beside it (``hoodie.clean.async``), not after it."""
    return bool(config.get(o.CLEAN_AUTOMATIC) and config.get(o.CLEAN_ASYNC))


class CleanBesideWrite:
    """The clean of ``table`` on a thread of its own, beside write ``instant``."""

    def __init__(self, table: HoodieTable, config: HoodieConfig, engine: Engine | None, instant: str) -> None:
        self.instant = instant
        self._settings = clean_settings(config)
        self._error: BaseException | None = None
        # its own views: the write's (a timeline server's, or listings the write shares) are the write's
        self._table = table.served_by(None)
        self._engine = engine
        self._thread = threading.Thread(target=self._run, name=f"hoodie-clean-beside-{instant}", daemon=False)
        self._thread.start()

    def _run(self) -> None:
        try:
            result = clean(self._table, self._settings, self._engine)
            log.debug("clean beside write %s: %s", self.instant, describe(result))
        except BaseException as e:  # handed to the write, which reports it
            self._error = e

    def wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise TableServiceError("clean", self.instant, self._error) from self._error
