"""Every change of the metadata table happens under the data table's commit lock
(``timeline/write_claims.py``): the lock is reentrant within a thread (a commit holding it
completes its instant, whose metadata update takes it again), a live holder on this
machine keeps it however long its metadata work takes, and a completion that another
process made meanwhile is refused before the metadata table is touched (two writers
resuming one rollback). The races between real processes are in
tests/writer/test_concurrent_writers.py."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.errors import ConcurrentWriteError, TimelineError
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.services.for_writers import WRITER_SERVICES
from hoodie.services.opening import open_for_services
from hoodie.services.rollback import rollback_failed_writes
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable
from hoodie.timeline import write_claims
from hoodie.timeline.instant import Action, State
from hoodie.timeline.rollback_metadata import RollbackMetadata, RollbackPartitionMetadata
from hoodie.writer.transaction import WriteTransaction

OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _lock_file(path: Path) -> Path:
    return path / ".hoodie" / ".aux" / ".claims" / write_claims.COMMIT_LOCK


def _dead_holders_lock(path: Path) -> tuple[Path, bytes]:
    """The commit lock as a holder that died (on no live host) left it, and its contents."""
    lock = _lock_file(path)
    lock.parent.mkdir(parents=True)
    dead = b"20260101000000000 0.000 nohost 1"
    lock.write_bytes(dead)
    return lock, dead


def test_the_lock_is_reentrant_within_a_thread_and_exclusive_across_threads(tmp_path: Path) -> None:
    storage, base = LocalStorage(), str(tmp_path)
    entered = threading.Event()
    order: list[str] = []

    def other() -> None:
        entered.wait()
        with write_claims.commit_lock(storage, base, "20260101000000002"):
            order.append("other")

    thread = threading.Thread(target=other, daemon=True)
    thread.start()
    try:
        with write_claims.commit_lock(storage, base, "20260101000000001"):
            entered.set()
            with write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=1):  # entered again at once
                time.sleep(0.2)  # (the other thread is waiting meanwhile; the order below is the check)
            assert _lock_file(tmp_path).exists()  # still held: the outer block holds it
            order.append("mine")
    finally:
        entered.set()
    thread.join(timeout=30)
    assert order == ["mine", "other"]
    assert not _lock_file(tmp_path).exists()


def test_a_live_holder_of_this_machine_keeps_the_lock_past_its_age(tmp_path: Path) -> None:
    """The metadata table's work under the lock may take minutes: a process of this machine
    that is alive keeps it, however old; one that is gone loses it at once."""
    storage, base = LocalStorage(), str(tmp_path)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = _lock_file(tmp_path)
        lock.parent.mkdir(parents=True)
        old = time.time() - 2 * write_claims.LOCK_STALE_AFTER_SECONDS
        lock.write_text(f"metadata-table-services {old:.3f} {socket.gethostname()} {alive.pid}")
        held = "write 20260101000000001 waited 0.2 s for the commit lock of .* held by metadata-table-services"
        with pytest.raises(ConcurrentWriteError, match=held), write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
            pass
    finally:
        alive.kill()
        alive.wait()
    # the holder is gone: taken over
    with write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
        assert lock.read_text().startswith("20260101000000001 ")
    assert not lock.exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process start times are read from /proc")
def test_a_lock_whose_pid_another_process_now_has_is_taken_over(tmp_path: Path) -> None:
    """The holder died and the system gave its pid to another, live process: the lock names
    the holder's start time, which is not that process's, so it does not wait for it."""
    storage, base = LocalStorage(), str(tmp_path)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = (Path(f"/proc/{alive.pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19]).decode()
        lock = _lock_file(tmp_path)
        lock.parent.mkdir(parents=True)
        lock.write_text(f"metadata-table-services {time.time():.3f} {socket.gethostname()} {alive.pid} {started}")
        # the process it names, started when the lock says: held
        held = "held by metadata-table-services"
        with pytest.raises(ConcurrentWriteError, match=held), write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
            pass
        # the same pid, started at another time: its holder is gone
        lock.write_text(f"metadata-table-services {time.time():.3f} {socket.gethostname()} {alive.pid} {int(started) - 1}")
        with write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
            mine = Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()[19].decode()
            assert lock.read_text().split()[3:] == [str(os.getpid()), mine]  # names this process, with its start
    finally:
        alive.kill()
        alive.wait()
    assert not lock.exists()


def test_two_takers_of_one_dead_holders_lock_never_both_hold_it(tmp_path: Path) -> None:
    """Both takers found the lock of a dead holder. The first replaced it and holds the lock
    now; the second, acting on what it read before, must not delete the first's lock."""
    storage, base = LocalStorage(), str(tmp_path)
    lock, dead = _dead_holders_lock(tmp_path)
    with write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
        # the second taker's removal, from its earlier read: the first's lock stays
        assert write_claims.remove_abandoned(storage, str(lock), dead) is False
        assert lock.read_text().startswith("20260101000000001 ")
        refused: list[BaseException] = []

        def second_writer() -> None:
            try:
                with write_claims.commit_lock(storage, base, "20260101000000002", wait_seconds=0.2):
                    pass
            except ConcurrentWriteError as e:
                refused.append(e)

        thread = threading.Thread(target=second_writer)
        thread.start()
        thread.join(timeout=30)
        assert len(refused) == 1 and "held by write 20260101000000001" in str(refused[0])
    assert not lock.exists() and not list(lock.parent.glob("commit.lock.takeover*"))


def test_a_takeover_in_progress_is_left_to_its_taker(tmp_path: Path) -> None:
    """A live taker holds the takeover guard: another taker leaves the dead holder's lock to
    it; past a guard whose taker died, the next generation's guard decides, and its winner
    removes the lock and every guard of the chain."""
    storage = LocalStorage()
    lock, dead = _dead_holders_lock(tmp_path)
    first = Path(write_claims._takeover_guard(str(lock), dead, 0))
    first.write_text(f"takeover {time.time():.3f} {socket.gethostname()} {os.getpid()}")
    assert write_claims.remove_abandoned(storage, str(lock), dead) is False
    assert lock.read_bytes() == dead and first.exists()
    first.write_text(f"takeover {time.time() - 2 * write_claims.TAKEOVER_STALE_AFTER_SECONDS:.3f} nohost 1")  # its taker died, elsewhere
    assert write_claims.remove_abandoned(storage, str(lock), dead) is True
    assert not lock.exists() and not list(lock.parent.glob("commit.lock.takeover*"))


def test_two_takers_past_a_dead_guard_never_both_remove(tmp_path: Path) -> None:
    """Two takers both found the first guard's taker dead. The first took the next
    generation's guard and is replacing the lock; the second, acting on what it read
    before, must neither delete the first's guard nor touch the lock (were it to delete
    the guard, it could take one of its own and delete the lock the first just made)."""
    storage = LocalStorage()
    lock, dead = _dead_holders_lock(tmp_path)
    dead_guard = Path(write_claims._takeover_guard(str(lock), dead, 0))
    dead_guard.write_text("takeover 0.000 nohost 1")
    live_guard = Path(write_claims._takeover_guard(str(lock), dead, 1))
    live_guard.write_text(f"takeover {time.time():.3f} {socket.gethostname()} {os.getpid()}")  # the first taker's
    assert write_claims.remove_abandoned(storage, str(lock), dead) is False
    assert lock.read_bytes() == dead and dead_guard.exists() and live_guard.exists()
    # a later dead holder's takers never meet this chain
    other = b"20260101000000005 0.000 nohost 2"
    assert write_claims._takeover_guard(str(lock), other, 0) != str(dead_guard)


def test_a_holder_on_another_machine_keeps_the_lock_while_its_heartbeat_beats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another machine's holder cannot be asked whether it lives: past the stale bound its
    lock is taken over unless the heartbeat it renews beside the lock says it still
    holds it (a heartbeat left by an earlier holder does not count)."""
    storage, base = LocalStorage(), str(tmp_path)
    lock = _lock_file(tmp_path)
    lock.parent.mkdir(parents=True)
    heartbeat = lock.parent / write_claims.COMMIT_LOCK_HEARTBEAT
    old = time.time() - 2 * write_claims.LOCK_STALE_AFTER_SECONDS
    remote = f"20260101000000000 {old:.3f} elsewhere 4242".encode()
    lock.write_bytes(remote)
    heartbeat.write_text(f"{write_claims._lock_digest(remote)} {time.time():.3f}")
    refused = pytest.raises(ConcurrentWriteError, match="held by write 20260101000000000")
    with refused, write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
        pass
    assert lock.read_bytes() == remote
    heartbeat.write_text(f"{write_claims._lock_digest(b'an earlier holder')} {time.time():.3f}")
    with write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
        assert lock.read_text().startswith("20260101000000001 ")
    # and a holder renews its own while it holds the lock
    monkeypatch.setattr(write_claims, "LOCK_HEARTBEAT_SECONDS", 0.05)
    with write_claims.commit_lock(storage, base, "20260101000000002"):
        held = lock.read_bytes()
        deadline = time.monotonic() + 30
        while write_claims._heartbeat_at(storage, str(heartbeat), held) < time.time() - 5:
            assert time.monotonic() < deadline, "no heartbeat"
            time.sleep(0.05)


def test_a_waiter_reads_the_heartbeat_only_of_a_lock_that_looks_abandoned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer waiting for a lock held within the stale bound polls the lock file alone:
    the heartbeat can only keep a lock that looks abandoned by when it was taken."""
    storage, base = LocalStorage(), str(tmp_path)
    lock = _lock_file(tmp_path)
    lock.parent.mkdir(parents=True)
    lock.write_bytes(f"20260101000000000 {time.time():.3f} elsewhere 4242".encode())
    asked: list[bytes] = []
    heartbeat_at = write_claims._heartbeat_at
    monkeypatch.setattr(write_claims, "_heartbeat_at", lambda storage, path, held: asked.append(held) or heartbeat_at(storage, path, held))
    refused = pytest.raises(ConcurrentWriteError, match="held by write 20260101000000000")
    with refused, write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
        pass
    assert asked == []
    stale = f"20260101000000000 {time.time() - 2 * write_claims.LOCK_STALE_AFTER_SECONDS:.3f} elsewhere 4242".encode()
    lock.write_bytes(stale)
    with write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):
        pass
    assert asked == [stale]


def test_a_second_completion_of_a_rollback_leaves_the_metadata_table_as_the_first_made_it(tmp_path: Path) -> None:
    """Two writers resuming one rollback both try to complete it: the second is refused
    under the lock before its metadata update, which would otherwise undo and redo the
    first one's delta commit with its own (here: wrong) record of what was deleted."""
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"id": ["a", "b"], "p": ["x", "y"], "ts": [1, 1]}), path, OPTIONS)
    table = HoodieTable.open(path)
    txn = WriteTransaction.begin(table, "upsert", WRITER_SERVICES)
    txn.mark_inflight()  # a write that failed
    [result] = rollback_failed_writes(open_for_services(path))
    table = open_for_services(path)
    rollback = table.timeline.get(result.rollback_instant)
    mdt = HoodieTable.open(str(tmp_path / "t" / ".hoodie" / "metadata"))
    delta = mdt.timeline.get(result.rollback_instant)
    before = mdt.timeline.read_content(delta)
    # the other attempt's record claims it deleted a live base file
    live = next(p for p in (tmp_path / "t" / "x").iterdir() if p.suffix == ".parquet")
    wrong = RollbackMetadata.of(rollback.timestamp, txn.instant, {"x": RollbackPartitionMetadata("x", (str(live),))}, 0)
    with pytest.raises(TimelineError, match=f"{rollback.timestamp}.rollback already exists"):
        table.timeline.transition_to_completed(rollback.with_state(State.INFLIGHT), wrong.encode())
    mdt = mdt.reload()
    assert mdt.timeline.read_content(mdt.timeline.get(result.rollback_instant)) == before
    assert [i.timestamp for i in mdt.timeline.instants if i.action == Action.DELTA_COMMIT and not i.is_completed] == []
    report = validate_metadata_table(HoodieTable.open(path))
    assert report.ok, report.differences
    assert sorted(hoodie.read(path).column("id").to_pylist()) == ["a", "b"]


def _guards(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if ".takeover." in p.name}


def test_guards_of_removals_that_are_over_are_swept_and_guards_still_needed_stay(tmp_path: Path) -> None:
    """A taker that died after it removed the dead holder's file, before it deleted its
    guard, leaves a guard nobody contends for again. It goes when a lock is next taken
    over from a dead holder (and with a clean's sweep of the claims); a guard of a file
    that still holds what its takers found stays, whether its taker lives or died."""
    storage, base = LocalStorage(), str(tmp_path)
    lock, dead = _dead_holders_lock(tmp_path)
    claims = lock.parent
    gone_lock = b"20250101000000000 0.000 nohost 7"  # a lock removed long ago, by a taker that then died
    left = {
        Path(write_claims._takeover_guard(str(lock), gone_lock, 0)).name: "takeover 0.000 nohost 8",
        Path(write_claims._takeover_guard(str(claims / "20250101000000001"), b"rollback 0.000 nohost 9", 0)).name: "takeover 0.000 nohost 9",
    }
    claim = claims / "20250101000000002"
    claim.write_bytes(b"rollback 0.000 nohost 10")  # a dead rollback's claim, not taken over yet
    needed = {  # its takers' guards: the first died, the next is at work
        Path(write_claims._takeover_guard(str(claim), claim.read_bytes(), 0)).name: "takeover 0.000 nohost 11",
        Path(write_claims._takeover_guard(str(claim), claim.read_bytes(), 1)).name: f"takeover {time.time():.3f} {socket.gethostname()} {os.getpid()}",
    }
    strangers = {"commit.lock.takeover.nothex.0": "keep", "notes.takeover.0123456789abcdef.0": "keep"}
    for name, text in {**left, **needed, **strangers}.items():
        (claims / name).write_text(text)

    with write_claims.commit_lock(storage, base, "20260101000000001", wait_seconds=0.2):  # (taken over from the dead holder)
        assert lock.read_text().startswith("20260101000000001 ")
        assert _guards(claims) == {*needed, *strangers}
    assert claim.exists() and not lock.exists()

    # a clean's sweep of the claims drops them too, and the claim's chain once it is over
    for name, text in left.items():
        (claims / name).write_text(text)
    assert write_claims.sweep(storage, base) == 0  # (the claim's taker at work holds it)
    assert _guards(claims) == {*needed, *strangers}
    claim.unlink()  # its taker removed it, and died before deleting the chain
    write_claims.sweep(storage, base)
    assert _guards(claims) == set(strangers)


def test_a_lock_taken_without_a_takeover_lists_nothing(tmp_path: Path) -> None:
    """Sweeping guards costs a listing only when a dead holder's file was removed."""
    storage = LocalStorage()
    before = storage.counters.snapshot()
    with write_claims.commit_lock(storage, str(tmp_path), "20260101000000001"):
        pass
    assert storage.counters.since(before)["list"] == 0
    _dead_holders_lock(tmp_path / "t")
    before = storage.counters.snapshot()
    with write_claims.commit_lock(storage, str(tmp_path / "t"), "20260101000000001"):
        pass
    assert storage.counters.since(before)["list"] == 1
