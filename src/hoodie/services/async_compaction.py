"""Asynchronous compaction beside a streaming writer: after each of the writer's batches, a
merge-on-read table's pending compaction, or one newly scheduled when due
(``hoodie.compact.inline.max.delta.commits``), is started, at most one at a time, and
runs while the next batches are written.

Where it runs: with the in-process engine, in an OS process of its own
(:mod:`hoodie.services.compaction_process`), so that its merging does not compete with the
batches for this interpreter; with an engine of this process (Spark's, for the streaming
sink), on a background thread through that engine. A table whose storage other processes
cannot see (``memory://``) compacts on a thread too.

Batches keep committing while it runs: a batch that saw the compaction pending appends its
logs to the slices after it, and the compaction's completion is made under the table's
commit lock, which each batch's commit takes too. A failed compaction (or a killed
process) is a warning and :attr:`AsyncCompactor.last_error`: the batches go on, and the
next :meth:`AsyncCompactor.after_batch` runs the pending compaction again (a failed
attempt rolled back first). :meth:`AsyncCompactor.close` (or leaving it as a context
manager) waits for a running compaction; an ending interpreter waits for it too.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from hoodie.config.options import HoodieConfig
from hoodie.engine import Engine
from hoodie.errors import ConfigError
from hoodie.services.compaction import pending_compactions, schedule_compaction
from hoodie.services.compaction_process import CompactionProcess, compact_pending
from hoodie.services.inline import compaction_settings
from hoodie.services.opening import open_for_services

log = logging.getLogger(__name__)

MERGE_ON_READ = "MERGE_ON_READ"
# storage that lives in this process only: a child process would see another (empty) one
_PROCESS_LOCAL_PROTOCOLS = ("memory://",)


def shared_with_other_processes(path: str) -> bool:
    """Whether another process of this machine sees the table at ``path`` as this one does."""
    return not path.startswith(_PROCESS_LOCAL_PROTOCOLS)


class AsyncCompactor:
    """The streaming writes of one table in this process and its asynchronous compaction.

    ``engine`` runs the compaction's tasks on a thread of this process; without one, the
    compaction runs in a process of its own (``separate_process``, by default when the
    table's storage is shared with other processes). ``lock`` takes the batches of this
    process's writers of the table one at a time (two streaming queries of one table
    share the compactor). :meth:`after_batch` (called after a batch committed) starts a
    compaction unless one runs. ``niceness`` (a separate process only, 0 to 19): how much
    lower the compaction process's CPU priority is than this one's, so that on a machine
    whose cores the batches keep busy they keep them and the compaction takes what is left;
    the price is a compaction that may fall behind the batches (each batch adds logs to
    merge)."""

    def __init__(
        self, path: str, options: Mapping[str, Any], engine: Engine | None = None, separate_process: bool | None = None, niceness: int = 0
    ) -> None:
        if separate_process and engine is not None:
            raise ConfigError(f"the compaction of {path} cannot run in a process of its own through an engine of this one ({type(engine).__name__})")
        if not 0 <= niceness <= 19:
            raise ConfigError(f"the niceness of a compaction process is 0 to 19 (Unix), got {niceness}")
        self.path = path
        self.niceness = niceness
        self.options = dict(options)
        self.engine = engine
        self.separate_process = (engine is None and shared_with_other_processes(path)) if separate_process is None else separate_process
        if niceness and not self.separate_process:
            raise ConfigError(f"a niceness of {niceness} needs the compaction of {path} in a process of its own: it would slow this process too")
        self.lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._process: CompactionProcess | None = None
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
        if self.separate_process:
            self._process = CompactionProcess(self.path, self.options, instant, lambda error: self._finished(instant, error), self.niceness)
        else:
            self._thread = threading.Thread(target=self._run_here, args=(instant,), name=f"hoodie-compaction-{instant}")
            self._thread.start()  # not a daemon: an ending application lets a compaction finish
        return instant

    def running(self) -> bool:
        return (self._thread is not None and self._thread.is_alive()) or (self._process is not None and self._process.alive())

    @property
    def process_id(self) -> int | None:
        """The OS process id of the running compaction's process, if one runs."""
        process = self._process
        return process.pid if process is not None and process.alive() else None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running compaction, if any; whether none runs any more."""
        if self._thread is not None:
            self._thread.join(timeout)
        if self._process is not None:
            self._process.join(timeout)
        return not self.running()

    def close(self, timeout: float | None = None) -> bool:
        """Wait for the running compaction (it is never abandoned midway); whether none
        runs any more."""
        return self.wait(timeout)

    def __enter__(self) -> AsyncCompactor:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()

    def _run_here(self, instant: str) -> None:
        try:
            compact_pending(self.path, self.options, instant, self.engine)
        except Exception as e:
            self._finished(instant, e)
        else:
            self._finished(instant, None)

    def _finished(self, instant: str, error: BaseException | None) -> None:
        self.last_error = error
        if error is None:
            log.info("async compaction %s of %s completed", instant, self.path)
        else:
            log.warning("async compaction %s of %s failed (the streaming writes go on; it runs again after a later batch): %s: %s",
                        instant, self.path, type(error).__name__, error)
