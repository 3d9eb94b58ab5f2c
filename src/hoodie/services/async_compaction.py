"""Asynchronous compaction beside a streaming writer: after each of the writer's batches, a
merge-on-read table's pending compaction, or one newly scheduled when due
(``hoodie.compact.inline.max.delta.commits``), is started, at most one at a time, and
runs while the next batches are written.

Where it runs: with the in-process engine, in an OS process of its own
(:mod:`hoodie.services.compaction_process`, one that stays up for the compactions after),
so that its merging does not compete with the batches for this interpreter; with an engine of this process (Spark's, for the streaming
sink), on a background thread through that engine. A table whose storage other processes
cannot see (``memory://``) compacts on a thread too.

Batches keep committing while it runs: a batch that saw the compaction pending appends its
logs to the slices after it, and the compaction's completion is made under the table's
commit lock, which each batch's commit takes too. A failed compaction (or a killed
process) is a warning and :attr:`AsyncCompactor.last_error`: the batches go on, and the
next :meth:`AsyncCompactor.after_batch` runs the pending compaction again (a failed
attempt rolled back first). :meth:`AsyncCompactor.close` (or leaving it as a context
manager) waits for a running compaction and ends the process; an ending interpreter waits
for it too.
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
from hoodie.services.compaction_process import CompactionProcess, check_priority, compact_pending
from hoodie.services.inline import compaction_settings
from hoodie.table.table import HoodieTable

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
    compaction unless one runs; the process stays up for the next compactions until
    :meth:`close`. Its CPU priority (a separate process only): ``niceness`` (0 to 19, how
    much lower than this process's), or ``background`` (Linux's ``SCHED_IDLE``: it runs
    only on CPU time no process of normal priority wants, and yields a core at once to one
    that wakes up), so that on a machine whose cores the batches keep busy they keep them
    and the compaction takes what is left; the price is a compaction that may fall behind
    the batches (each batch adds logs to merge)."""

    def __init__(
        self,
        path: str,
        options: Mapping[str, Any],
        engine: Engine | None = None,
        separate_process: bool | None = None,
        niceness: int = 0,
        background: bool = False,
    ) -> None:
        if separate_process and engine is not None:
            raise ConfigError(f"the compaction of {path} cannot run in a process of its own through an engine of this one ({type(engine).__name__})")
        check_priority(niceness, background)
        self.path = path
        self.niceness = niceness
        self.background = background
        self.options = dict(options)
        self.engine = engine
        self.separate_process = (engine is None and shared_with_other_processes(path)) if separate_process is None else separate_process
        if (niceness or background) and not self.separate_process:
            priority = f"a niceness of {niceness}" if niceness else "a background priority"
            raise ConfigError(f"{priority} needs the compaction of {path} in a process of its own: it would slow this process too")
        self.lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._process: CompactionProcess | None = None
        self.last_error: BaseException | None = None

    def after_batch(self) -> str | None:
        """Schedule a compaction of a merge-on-read table when due (a pending one first)
        and start running it; the instant, or None when none was started."""
        if self.running():
            return None
        # scheduling completes nothing: the metadata table is checked (and its hook given)
        # by the compaction run itself (compact_pending), not again here after every batch
        table = HoodieTable.open(self.path)
        if table.table_type != MERGE_ON_READ:
            return None
        pending = pending_compactions(table)
        instant = pending[0][0].timestamp if pending else schedule_compaction(table, compaction_settings(HoodieConfig.of(self.options)))[0]
        if instant is None:
            return None
        if self.separate_process:
            if self._process is None or not self._process.usable():
                self._process = CompactionProcess(self.path, self.options, self.niceness, self.background)
            self._process.run(instant, lambda error: self._finished(instant, error))
        else:
            self._thread = threading.Thread(target=self._run_here, args=(instant,), name=f"hoodie-compaction-{instant}")
            self._thread.start()  # not a daemon: an ending application lets a compaction finish
        return instant

    def running(self) -> bool:
        return (self._thread is not None and self._thread.is_alive()) or (self._process is not None and self._process.busy())

    @property
    def process_id(self) -> int | None:
        """The OS process id of the running compaction's process, if one runs."""
        process = self._process
        return process.pid if process is not None and process.busy() else None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running compaction, if any; whether none runs any more."""
        if self._thread is not None:
            self._thread.join(timeout)
        if self._process is not None:
            self._process.join(timeout)
        return not self.running()

    def close(self, timeout: float | None = None) -> bool:
        """Wait for the running compaction (it is never abandoned midway), then end the
        compaction process; whether no compaction runs any more."""
        done = self.wait(timeout)
        if done and self._process is not None:
            self._process.close(timeout)
            self._process = None
        return done

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
