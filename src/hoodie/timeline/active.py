"""The active timeline of a table: which instants exist, in which state, and transitions.

Layout 1 (table v6) keeps instant files flat in ``.hoodie/``; layout 2 (v8/v9) keeps them
in ``.hoodie/timeline/`` and names completed instants ``<requested>_<completed>.<action>``.
hoodie writes layout 1 only. Every transition creates its file write-once, so two writers
can never complete the same instant and a reader never sees a half-written one.
"""
from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from hoodie.errors import FileAlreadyExistsError, InstantNotFoundError, TimelineError
from hoodie.layout import HOODIE_FOLDER, InstantTime, format_instant
from hoodie.storage.base import Storage
from hoodie.storage.paths import relative_to, under
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline import decoded, write_claims
from hoodie.timeline.action_metadata import CleanerPlan, CleanMetadata, RequestedReplaceMetadata, SavepointInfo
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import STATE_ORDER, Action, Instant, State, parse_timeline_file_name
from hoodie.timeline.rollback_metadata import RestorePlan, RollbackMetadata, RollbackPlan

# An instant dated more than this after the clock comes from no writer's clock (a Java
# table keeping its timeline in local time is at most 14 hours ahead of UTC): a timeline
# holding one is refused where it is read, since no new instant could follow it.
FUTURE_TOLERANCE = timedelta(days=1)
# How long a new instant time waits for this machine's clock to pass the newest instant on
# the timeline (another writer's clock slightly ahead); beyond it, a TimelineError.
CLOCK_SKEW_WAIT = timedelta(seconds=5)
# Instant files read at once by commit_metadata_of (on storage that is not local)
_READ_THREADS = 16


#: what runs before an instant completes: the metadata table's update of a table that
#: keeps one, given the timeline, the inflight instant and its completed content
CompletionHook = Callable[["ActiveTimeline", Instant, bytes], None]


@dataclass(frozen=True)
class ActiveTimeline:
    """An immutable snapshot of the active timeline; call :meth:`reload` to refresh."""

    storage: Storage
    base_path: str
    layout_version: int
    timeline_dir: str
    instants: tuple[Instant, ...]
    # whether decoded commit metadata is kept (False: a long-lived owner, a timeline
    # server, keeps what it needs in its own bounded store instead)
    keeps_metadata: bool = field(default=True, compare=False, repr=False)
    # run before every completion (the metadata table's update), installed by whoever
    # opens the table for writing; carried over reload()
    completion_hook: CompletionHook | None = field(default=None, compare=False, repr=False)
    # the table keeps a metadata table: completing an instant without the hook is refused,
    # so that no path can leave it stale
    hook_required: bool = field(default=False, compare=False, repr=False)
    # decoded commit metadata by instant file: a completed instant's content never changes
    _metadata: dict[str, CommitMetadata] = field(default_factory=dict, compare=False, repr=False, hash=False)
    # instant times each rollback undoes, by the rollback's file read
    _undone: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False, hash=False)

    def __getstate__(self) -> dict[str, object]:
        # tasks get the timeline, not its caches (nor the hook: tasks complete no instant)
        return {**self.__dict__, "_metadata": {}, "_undone": {}, "completion_hook": None}

    # --- loading --------------------------------------------------------------------------
    @classmethod
    def load(
        cls, storage: Storage, base_path: str, layout_version: int = 1, timeline_path: str = "", hook_required: bool = False
    ) -> ActiveTimeline:
        timeline_dir = under(base_path, HOODIE_FOLDER, timeline_path, source="hoodie.properties (hoodie.timeline.path)")
        # A savepoint carries the time of the commit it keeps (Hudi names it so), hence
        # instants are keyed by time and "is a savepoint".
        by_key: dict[tuple[str, bool], Instant] = {}
        now = datetime.now(timezone.utc)
        latest_possible = InstantTime(format_instant(now + FUTURE_TOLERANCE))
        for name, is_dir in storage.list_names(timeline_dir):
            if is_dir:
                continue
            inst = parse_timeline_file_name(name)
            if inst is None:
                continue
            if max(inst.time, InstantTime(inst.completion_time or "")) > latest_possible:
                raise TimelineError(
                    f"timeline file {name!r} in {timeline_dir} is dated more than {FUTURE_TOLERANCE.days} day after this machine's clock"
                    f" ({format_instant(now)}): no new instant could follow it; remove it if no writer of this table made it"
                )
            key = (inst.timestamp, inst.action == Action.SAVEPOINT)
            prev = by_key.get(key)
            if prev is None or STATE_ORDER[inst.state] > STATE_ORDER[prev.state]:
                # a completed compaction shows as commit, a completed clustering as replacecommit
                by_key[key] = inst
            elif inst.state is prev.state and inst.action != prev.action:
                if inst.state is State.REQUESTED:
                    continue  # two writers took the same millisecond: at most one goes on (request_new)
                raise TimelineError(f"two actions at instant {inst.timestamp}: {prev.action} and {inst.action}")
        # the savepoint sorts after the commit it shares its time with
        instants = tuple(sorted(by_key.values(), key=lambda i: (i.sort_key()[0], i.action == Action.SAVEPOINT, i.sort_key()[1])))
        return cls(storage, base_path, layout_version, timeline_dir, instants, hook_required=hook_required)

    def reload(self) -> ActiveTimeline:
        """The timeline as storage has it now (one listing); decoded commit metadata of
        completed instants carries over, since a completed instant's file never changes."""
        rel = self.timeline_dir[len(under(self.base_path, HOODIE_FOLDER)) :].strip("/")
        fresh = ActiveTimeline.load(self.storage, self.base_path, self.layout_version, rel, self.hook_required).with_completion_hook(self.completion_hook)
        if not self.keeps_metadata:
            fresh = fresh.without_metadata_cache()
        kept = {fresh.instant_path(i) for i in fresh.instants if i.is_completed}
        fresh._metadata.update((path, meta) for path, meta in self._metadata.items() if path in kept)
        on = {fresh._rollback_file(rb) for rb in fresh.filter([Action.ROLLBACK])}
        fresh._undone.update((path, undone) for path, undone in self._undone.items() if path in on)  # never change
        return fresh

    def with_completion_hook(self, hook: CompletionHook | None) -> ActiveTimeline:
        """This snapshot, running ``hook`` before each instant it completes."""
        return self if hook is self.completion_hook else replace(self, completion_hook=hook)

    def without_metadata_cache(self) -> ActiveTimeline:
        """This snapshot, and those reloaded from it, decoding commit metadata each time it
        is asked for instead of keeping it."""
        return replace(self, keeps_metadata=False, _metadata={})

    def timeline_hash(self) -> str:
        """Java's ``computeTimelineHash``: lower-hex SHA-256 over ``<time>_<action>_<STATE>``
        of every instant in timeline order; a timeline server compares it with its own to
        tell whether its view is current."""
        digest = hashlib.sha256()
        for i in self.instants:
            digest.update(f"{i.timestamp}_{i.action}_{i.state.value}".encode())
        return digest.hexdigest()

    def last_instant(self) -> Instant | None:
        """The newest instant, in any state (``lastinstantts`` of a view request)."""
        return self.instants[-1] if self.instants else None

    # --- queries --------------------------------------------------------------------------
    def filter(self, actions: Iterable[str] | None = None, states: Iterable[State] | None = None) -> list[Instant]:
        acts = set(actions) if actions is not None else None
        sts = set(states) if states is not None else None
        return [
            i for i in self.instants
            if (acts is None or i.action in acts) and (sts is None or i.state in sts)
        ]

    def completed(self, actions: Iterable[str] | None = None) -> list[Instant]:
        return self.filter(actions, [State.COMPLETED])

    def pending(self, actions: Iterable[str] | None = None) -> list[Instant]:
        return self.filter(actions, [State.REQUESTED, State.INFLIGHT])

    def completed_writes(self) -> list[Instant]:
        """Completed commits, delta commits and replace commits, oldest first."""
        return self.completed(Action.WRITE_ACTIONS)

    def commits_start(self) -> str | None:
        """Where the active *commits* timeline starts: its first write instant (or one that
        completes as a write, like a compaction), pending or not. Older instants are archived,
        hence committed (Java's ``containsOrBeforeTimelineStarts``). Restore and clean
        instants are never archived, so they cannot mark the start."""
        for i in self.instants:
            if i.action in Action.WRITE_ACTIONS or i.action in Action.COMPLETES_AS:
                return i.timestamp
        return None

    def last_completed_write(self) -> Instant | None:
        writes = self.completed_writes()
        return writes[-1] if writes else None

    def get(self, timestamp: str) -> Instant:
        for i in self.instants:
            if i.timestamp == timestamp:
                return i
        raise InstantNotFoundError(f"instant {timestamp} is not on the active timeline of {self.base_path}")

    def contains(self, timestamp: str) -> bool:
        return any(i.timestamp == timestamp for i in self.instants)

    def completion_time(self, instant: Instant) -> str:
        """When an instant completed: its layout-2 completion time, else its own time."""
        return instant.completion_time or instant.timestamp

    # --- instant content ------------------------------------------------------------------
    def instant_path(self, instant: Instant) -> str:
        return under(self.timeline_dir, instant.file_name(self.layout_version))

    def read_content(self, instant: Instant) -> bytes:
        try:
            return self.storage.read_bytes(self.instant_path(instant))
        except FileNotFoundError:
            raise InstantNotFoundError(f"instant file {instant.file_name(self.layout_version)} is gone from {self.timeline_dir}") from None

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Commit metadata of a completed commit, delta commit or replace commit (decoded
        once per timeline snapshot). A completed one must hold decodable metadata of the
        right types (else :class:`FormatError`); a pending one may be empty."""
        cached = self._metadata.get(self.instant_path(instant))
        return cached if cached is not None else self._decoded(instant, self.read_content(instant))

    def commit_metadata_of(self, instants: Sequence[Instant]) -> Iterator[tuple[Instant, CommitMetadata]]:
        """:meth:`commit_metadata` of each of ``instants``, in their order. On a storage
        that is not local, the instant files not decoded yet are read side by side, a
        batch at a time: each read is a round trip, and a view checking its listing reads
        every completed write of the timeline."""
        if self.storage.is_local:
            for inst in instants:
                yield inst, self.commit_metadata(inst)
            return
        with ThreadPoolExecutor(_READ_THREADS, thread_name_prefix="hoodie-timeline") as pool:
            for start in range(0, len(instants), _READ_THREADS):
                batch = instants[start : start + _READ_THREADS]
                todo = [i for i in batch if self.instant_path(i) not in self._metadata]
                contents = dict(zip(todo, pool.map(self.read_content, todo)))
                for inst in batch:
                    content = contents.get(inst)
                    yield inst, (self.commit_metadata(inst) if content is None else self._decoded(inst, content))

    def _decoded(self, instant: Instant, content: bytes) -> CommitMetadata:
        if not (instant.is_completed and self.keeps_metadata):
            return CommitMetadata.decode(content, instant.timestamp, completed=instant.is_completed)
        # the snapshots of every table opened in this process share what they decoded: a
        # write opens several, each reading the metadata of every completed write
        path = self.instant_path(instant)
        metadata = decoded.SHARED.get(path, content, lambda data: CommitMetadata.decode(data, instant.timestamp, completed=True))
        self._metadata[path] = metadata
        return metadata

    def read_avro(self, instant: Instant) -> dict[str, Any]:
        """The Avro record of an instant file (:func:`avro_metadata.decode`: bytes that
        hold none raise :class:`FormatError` naming the file)."""
        return avro.decode(self.read_content(instant), relative_to(self.instant_path(instant), self.base_path))

    def rollback_plan(self, rollback: Instant) -> RollbackPlan:
        """The plan a rollback saved as requested, its paths rebuilt under the base path."""
        return RollbackPlan.from_avro(self.read_avro(rollback.with_state(State.REQUESTED)), self.base_path, rollback.timestamp)

    def rollback_metadata(self, rollback: Instant) -> RollbackMetadata:
        return RollbackMetadata.from_avro(self.read_avro(rollback), f"rollback {rollback.timestamp}")

    def restore_plan(self, restore: Instant) -> RestorePlan:
        return RestorePlan.from_avro(self.read_avro(restore.with_state(State.REQUESTED)), f"the plan of restore {restore.timestamp}")

    def cleaner_plan(self, clean: Instant) -> CleanerPlan:
        """The plan a clean saved as requested, its paths rebuilt under the base path."""
        return CleanerPlan.from_avro(self.read_avro(clean.with_state(State.REQUESTED)), self.base_path, clean.timestamp)

    def clean_metadata(self, clean: Instant) -> CleanMetadata:
        return CleanMetadata.from_avro(self.read_avro(clean), f"clean {clean.timestamp}")

    def savepoint(self, savepoint: Instant) -> SavepointInfo:
        return SavepointInfo.from_avro(self.read_avro(savepoint), savepoint.timestamp)

    def requested_replace(self, replace: Instant) -> RequestedReplaceMetadata | None:
        """What a requested replace commit is for; None when its file is empty (as Java's
        insert overwrite leaves it)."""
        requested = replace.with_state(State.REQUESTED)
        if not self.read_content(requested).strip():
            return None
        return RequestedReplaceMetadata.from_avro(self.read_avro(requested), f"requested replace {replace.timestamp}")

    def rolled_back(self) -> frozenset[str]:
        """Instant times the rollbacks on this timeline undo. Files such an instant wrote
        are never committed, even when it is older than every instant left on the timeline
        and so would otherwise pass for archived (a writer that kept writing after another
        writer rolled its first instant back). Each rollback is read once for a timeline
        and the reloads after it."""
        out: set[str] = set()
        for rb in self.filter([Action.ROLLBACK]):
            path = self._rollback_file(rb)
            if path not in self._undone:
                try:
                    doc = self.read_avro(rb if rb.is_completed else rb.with_state(State.REQUESTED))
                except InstantNotFoundError:
                    continue  # removed since the listing: the next snapshot will not have it
                if rb.is_completed:
                    self._undone[path] = RollbackMetadata.from_avro(doc, f"rollback {rb.timestamp}").commits_rollback
                else:
                    self._undone[path] = (RollbackPlan.target_of(doc, rb.timestamp).timestamp,)
            out.update(self._undone[path])
        return frozenset(out)

    def _rollback_file(self, rb: Instant) -> str:
        """The file naming what a rollback undoes: its metadata once completed, else its plan."""
        return self.instant_path(rb if rb.is_completed else rb.with_state(State.REQUESTED))

    def replaced_file_groups(self, instants: Iterable[Instant]) -> dict[str, set[str]]:
        """Partition → ids of the file groups that the completed replace commits among
        ``instants`` replaced (their ``partitionToReplaceFileIds``)."""
        out: dict[str, set[str]] = {}
        for inst in instants:
            if inst.action == Action.REPLACE_COMMIT and inst.is_completed:
                for partition, ids in self.commit_metadata(inst).replaced_file_ids().items():
                    out.setdefault(partition, set()).update(ids)
        return out

    # --- writing (layout 1 only) ------------------------------------------------------------
    def new_instant_time(self, after: str = "") -> str:
        """A UTC instant strictly greater than every instant on this timeline (and than
        ``after``). It waits up to :data:`CLOCK_SKEW_WAIT` for the clock to pass the newest
        instant; an instant further ahead raises :class:`TimelineError` naming it."""
        newest = max(
            [(i.time, str(i)) for i in self.instants]
            + [(InstantTime(i.completion_time), f"{i} (completed at {i.completion_time})") for i in self.instants if i.completion_time]
            + [(InstantTime(after), after)],
            key=lambda pair: pair[0],
        )
        floor = newest[0]
        now = datetime.now(timezone.utc)
        if floor > InstantTime(format_instant(now + CLOCK_SKEW_WAIT)):
            raise TimelineError(
                f"no new instant time for {self.base_path}: instant {newest[1]} is ahead of this machine's clock ({format_instant(now)})"
                f" by more than the {CLOCK_SKEW_WAIT.seconds} s a writer waits for another writer's clock"
            )
        # a clock set back while waiting must not make this wait for ever
        deadline = time.monotonic() + 2 * CLOCK_SKEW_WAIT.total_seconds()
        while True:
            candidate = format_instant(datetime.now(timezone.utc))
            if InstantTime(candidate) > floor:
                return candidate
            if time.monotonic() > deadline:
                raise TimelineError(f"no new instant time for {self.base_path}: the clock did not pass instant {newest[1]} (it went back?)")
            time.sleep(0.001)

    def _require_writable(self) -> None:
        if self.layout_version != 1:
            raise TimelineError(f"{self.base_path}: hoodie writes timeline layout 1 (table version 6) only")

    def request_new(self, action: str, content: bytes = b"") -> Instant:
        """Create ``<t>.<action>.requested`` at a new instant time ``t``; another writer that
        took the same millisecond makes this one take the next."""
        self._require_writable()
        tried = ""
        for _ in range(100):
            requested = Instant(self.new_instant_time(after=tried), action, State.REQUESTED)
            tried = requested.timestamp
            try:
                self.storage.create_new(self.instant_path(requested), content)
            except FileAlreadyExistsError:
                continue
            # another action may have taken the same time in the same millisecond: both
            # see each other and step back, to a time chosen after a random pause
            ours = requested.file_name(self.layout_version)
            if not any(f.name.startswith(f"{tried}.") and f.name != ours for f in self.storage.list_dir(self.timeline_dir)):
                return requested
            self.storage.delete(self.instant_path(requested))
            time.sleep(random.uniform(0.001, 0.02))
        raise TimelineError(f"no free instant time for a new {action} in {self.timeline_dir} after 100 tries (last {tried})")

    def create_requested(self, instant: Instant, content: bytes = b"") -> Instant:
        self._require_writable()
        requested = instant.with_state(State.REQUESTED)
        self._create(requested, content)
        return requested

    def transition_to_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        self._require_writable()
        if not self.storage.exists(self.instant_path(instant.with_state(State.REQUESTED))):
            raise TimelineError(f"cannot move {instant} to inflight: it was never requested")
        inflight = instant.with_state(State.INFLIGHT)
        self._create(inflight, content)
        return inflight

    def transition_to_completed(self, instant: Instant, content: bytes) -> Instant:
        """The commit point: the completed file appears atomically, exactly once. The
        completion hook (the metadata table's update) runs first, both under the table's
        commit lock (another writer's update of the metadata table waits; a commit
        already holds it); a table that keeps a metadata table refuses to complete an
        instant without it."""
        self._require_writable()
        if not self.storage.exists(self.instant_path(instant.with_state(State.INFLIGHT))):
            raise TimelineError(f"cannot complete {instant}: it is not inflight")
        hook = self.completion_hook
        if hook is None and self.hook_required:
            raise TimelineError(
                f"cannot complete {instant} of {self.base_path}: the table keeps a metadata table (hoodie.table.metadata.partitions) "
                "and this writer was not given its update"
            )
        completed = instant.with_state(State.COMPLETED)
        if hook is None:
            self._create(completed, content)
            return completed
        with write_claims.commit_lock(self.storage, self.base_path, instant.timestamp):
            if self.storage.exists(self.instant_path(completed)):
                # another process completed it meanwhile (two resuming one rollback): its
                # metadata update stands, not redone with this attempt's content
                raise self._already_exists(completed)
            hook(self, instant, content)  # the metadata table first
            self._create(completed, content)
        return completed

    def delete_instant_files(self, instant: Instant, states: Iterable[State] = (State.REQUESTED, State.INFLIGHT, State.COMPLETED)) -> None:
        """Remove an instant's files, completed first so readers never see a dangling state."""
        for state in sorted(states, key=lambda s: -STATE_ORDER[s]):
            self.storage.delete(self.instant_path(instant.with_state(state)))

    def _create(self, instant: Instant, content: bytes) -> None:
        try:
            self.storage.create_new(self.instant_path(instant), content)
        except FileAlreadyExistsError:
            raise self._already_exists(instant) from None

    def _already_exists(self, instant: Instant) -> TimelineError:
        return TimelineError(f"instant file {instant.file_name(self.layout_version)} already exists in {self.timeline_dir}")
