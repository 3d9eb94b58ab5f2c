"""One pending compaction run in an OS process of its own (``python -m
hoodie.services.compaction_process``), as Apache Hudi runs async compaction as a job of its
own: its merging takes neither the interpreter nor the threads of the process that writes
the batches.

:func:`compact_pending` is the run itself, the same in a thread or in the child: the
compaction's completion (its metadata-table records and completed instant) is made under
the table's commit lock (``timeline/write_claims.py``), which every write's commit takes
too, so across processes a completion and a commit exclude each other. A write that saw
the compaction pending appended its logs to the slices after it and is no conflict of it
(``writer/transaction.py``).

:class:`CompactionProcess` is the parent's handle. The request goes to the child on its
standard input, as one line of JSON (table path, options, instant, log level); the child
answers with one line of JSON on its standard output (its error pickled, when it failed)
and logs to the parent's standard error. A thread of the parent (not a daemon) waits for
the answer and the exit, so an interpreter that ends waits for a running compaction, as it
waits for a compaction thread. The parent keeps the child's standard input open: if the
parent dies outright, the child sees it closed, logs that it goes on alone, finishes the
compaction (whose completion excludes any other writer's commit by the lock) and exits. A
child that dies midway (killed) leaves the compaction pending; the next run rolls the
attempt back and runs it again.
"""
from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from hoodie.config.options import HoodieConfig
from hoodie.engine import Engine
from hoodie.errors import HoodieError
from hoodie.services.compaction import run_compaction
from hoodie.services.inline import compaction_settings
from hoodie.services.opening import open_for_services
from hoodie.timeline.write_claims import commit_lock

log = logging.getLogger(__name__)

MODULE = "hoodie.services.compaction_process"


def compact_pending(path: str, options: Mapping[str, Any], instant: str, engine: Engine | None = None) -> None:
    """Run the pending compaction ``instant`` of the table at ``path`` to its completion,
    which is made under the table's commit lock (a failed attempt is rolled back first)."""
    settings = compaction_settings(HoodieConfig.of(options))
    table = open_for_services(path, options)
    run_compaction(table, instant, settings, engine, completing=lambda: commit_lock(table.storage, table.base_path, f"compaction-{instant}"))


class CompactionProcess:
    """A child process running :func:`compact_pending`; ``on_exit`` is called (on a thread
    of this process) with None once it completed the compaction, or with the error it
    failed with (its own, or one saying how the process ended). ``niceness``: added to the
    child's (Unix) scheduling niceness, so that the writer's process gets the cores first
    when both want them."""

    def __init__(
        self, path: str, options: Mapping[str, Any], instant: str, on_exit: Callable[[BaseException | None], None], niceness: int = 0
    ) -> None:
        self.path, self.instant, self._on_exit = path, instant, on_exit
        env = dict(os.environ)
        # the child imports hoodie from where this process does
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        level = logging.getLogger("hoodie").getEffectiveLevel()
        # made before the child starts: options that cannot be sent leave no child waiting for them
        request = json.dumps({"path": path, "options": dict(options), "instant": instant, "log_level": level, "niceness": niceness}).encode()
        self._proc = subprocess.Popen([sys.executable, "-m", MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        stdin = self._proc.stdin
        assert stdin is not None and self._proc.stdout is not None
        try:
            stdin.write(request + b"\n")
            stdin.flush()  # and kept open: its end tells the child this process has gone
        except BrokenPipeError:
            pass  # the child ended already: how is what the follower reports
        self._follower = threading.Thread(target=self._follow, name=f"hoodie-compaction-{instant}")
        self._follower.start()  # not a daemon: an ending interpreter waits for the compaction

    @property
    def pid(self) -> int:
        return self._proc.pid

    def alive(self) -> bool:
        """Whether the process runs, or its end is not handled yet."""
        return self._follower.is_alive()

    def join(self, timeout: float | None = None) -> None:
        self._follower.join(timeout)

    def _follow(self) -> None:
        stdout, stdin = self._proc.stdout, self._proc.stdin
        assert stdout is not None and stdin is not None
        answer = stdout.read()
        code = self._proc.wait()
        stdout.close()
        stdin.close()
        try:
            error = self._outcome(answer, code)
        except Exception as e:  # an answer that cannot be read is the compaction's failure
            error = e
        self._on_exit(error)

    def _outcome(self, answer: bytes, code: int) -> BaseException | None:
        where = f"compaction {self.instant} of {self.path} (process {self._proc.pid})"
        if code < 0:
            return HoodieError(f"{where} was killed by {signal.Signals(-code).name}; it stays pending and runs again")
        lines = answer.splitlines()
        if not lines:
            return HoodieError(f"{where} exited with status {code} without an answer; it stays pending and runs again")
        result = json.loads(lines[-1])
        if result.get("ok"):
            if code == 0:
                return None
            return HoodieError(f"{where} answered that it completed but exited with status {code}; the timeline says whether it did")
        try:
            error = pickle.loads(base64.b64decode(result["pickled"]))
        except Exception:
            error = None
        if isinstance(error, BaseException):
            return error
        return HoodieError(f"{where} failed: {result.get('error')}: {result.get('message')}")


def _watch_parent(instant: str, path: str, parent: int) -> None:
    """Log once the parent has gone (it keeps our standard input open while it lives)."""
    while os.read(0, 65536):  # the descriptor, not sys.stdin: no buffer lock held at exit
        pass
    log.warning("the process that started compaction %s of %s (pid %d) has ended: the compaction goes on to its end alone", instant, path, parent)


def main() -> int:
    """The child: read the request, run the compaction, answer on the original stdout."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything else printed goes to the standard error the parent shares
    request = json.loads(sys.stdin.buffer.readline())
    if int(request.get("niceness", 0)) > 0:
        os.nice(int(request["niceness"]))
    instant, path = str(request["instant"]), str(request["path"])
    logging.basicConfig(level=int(request.get("log_level", logging.WARNING)), format=f"%(asctime)s compaction {instant} %(levelname)s %(name)s: %(message)s")
    threading.Thread(target=_watch_parent, args=(instant, path, os.getppid()), daemon=True).start()
    try:
        compact_pending(path, request["options"], instant)
        result: dict[str, Any] = {"ok": True}
    except Exception as e:
        log.warning("compaction %s of %s failed: %s: %s", instant, path, type(e).__name__, e)
        result = {"ok": False, "error": type(e).__name__, "message": str(e)}
        with contextlib.suppress(Exception):  # if it does not pickle, its type and message say it
            result["pickled"] = base64.b64encode(pickle.dumps(e)).decode()
    try:
        answers.write(json.dumps(result) + "\n")
        answers.close()
    except BrokenPipeError:
        pass  # the parent has gone: nobody to tell
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
