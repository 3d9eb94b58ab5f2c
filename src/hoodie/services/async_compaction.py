"""Asynchronous compaction beside a streaming writer: after each of the writer's batches, a
merge-on-read table's pending compaction, or one newly scheduled when due
(``hoodie.compact.inline.max.delta.commits``), runs on a background thread of this
process, at most one at a time, through the engine it is given (Spark's for the streaming
sink, the in-process one by default).

Batches keep committing while it runs; only the compaction's completion and a batch's
write exclude each other (``lock``). A failed compaction is a warning: the batches go on,
and the next :meth:`AsyncCompactor.after_batch` runs the pending compaction again.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from hoodie.config.options import HoodieConfig
from hoodie.engine import Engine
from hoodie.services.compaction import pending_compactions, run_compaction, schedule_compaction
from hoodie.services.inline import compaction_settings
from hoodie.services.opening import open_for_services

log = logging.getLogger(__name__)

MERGE_ON_READ = "MERGE_ON_READ"


class AsyncCompactor:
    """The streaming writes of one table in this process and its background compaction.

    ``lock`` is held by each batch's write and by the compaction's completion;
    :meth:`after_batch` (called after a batch committed) starts a compaction on a background
    thread unless one runs. ``engine`` runs the compaction's tasks (None: in process)."""

    def __init__(self, path: str, options: Mapping[str, Any], engine: Engine | None = None) -> None:
        self.path = path
        self.options = dict(options)
        self.engine = engine
        self.lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self.last_error: BaseException | None = None

    def after_batch(self) -> str | None:
        """Schedule a compaction of a merge-on-read table when due (a pending one first)
        and start running it; the instant, or None when none was started."""
        if self.running():
            return None
        table = open_for_services(self.path, self.options)
        if table.table_type != MERGE_ON_READ:
            return None
        pending = pending_compactions(table)
        instant = pending[0][0].timestamp if pending else schedule_compaction(table, compaction_settings(HoodieConfig.of(self.options)))[0]
        if instant is None:
            return None
        self._thread = threading.Thread(target=self._run, args=(instant,), name=f"hoodie-compaction-{instant}")
        self._thread.start()  # not a daemon: an ending application lets a compaction finish
        return instant

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running compaction, if any; whether none runs any more."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.running()

    def _run(self, instant: str) -> None:
        try:
            settings = compaction_settings(HoodieConfig.of(self.options))
            table = open_for_services(self.path, self.options)
            run_compaction(table, instant, settings, self.engine, completing=lambda: self.lock)
            self.last_error = None
            log.info("async compaction %s of %s completed", instant, self.path)
        except Exception as e:
            self.last_error = e
            log.warning("async compaction %s of %s failed (the streaming writes go on; it runs again after a later batch): %s: %s",
                        instant, self.path, type(e).__name__, e)
