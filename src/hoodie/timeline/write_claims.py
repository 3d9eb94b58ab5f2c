"""Who decides the fate of a pending write: its writer, committing it, or another writer,
rolling it back as failed.

A table takes one writer at a time, but nothing stops a second one from starting: it finds
the first writer's instant pending, takes it for a failed write, and rolls it back. If the
first writer completed its instant at that moment, the rollback could delete the files of
a commit its writer had already reported as done. A claim makes the two exclusive: each
side creates ``.hoodie/.aux/.claims/<instant>`` (write-once, atomic), naming ``commit`` or
``rollback``, when, and by which process; whoever creates it first decides, and the other
side reads what it decided. A writer drops its claim once its instant is complete; a
rollback drops its own once the instant is gone.

Two writers can also both complete, each having changed the same file group from the
same slice: the later would hide the earlier's rows. A commit therefore checks for such
writes and completes its instant under the table's commit lock, a write-once file beside
the claims. Every change of the table's metadata table happens under the same lock (each
completion's update, its initialisation, its own services), so that two writers never
race on one of its delta commits or log file versions. The lock is reentrant within a
thread: a commit holding it completes its instant, whose metadata update takes it again.
This module reads and writes claim and lock files only.
"""
from __future__ import annotations

import hashlib
import logging
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hoodie.errors import ConcurrentWriteError, FileAlreadyExistsError
from hoodie.layout import AUX_FOLDER, HOODIE_FOLDER, is_ascii_digits, is_instant_time
from hoodie.storage.base import Storage
from hoodie.storage.paths import check_name, under

log = logging.getLogger(__name__)

COMMIT = "commit"
ROLLBACK = "rollback"
CLAIMS_FOLDER = ".claims"
# A claim is abandoned when its holder's process is gone (seen at once on the holder's
# machine) or, from another machine, when older than this: commits and rollbacks take
# seconds to minutes, never this long.
STALE_AFTER_SECONDS = 3600.0


def _holder_id() -> str:
    return f"{socket.gethostname()} {os.getpid()} {_started(os.getpid()) or ''}".rstrip()


_PROC_STAT = "/proc/{pid}/stat"


def _started(pid: int) -> str | None:
    """When process ``pid`` of this machine started, as Linux counts it (clock ticks since
    boot, ``/proc/<pid>/stat``): "" when it is gone, ``None`` when it cannot be told (no
    ``/proc``, or hidden). With the pid, it names one process: a pid the system gave again
    to another process after its holder died does not hold the holder's claims."""
    try:
        # a machine's process table, not a path under a table: the pid is a number
        with open(_PROC_STAT.format(pid=int(pid)), "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return "" if os.path.isdir("/proc/self") else None
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # after the command name, which may hold spaces
    return fields[19].decode() if len(fields) > 19 else None


def _abandoned(at: float, host: str, pid: str, after_seconds: float, trust_live_holder: bool = False, started: str = "") -> bool:
    """Whether a claim or lock taken at ``at`` by process ``pid`` of ``host`` (which
    ``started`` then, when the file says) has no live holder: that process is gone (asked
    on its own machine only; a live process under its pid that started at another time is
    not it), or it is older than ``after_seconds`` (with ``trust_live_holder``, only when
    asked from another machine: a live process of this one holds it however long it
    takes)."""
    local = host == socket.gethostname() and is_ascii_digits(pid)
    if time.time() - at > after_seconds and not (trust_live_holder and local):
        return True
    if not local:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        pass
    now = _started(int(pid)) if started else None
    return now is not None and now != started  # the pid is another process's now


def _parse(data: bytes) -> tuple[str, float, str, str, str]:
    """(what, when, host, pid, process start or "") of a claim or lock file; one this
    module did not write (or an older form) reads as taken at the epoch, hence abandoned."""
    parts = data.decode(errors="replace").split()
    try:
        return parts[0], float(parts[1]), parts[2], parts[3], parts[4] if len(parts) > 4 else ""
    except (IndexError, ValueError):
        return (parts[0] if parts else "?"), 0.0, "", "", ""


@dataclass(frozen=True)
class Claim:
    outcome: str  # COMMIT or ROLLBACK
    ours: bool  # this call created it


def _folder(base_path: str) -> str:
    return under(base_path, HOODIE_FOLDER, AUX_FOLDER, CLAIMS_FOLDER)


def _path(base_path: str, instant_time: str) -> str:
    return under(_folder(base_path), check_name(instant_time, "a write claim", "instant time"))


def _take(
    storage: Storage,
    path: str,
    what: str,
    stale_after: float,
    replace_abandoned: bool = True,
    trust_live_holder: bool = False,
    last_alive: Callable[[bytes], float] | None = None,
    base_path: str | None = None,
) -> tuple[bool, bytes]:
    """Create the write-once file ``path`` naming ``what``: (True, what we wrote) once ours,
    or (False, what its holder wrote). A file whose holder died is replaced, if
    ``replace_abandoned`` (see :func:`_abandoned` for ``trust_live_holder``);
    ``last_alive`` tells when a holder last showed it lives, if later than it took it.
    Once it removed a dead holder's file, the stale takeover guards of the table at
    ``base_path`` go (:func:`sweep_guards`): takers that died leave them only where
    holders died before."""
    for _ in range(10):
        mine = f"{what} {time.time():.3f} {_holder_id()}".encode()
        try:
            storage.create_new(path, mine)
            return True, mine
        except FileAlreadyExistsError:
            pass
        try:
            seen = storage.read_bytes(path)
        except FileNotFoundError:
            continue  # released between the two calls: try again
        _, at, host, pid, started = _parse(seen)
        if not (replace_abandoned and _abandoned(at, host, pid, stale_after, trust_live_holder, started)):
            return False, seen
        # asked only of a holder that looks dead by its file alone (a waiter polls often)
        if last_alive is not None and not _abandoned(max(at, last_alive(seen)), host, pid, stale_after, trust_live_holder, started):
            return False, seen
        if remove_abandoned(storage, path, seen) and base_path is not None:
            sweep_guards(storage, base_path)
    raise ConcurrentWriteError(f"could not take {path}: it keeps being taken and released")


# A takeover guard lives for the few calls of one removal; one older than this belongs to
# a taker that died in between.
TAKEOVER_STALE_AFTER_SECONDS = 60.0
# guards of one dead holder's file, each taken after the one before died: more means
# something else keeps creating them
_MAX_TAKEOVER_GENERATIONS = 64


_TAKEOVER = ".takeover."


def _guard_digest(seen: bytes) -> str:
    return hashlib.sha1(seen).hexdigest()[:16]


def _takeover_guard(path: str, seen: bytes, generation: int) -> str:
    """The guard of one removal of ``path`` found holding ``seen``: named by what was seen,
    so that takers of one dead holder meet at the same guard and those of a later one
    never meet its leftovers."""
    return f"{path}{_TAKEOVER}{_guard_digest(seen)}.{generation}"


def _guarded(name: str) -> tuple[str, str] | None:
    """(the name of the file guarded, the digest of what its takers found there) of a
    takeover guard named ``name`` (None: not a guard's name)."""
    target, found, rest = name.partition(_TAKEOVER)
    digest, dot, generation = rest.partition(".")
    is_target = target == COMMIT_LOCK or is_instant_time(target)
    if not (found and dot and is_target and len(digest) == 16 and all(c in "0123456789abcdef" for c in digest) and is_ascii_digits(generation)):
        return None
    return target, digest


def sweep_guards(storage: Storage, base_path: str, names: list[str] | None = None) -> int:
    """Delete the takeover guards of removals that are over (their taker died after it
    removed the file, before it deleted its guards); how many. ``names``: the claims
    folder's file names when the caller listed it already.

    A guard is needed only while the file it guards still holds what its takers found
    there (the bytes a dead holder wrote, with its time and process: once deleted, no
    file ever holds them again). Every taker reads the file again under its guard and
    deletes it only if it still holds them, so once it does not, no taker, live or late,
    acts on the file whatever becomes of the guard: such a guard is stale and goes. A
    guard of a file that still holds them stays, whether its taker lives (it is
    removing the file) or not (the next generation's winner removes the chain)."""
    folder = _folder(base_path)
    if names is None:
        names = [info.name for info in storage.list_dir(folder) if not info.is_dir]
    swept = 0
    for name in names:
        guarded = _guarded(name)
        if guarded is None:
            continue
        target, digest = guarded
        try:
            holds = _guard_digest(storage.read_bytes(under(folder, target))) == digest
        except FileNotFoundError:
            holds = False
        if not holds and storage.delete(under(folder, name)):
            swept += 1
    if swept:
        log.info("%s: deleted %d takeover guard(s) of removals whose takers died", folder, swept)
    return swept


def remove_abandoned(storage: Storage, path: str, seen: bytes) -> bool:
    """Delete ``path``, found holding ``seen`` by a holder that died, unless it changed;
    whether it was deleted here.

    Two takers may find the same dead holder; were both to delete what they found, the
    later could delete the file the earlier has just created in its place, and both would
    hold it. So a taker first creates a takeover guard (write-once: one of them wins),
    reads ``path`` again and deletes it only if it still holds ``seen``; the others leave
    it and try again. A guard whose taker died is never deleted by the next takers (two of
    them could both find it dead, and the later delete the guard the earlier has just
    made): they contend for the next generation's guard instead, and its winner removes
    the whole chain when done."""
    taken = None
    for generation in range(_MAX_TAKEOVER_GENERATIONS):
        guard = _takeover_guard(path, seen, generation)
        try:
            storage.create_new(guard, f"takeover {time.time():.3f} {_holder_id()}".encode())
            taken = generation
            break
        except FileAlreadyExistsError:
            pass
        try:
            _, at, host, pid, started = _parse(storage.read_bytes(guard))
        except FileNotFoundError:
            return False  # its taker finished: ``path`` no longer holds ``seen``
        if not _abandoned(at, host, pid, TAKEOVER_STALE_AFTER_SECONDS, started=started):
            return False  # a live taker is on it
    if taken is None:
        raise ConcurrentWriteError(f"could not take over {path}: {_MAX_TAKEOVER_GENERATIONS} takers of it died in turn")
    try:
        try:
            current = storage.read_bytes(path)
        except FileNotFoundError:
            return False
        return current == seen and bool(storage.delete(path))
    finally:
        for generation in range(taken, -1, -1):  # ours, then the dead ones before it
            storage.delete(_takeover_guard(path, seen, generation))


def claim(storage: Storage, base_path: str, instant_time: str, outcome: str) -> Claim:
    """Claim ``instant_time`` for ``outcome``; the claim that stands: ours, or the one
    another writer took first. A rollback takes over a claim whose holder died (a writer
    killed while committing, or a rollback killed midway); a commit never does: a
    rollback, even a dead one's, may have deleted files of the instant already."""
    ours, seen = _take(storage, _path(base_path, instant_time), outcome, STALE_AFTER_SECONDS, replace_abandoned=outcome == ROLLBACK, base_path=base_path)
    return Claim(_parse(seen)[0], ours)


def held(storage: Storage, base_path: str, instant_time: str) -> str | None:
    """The outcome ``instant_time`` is claimed for, or ``None``."""
    try:
        return _parse(storage.read_bytes(_path(base_path, instant_time)))[0]
    except FileNotFoundError:
        return None


def release(storage: Storage, base_path: str, instant_time: str) -> None:
    storage.delete(_path(base_path, instant_time))


def sweep(storage: Storage, base_path: str) -> int:
    """Drop the claims whose holders died (a process killed between completing its step
    and dropping its claim leaves one behind); how many. Live holders' claims, the commit
    lock (taken over by :func:`commit_lock`) and every file that is not a claim this
    module writes (named by an instant time, naming ``commit`` or ``rollback``) stay.
    Stale takeover guards go too (:func:`sweep_guards`, from the same listing)."""
    dropped = 0
    listed = [info for info in storage.list_dir(_folder(base_path)) if not info.is_dir]
    for info in listed:
        if not is_instant_time(info.name):
            continue
        try:
            seen = storage.read_bytes(info.path)
        except FileNotFoundError:
            continue
        outcome, at, host, pid, started = _parse(seen)
        if outcome in (COMMIT, ROLLBACK) and _abandoned(at, host, pid, STALE_AFTER_SECONDS, started=started):
            dropped += remove_abandoned(storage, info.path, seen)
    sweep_guards(storage, base_path, [info.name for info in listed])
    return dropped


COMMIT_LOCK = "commit.lock"
# The lock is held for a commit's conflict check and completed instant, and for the
# metadata table's updates and services (its compaction can take minutes on a large
# table). A live process of this machine holds it as long as it needs; one of another
# machine (whose liveness cannot be asked) renews a heartbeat beside it while it holds
# it, and a lock whose heartbeat stopped this long ago belongs to a writer that died
# holding it.
LOCK_STALE_AFTER_SECONDS = 600.0
COMMIT_LOCK_HEARTBEAT = "commit.lock.heartbeat"
# how often a holder renews the heartbeat: many times within the stale bound
LOCK_HEARTBEAT_SECONDS = 30.0
# how long a writer waits for the lock before it gives up (ConcurrentWriteError): as long
# as another machine's holder may keep it
LOCK_WAIT_SECONDS = LOCK_STALE_AFTER_SECONDS
# the lock files this thread holds, and how many times over (the lock is reentrant)
_held = threading.local()


def _holder_name(holder: str) -> str:
    """How a lock holder is named in errors: a write by its instant, a service by name."""
    return f"write {holder}" if is_instant_time(holder) else holder


@contextmanager
def commit_lock(storage: Storage, base_path: str, holder: str, wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold the table's commit lock (``.hoodie/.aux/.claims/commit.lock``, created
    write-once) while a writer checks for conflicting writes and completes its instant,
    or changes the metadata table, so that of two writes changing the same file groups
    only one completes and the metadata table takes one change at a time. ``holder``:
    the instant time of the write, or a service's name (no spaces). A thread already
    holding it enters again at once."""
    path = under(_folder(base_path), COMMIT_LOCK)
    depth: dict[str, int] = _held.__dict__.setdefault("depth", {})
    if depth.get(path):
        depth[path] += 1
        try:
            yield
        finally:
            depth[path] -= 1
        return
    heartbeat = under(_folder(base_path), COMMIT_LOCK_HEARTBEAT)
    deadline = time.monotonic() + wait_seconds
    while True:
        ours, seen = _take(
            storage,
            path,
            holder,
            LOCK_STALE_AFTER_SECONDS,
            trust_live_holder=True,
            last_alive=lambda seen: _heartbeat_at(storage, heartbeat, seen),
            base_path=base_path,
        )
        if ours:
            break
        if time.monotonic() > deadline:
            other = _parse(seen)[0]
            raise ConcurrentWriteError(f"{_holder_name(holder)} waited {wait_seconds:g} s for the commit lock of {base_path}, held by {_holder_name(other)}")
        time.sleep(random.uniform(0.005, 0.05))
    depth[path] = 1
    beating = _Heartbeat(storage, heartbeat, seen)
    try:
        yield
    finally:
        depth[path] = 0
        beating.stop()
        storage.delete(path)


def _lock_digest(lock: bytes) -> str:
    return hashlib.sha1(lock).hexdigest()


def _heartbeat_at(storage: Storage, heartbeat: str, lock: bytes) -> float:
    """When the holder of the lock that holds ``lock`` last renewed its heartbeat (0: never;
    a heartbeat of an earlier holder does not count)."""
    try:
        digest, _, at = storage.read_bytes(heartbeat).decode(errors="replace").partition(" ")
        return float(at) if digest == _lock_digest(lock) else 0.0
    except (FileNotFoundError, ValueError):
        return 0.0


class _Heartbeat:
    """Renews the heartbeat of the lock holding ``lock`` every :data:`LOCK_HEARTBEAT_SECONDS`
    until stopped, on a daemon thread (a holder that dies stops renewing it)."""

    def __init__(self, storage: Storage, heartbeat: str, lock: bytes) -> None:
        self._storage, self._heartbeat, self._digest = storage, heartbeat, _lock_digest(lock)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hoodie-commit-lock-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(LOCK_HEARTBEAT_SECONDS):
            try:
                self._storage.write_bytes(self._heartbeat, f"{self._digest} {time.time():.3f}".encode())
            except OSError as e:  # the next beat tries again; the lock stays ours meanwhile
                log.warning("could not renew the commit lock's heartbeat %s: %s", self._heartbeat, e)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
