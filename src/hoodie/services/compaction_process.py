"""Pending compactions run in an OS process of its own (``python -m
hoodie.services.compaction_process``), as Apache Hudi runs async compaction as a job of its
own: its merging takes neither the interpreter nor the threads of the process that writes
the batches.

:func:`compact_pending` is one run, the same in a thread or in the child: the compaction's
completion (its metadata-table records and completed instant) is made under the table's
commit lock (``timeline/write_claims.py``), which every write's commit takes too, so across
processes a completion and a commit exclude each other. A write that saw the compaction
pending appended its logs to the slices after it and is no conflict of it
(``writer/transaction.py``).

:class:`CompactionProcess` is the parent's handle of one child, which stays up for the
compactions of one table one after another (so each compaction after the first pays
neither an interpreter's start nor hoodie's imports). The child's scheduling priority is
set by the parent the moment the child is spawned, while its interpreter starts (so its
imports run at that priority too): a ``niceness`` added to the parent's, or
Linux's ``SCHED_IDLE`` policy (``background``: the child runs only on CPU time no process
of normal priority wants, and yields the core at once when one wakes up). A background
child leaves ``SCHED_IDLE`` for the lowest normal priority (niceness 19) while it holds the
table's commit lock to complete a compaction, where the system allows it: a holder that
runs only on idle CPU time would make the batches' commits wait for as long as other
processes keep every core busy.

The protocol, on the child's standard input and output: one line of JSON sets the child up
(table path, options, log level), then one line per compaction (its instant), each answered
with one line of JSON (its error pickled, when it failed). The child logs to the parent's
standard error. Per compaction, a thread of the parent (not a daemon) waits for the answer,
so an interpreter that ends waits for a running compaction, as it waits for a compaction
thread; an idle child is told to end (its standard input closed) when the interpreter ends
or :meth:`CompactionProcess.close` is called. If the parent dies outright, the child sees
its standard input closed: it logs that it goes on alone, finishes the compaction it runs
(whose completion excludes any other writer's commit by the lock) and exits. A child that
dies midway (killed) leaves the compaction pending; the next run rolls the attempt back and
runs it again, in a new child.
"""
from __future__ import annotations

import atexit
import base64
import contextlib
import json
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

from hoodie.config.options import HoodieConfig
from hoodie.engine import Engine
from hoodie.errors import ConfigError, HoodieError
from hoodie.services.compaction import run_compaction
from hoodie.services.inline import compaction_settings
from hoodie.services.opening import open_for_services
from hoodie.timeline.write_claims import commit_lock

log = logging.getLogger(__name__)

MODULE = "hoodie.services.compaction_process"
#: the highest niceness Unix knows
MAX_NICENESS = 19


def compact_pending(path: str, options: Mapping[str, Any], instant: str, engine: Engine | None = None) -> None:
    """Run the pending compaction ``instant`` of the table at ``path`` to its completion,
    which is made under the table's commit lock (a failed attempt is rolled back first)."""
    settings = compaction_settings(HoodieConfig.of(options))
    table = open_for_services(path, options)

    @contextlib.contextmanager
    def completing() -> Iterator[None]:
        with out_of_idle_policy(), commit_lock(table.storage, table.base_path, f"compaction-{instant}"):
            yield

    run_compaction(table, instant, settings, engine, completing=completing)


@contextlib.contextmanager
def out_of_idle_policy() -> Iterator[None]:
    """While inside, a thread under ``SCHED_IDLE`` runs at the lowest normal priority
    (``SCHED_OTHER``, niceness 19) instead, where the system allows it (an unprivileged
    process needs an ``RLIMIT_NICE`` that permits it); then under ``SCHED_IDLE`` again.
    Another thread, or one not under ``SCHED_IDLE``, is left as it is."""
    idle: int | None = getattr(os, "SCHED_IDLE", None)
    left = False
    if idle is not None and os.sched_getscheduler(0) == idle:
        # the niceness first: the system judges the change of policy by it (RLIMIT_NICE)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), MAX_NICENESS)
        try:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            left = True
        except PermissionError:
            log.debug("the compaction process may not leave SCHED_IDLE while it holds the commit lock")
    try:
        yield
    finally:
        if left and idle is not None:
            os.sched_setscheduler(0, idle, os.sched_param(0))  # always allowed: a lower priority


def check_priority(niceness: int, background: bool) -> None:
    """A :class:`ConfigError` for a priority a compaction process cannot be given here."""
    if not 0 <= niceness <= MAX_NICENESS:
        raise ConfigError(f"the niceness of a compaction process is 0 to {MAX_NICENESS} (Unix), got {niceness}")
    if background and niceness:
        raise ConfigError(f"a background compaction process (SCHED_IDLE) has no niceness to add: got niceness {niceness} too")
    if background and not hasattr(os, "SCHED_IDLE"):
        raise ConfigError(f"a background compaction process needs Linux's SCHED_IDLE scheduling policy, which {sys.platform} lacks")


class CompactionProcess:
    """A child process running :func:`compact_pending` for the table at ``path``, one
    compaction at a time (:meth:`run`), until :meth:`close` or the interpreter's end.
    ``niceness`` is added to the child's (Unix) scheduling niceness; ``background`` runs it
    under ``SCHED_IDLE`` instead: either way the writer's process gets the cores first when
    both want them."""

    def __init__(self, path: str, options: Mapping[str, Any], niceness: int = 0, background: bool = False) -> None:
        check_priority(niceness, background)
        self.path = path
        env = dict(os.environ)
        # the child imports hoodie from where this process does
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        level = logging.getLogger("hoodie").getEffectiveLevel()
        # made before the child starts: options that cannot be sent leave no child waiting for them
        setup = json.dumps({"path": path, "options": dict(options), "log_level": level}).encode()
        self._proc = subprocess.Popen([sys.executable, "-m", MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        # at once, while the new interpreter starts: its imports run at that priority too
        try:
            if background:
                os.sched_setscheduler(self._proc.pid, os.SCHED_IDLE, os.sched_param(0))
            elif niceness:
                os.setpriority(os.PRIO_PROCESS, self._proc.pid, min(MAX_NICENESS, os.getpriority(os.PRIO_PROCESS, 0) + niceness))
        except ProcessLookupError:
            pass  # it died already: the first run says how
        except OSError as e:  # not allowed here (a sandbox): no compaction at a priority not asked for
            self._proc.kill()
            self._proc.wait()
            priority = "SCHED_IDLE" if background else f"niceness +{niceness}"
            raise ConfigError(f"cannot give the compaction process of {path} the CPU priority asked for ({priority}): {e}") from e
        self._lock = threading.Lock()
        self._follower: threading.Thread | None = None
        self._ended: BaseException | None = None  # once the child has gone, how
        self._send(setup)
        _LIVE.add(self)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def usable(self) -> bool:
        """Whether the child is up and takes another compaction."""
        return self._ended is None and self._proc.poll() is None

    def busy(self) -> bool:
        """Whether a compaction runs in the child, or its end is not handled yet."""
        follower = self._follower
        return follower is not None and follower.is_alive()

    def run(self, instant: str, on_exit: Callable[[BaseException | None], None]) -> None:
        """Start compaction ``instant`` in the child; ``on_exit`` is called (on a thread of
        this process) with None once it completed, or with the error it failed with (its
        own, or one saying how the process ended)."""
        with self._lock:
            if self.busy():
                raise HoodieError(f"compaction process {self.pid} of {self.path} already runs a compaction")
            self._send(json.dumps({"instant": instant}).encode())
            self._follower = threading.Thread(target=self._follow, args=(instant, on_exit), name=f"hoodie-compaction-{instant}")
            self._follower.start()  # not a daemon: an ending interpreter waits for the compaction

    def join(self, timeout: float | None = None) -> None:
        """Wait for the running compaction, if any."""
        follower = self._follower
        if follower is not None:
            follower.join(timeout)

    def close(self, timeout: float | None = None) -> None:
        """Wait for the running compaction, then end the child."""
        self.join(timeout)
        if self.busy():
            return  # still compacting: it ends once done and told so at the interpreter's end
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout)
        if self._proc.stdout is not None and self._proc.poll() is not None:
            self._proc.stdout.close()
        _LIVE.discard(self)

    def _send(self, line: bytes) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(line + b"\n")
            stdin.flush()  # and kept open: its end tells the child this process has gone
        except (BrokenPipeError, ValueError):
            pass  # the child ended already: how is what the follower reports

    def _follow(self, instant: str, on_exit: Callable[[BaseException | None], None]) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            answer = stdout.readline()
            error = self._outcome(instant, answer)
        except Exception as e:  # an answer that cannot be read is the compaction's failure
            error = e
        on_exit(error)

    def _outcome(self, instant: str, answer: bytes) -> BaseException | None:
        where = f"compaction {instant} of {self.path} (process {self._proc.pid})"
        if not answer:
            code = self._proc.wait()  # no answer: the child has gone
            self._ended = (
                HoodieError(f"{where} was killed by {signal.Signals(-code).name}; it stays pending and runs again") if code < 0
                else HoodieError(f"{where} exited with status {code} without an answer; it stays pending and runs again")
            )
            return self._ended
        result = json.loads(answer)
        if result.get("ok"):
            return None
        try:
            error = pickle.loads(base64.b64decode(result["pickled"]))
        except Exception:
            error = None
        if isinstance(error, BaseException):
            return error
        return HoodieError(f"{where} failed: {result.get('error')}: {result.get('message')}")


#: the children not closed yet: an ending interpreter tells them to end (after its
#: non-daemon threads, those waiting for running compactions, have ended)
_LIVE: weakref.WeakSet[CompactionProcess] = weakref.WeakSet()


@atexit.register
def _end_children() -> None:
    for child in list(_LIVE):
        with contextlib.suppress(Exception):
            child.close(timeout=60)


# --- the child ---------------------------------------------------------------------------------


class _Child:
    """The child's view of its parent: the request lines on standard input, read from the
    descriptor (no buffer lock held at exit) on a daemon thread, so that the end of the
    input (the parent has gone, or tells the child to end) is seen while a compaction runs."""

    def __init__(self) -> None:
        self.parent = os.getppid()
        self.gone = threading.Event()
        self._lock = threading.Lock()
        self._running: tuple[str, str] | None = None  # (instant, path) of the compaction running
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, name="hoodie-compaction-requests", daemon=True).start()

    def requests(self) -> Iterator[dict[str, Any]]:
        while (line := self._lines.get()) is not None:
            yield json.loads(line)

    @contextlib.contextmanager
    def running(self, instant: str, path: str) -> Iterator[None]:
        with self._lock:
            self._running = (instant, path)
            if self.gone.is_set():  # it asked, then went
                self._say_alone()
        try:
            yield
        finally:
            with self._lock:
                self._running = None

    def _read(self) -> None:
        pending = b""
        while chunk := os.read(0, 65536):
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                self._lines.put(line)
        with self._lock:
            self.gone.set()
            if self._running is not None:
                self._say_alone()
        self._lines.put(None)

    def _say_alone(self) -> None:
        assert self._running is not None
        instant, path = self._running
        log.warning("the process that started compaction %s of %s (pid %d) has ended: the compaction goes on to its end alone", instant, path, self.parent)


def _run_one(path: str, options: Mapping[str, Any], instant: str) -> dict[str, Any]:
    try:
        compact_pending(path, options, instant)
        return {"ok": True}
    except Exception as e:
        log.warning("compaction %s of %s failed: %s: %s", instant, path, type(e).__name__, e)
        result = {"ok": False, "error": type(e).__name__, "message": str(e)}
        with contextlib.suppress(Exception):  # if it does not pickle, its type and message say it
            result["pickled"] = base64.b64encode(pickle.dumps(e)).decode()
        return result


def main() -> int:
    """The child: read its set-up, then run each compaction asked for and answer on the
    original standard output, until its standard input ends."""
    answers: IO[str] = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything else printed goes to the standard error the parent shares
    child = _Child()
    requests = child.requests()
    setup = next(requests, None)
    if setup is None:
        return 0  # the parent ended before asking anything
    path, options = str(setup["path"]), setup["options"]
    logging.basicConfig(level=int(setup.get("log_level", logging.WARNING)), format="%(asctime)s compaction process %(levelname)s %(name)s: %(message)s")
    for request in requests:
        instant = str(request["instant"])
        with child.running(instant, path):
            result = _run_one(path, options, instant)
        try:
            answers.write(json.dumps(result) + "\n")
            answers.flush()
        except BrokenPipeError:
            return 0 if result["ok"] else 1  # the parent has gone: nobody to tell
        if child.gone.is_set():
            return 0 if result["ok"] else 1  # nobody to ask for more
    return 0


if __name__ == "__main__":
    sys.exit(main())
