"""Keeping a table's metadata table in step with it: every instant that completes on the
data table updates the metadata table first.

One mechanism, not one per caller: :class:`MetadataSync` is the data timeline's
completion hook (:meth:`hoodie.timeline.active.ActiveTimeline.transition_to_completed`
runs it before the completed file appears). It turns the completed action into records
(:mod:`.conversion`) and applies them as a delta commit at the same instant
(:meth:`.MetadataWriter.apply`); for a rollback or a restore it then undoes the delta
commits of the data instants they undid, so that files of a rolled-back write never
appear in the metadata table (Apache Hudi 0.15's ``update(HoodieRollbackMetadata)``). A
delta commit the metadata table already compacted into its base files cannot be undone:
the restore (or rollback) then builds the metadata table again within its own completion,
every partition it had, from one listing of the data table as the restore left it, and
applies its own delta commit on top. Apache Hudi 0.15 restores its metadata table to the
savepoint instead, and refuses when the metadata table's cleaner already removed the
slices it would need; the rebuild needs no older slice. Readers list storage while it is
rebuilt; it is complete again before the restore completes.

All of it runs under the data table's commit lock (the timeline takes it around the
hook), on the tables as they are then.

A table whose ``hoodie.properties`` names metadata partitions refuses to complete an
instant without the hook, so every writer installs it when it opens the table for writing
(:func:`with_metadata_sync`); a write also initialises or deletes the metadata table as
``hoodie.metadata.enable`` says (:func:`prepare_metadata_table`, :func:`initialise`).

Each sync (conversion, delta commit and undoing) is recorded as
:data:`~.metrics.SYNC` by the completed data action, each partition built as
:data:`~.metrics.INITIALIZE`, in the metrics the hook or the initialisation is given.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from hoodie.errors import TableError
from hoodie.layout import HOODIE_FOLDER, InstantTime
from hoodie.metadata_table.conversion import MdtRecords, records_for_action, records_for_listing
from hoodie.metadata_table.metrics import SYNC, MetadataMetrics
from hoodie.metadata_table.reader import unsynced_instants
from hoodie.metadata_table.settings import PARTITION_ORDER, MetadataSettings
from hoodie.metadata_table.stats import INFLIGHT_PARTITIONS
from hoodie.metadata_table.validate import committed_file_sizes
from hoodie.metadata_table.writer import MetadataWriter, Progress, delete_metadata_table, keeps_metadata_table, metadata_path, written_partitions
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.table.properties_file import load_table_config
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant, State
from hoodie.timeline.rollback_metadata import RestoreMetadata, RollbackMetadata
from hoodie.timeline.write_claims import commit_lock

__all__ = ["MetadataSync", "initialise", "prepare_for_services", "prepare_metadata_table", "setup_lock", "table_listing", "with_metadata_sync"]

log = logging.getLogger(__name__)


class MetadataSync:
    """The completion hook of a data table at ``base_path`` (see the module docstring);
    its syncs recorded in ``metrics`` (its own when not given)."""

    def __init__(self, base_path: str, storage: Storage, settings: MetadataSettings, metrics: MetadataMetrics | None = None) -> None:
        self.base_path = base_path
        self.storage = storage
        self.settings = settings
        self.metrics = metrics if metrics is not None else MetadataMetrics()

    def __call__(self, timeline: ActiveTimeline, instant: Instant, content: bytes) -> None:
        started = time.perf_counter()
        applied = self._sync(instant, content)
        if applied is not None:
            self.metrics.record(SYNC, instant.action, time.perf_counter() - started, records=applied)

    def _sync(self, instant: Instant, content: bytes) -> int | None:
        """Apply the completed ``instant`` to the metadata table; the records applied
        (None: the table has none)."""
        # one read when there is nothing to keep: hoodie.properties, as it is now
        if not load_table_config(self.storage, under(self.base_path, HOODIE_FOLDER)).metadata_partitions:
            return None  # no complete metadata table (deleted, or its first partition not built)
        data = HoodieTable.open(self.base_path, self.storage)
        partitions = data.config.metadata_partitions
        writer = MetadataWriter(data, self.settings)
        if not writer.exists():
            raise TableError(
                f"{self.base_path}: hoodie.properties names metadata partitions {','.join(partitions)} but there is no "
                f"metadata table at {writer.path}; delete it (hoodie metadata delete) or write with hoodie.metadata.enable=true to rebuild it"
            )
        completed = instant.with_state(State.COMPLETED)
        records = records_for_action(data, completed, content, partitions, self.settings)
        applied = sum(len(rs) for p, rs in records.items() if p in partitions)
        undone = _undone(instant, content)
        if undone:  # (a rollback or restore: only then is the metadata table's timeline needed here)
            mdt = writer.open()
            # only the undone instants the metadata table holds a delta commit of: a write
            # rolled back before it completed (another writer's, found pending) has none
            held = {i.timestamp for i in mdt.timeline.instants if i.action == Action.DELTA_COMMIT}
            undone = [t for t in undone if t in held]
            compacted = _last_compaction(mdt)
            if compacted is not None and any(InstantTime(t) <= InstantTime(compacted) for t in undone):
                # their records are in the metadata table's base files: nothing to undo them by
                self._rebuild(data, instant, records, compacted, undone)
                return applied
        writer.apply(instant.timestamp, records)
        for target in sorted(undone, key=InstantTime, reverse=True):
            writer.undo(target)
        return applied

    def _rebuild(self, data: HoodieTable, instant: Instant, records: MdtRecords, compacted: str, undone: list[str]) -> None:
        """The metadata table built again, with every partition it had, from one listing
        of the data table as ``instant`` (a restore or rollback, all its undoing done)
        left it; then ``instant``'s own delta commit (the rollback logs it wrote, which
        no completed instant names yet)."""
        had = data.config.metadata_partitions
        log.info(
            "metadata table of %s: %s %s undoes instants it compacted at %s (%s): building %s again from a listing",
            self.base_path, instant.action, instant.timestamp, compacted, ", ".join(undone), ",".join(had),
        )
        settings = self.settings.keeping(had)
        table = initialise(delete_metadata_table(data), settings, metrics=self.metrics)
        MetadataWriter(table, settings).apply(instant.timestamp, records)


def _undone(instant: Instant, content: bytes) -> list[str]:
    """The data instants a completing rollback or restore undid."""
    source = f"{instant.action} {instant.timestamp}"
    if instant.action == Action.ROLLBACK:
        return list(RollbackMetadata.from_avro(avro.decode(content, source), source).commits_rollback)
    if instant.action == Action.RESTORE:
        return [i.timestamp for i in RestoreMetadata.from_avro(avro.decode(content, source), source).undone]
    return []


def _last_compaction(mdt: HoodieTable) -> str | None:
    """The metadata table's last completed compaction (a ``commit`` on its timeline)."""
    done = mdt.timeline.completed([Action.COMMIT])
    return done[-1].timestamp if done else None


def with_metadata_sync(table: HoodieTable, settings: MetadataSettings, metrics: MetadataMetrics | None = None) -> HoodieTable:
    """``table`` whose completions update its metadata table first (a no-op while it has
    none), recorded in ``metrics``."""
    return table.with_completion_hook(MetadataSync(table.base_path, table.storage, settings, metrics))


@contextmanager
def setup_lock(table: HoodieTable) -> Iterator[HoodieTable]:
    """``table`` reloaded under its commit lock (its hook kept), for creating, building or
    deleting its metadata table: no other writer's update of it lands in between."""
    with commit_lock(table.storage, table.base_path, "metadata-table-setup"):
        yield table.reload()


def prepare_metadata_table(table: HoodieTable, settings: MetadataSettings) -> HoodieTable:
    """Before a write recovers the table: ``hoodie.metadata.enable=false`` deletes the
    metadata table (as Apache Hudi does). Otherwise the table's completions update it,
    and it is deleted to be built again (:func:`_why_build_again`) when it is out of sync
    with the table, when it has a complete partition the write's options no longer enable
    (which is so dropped, as Apache Hudi 0.15's writers drop it), or when another writer
    dropped one Apache Hudi 0.15's way. The write then calls :func:`initialise` once
    failed writes are rolled back, which builds what is missing (the partitions the write
    enables). Decided and done under the table's commit lock, on the table as it is then."""
    if not keeps_metadata_table(table):
        return with_metadata_sync(table, settings)  # nothing to delete or check
    with setup_lock(table) as table:
        if not settings.enable:
            table = delete_metadata_table(table)
        elif why := _why_build_again(table, settings):
            log.warning("the metadata table of %s %s: building it again from a listing", table.base_path, why)
            table = delete_metadata_table(table)
    return with_metadata_sync(table, settings)


def prepare_for_services(table: HoodieTable, settings: MetadataSettings) -> HoodieTable:
    """Before a table service (compaction, clean, archival, savepoint, restore) changes
    ``table``: the metadata table is checked as a write checks it, under the table's
    commit lock, and built again from one listing when it lacks completed instants of the
    table or another writer dropped one of its partitions Apache Hudi's way
    (:func:`_why_build_again`), so that the service's completion updates a metadata table
    that its own compaction and clean, and every reader of it, can use. Apache Hudi's
    table services do the same: each one's metadata writer
    (``HoodieSparkTable.getMetadataWriter``) checks and initialises the metadata table
    as a write's does.

    Built again with the partitions the table names: a service is not given the write's
    index options, so it neither drops a partition nor adds one (a write does, from its
    options). With ``hoodie.metadata.enable=false`` nothing is checked; the table's
    completions update the metadata table it keeps, as before. The lock is taken only
    when the check, made first without it, finds something (a service does not wait for
    a writer's commit to open a sound table), and the check is made again under it."""
    if not settings.enable or not keeps_metadata_table(table) or _why_build_again(table, settings.keeping(table.config.metadata_partitions)) is None:
        return with_metadata_sync(table, settings)
    with setup_lock(with_metadata_sync(table, settings)) as current:
        kept = settings.keeping(current.config.metadata_partitions)
        why = _why_build_again(current, kept)
        if why is None:
            return current
        log.warning("the metadata table of %s %s: building it again from a listing before the table service", current.base_path, why)
        return _initialise(delete_metadata_table(current), kept, None, None)


def _why_build_again(table: HoodieTable, settings: MetadataSettings) -> str | None:
    """Why the metadata table ``table`` keeps cannot be kept as it is (None: it can):

    * it lacks completed instants of the table (:func:`~.reader.unsynced_instants`: a
      writer that does not maintain it wrote since): kept, it would stay stale and
      readers would never use it;
    * it has a complete partition ``settings`` no longer enable
      (:meth:`.MetadataSettings.disabled`): no completion may maintain it any longer;
    * a partition is gone that its active timeline still names files of: Apache Hudi
      0.15 drops a partition by deleting its folder (and its name from
      ``hoodie.properties``), leaving completed instants that name files no longer
      there, which the metadata table's own views take for damage (its compaction and
      clean would fail on every write).

    For the last two, building it again without the partition is how hoodie drops one."""
    if not table.config.metadata_partitions or not table.storage.exists(metadata_path(table)):
        return None
    mdt = HoodieTable.open(metadata_path(table), table.storage).timeline
    unsynced = unsynced_instants(table.timeline, mdt)
    if unsynced:
        return f"lacks the completed instant(s) {', '.join(unsynced)} (written without maintaining it)"
    disabled = settings.disabled(table.config.metadata_partitions)
    if disabled:
        return f"keeps {', '.join(disabled)}, which this write's options no longer enable"
    gone = _dropped_folders(table, mdt)
    if gone:
        return f"has completed instants naming files of {', '.join(gone)}, whose folder another writer deleted (Apache Hudi's way of dropping it)"
    return None


def _dropped_folders(table: HoodieTable, mdt: ActiveTimeline) -> list[str]:
    """The metadata partitions ``table`` does not name (complete or being built) whose
    folder is gone while completed instants of the metadata table's timeline ``mdt``
    wrote to them."""
    named = {*table.config.metadata_partitions, *table.config.props.get(INFLIGHT_PARTITIONS, "").split(",")}
    gone = [p for p in PARTITION_ORDER if p not in named and not table.storage.exists(under(metadata_path(table), p))]
    if not gone:
        return []
    written = written_partitions(mdt)
    return [p for p in gone if p in written]


def table_listing(table: HoodieTable) -> dict[str, dict[str, int]]:
    """Every data partition's committed files (every slice, and replaced file groups the
    cleaner has not removed yet) and their sizes, from ONE listing: the local view as of
    the latest completed instant."""
    view = table.local_view()
    return {partition: committed_file_sizes(view, partition) for partition in view.all_partition_paths()}


def initialise(
    table: HoodieTable, settings: MetadataSettings, on_built: Progress | None = None, metrics: MetadataMetrics | None = None
) -> HoodieTable:
    """Build the enabled metadata partitions the table lacks (all of them on a table
    without a metadata table, one written by Apache Hudi without one or by an older
    hoodie included), from one listing; the table, reloaded, its hook kept. Each partition
    built is recorded in ``metrics``. Built under the table's commit lock."""
    wanted = settings.partitions
    if not wanted or set(wanted) <= set(table.config.metadata_partitions):
        return table
    with setup_lock(table) as current:
        # another writer may have built it meanwhile: decided on the table as it is now
        return _initialise(current, settings, on_built, metrics)


def _initialise(table: HoodieTable, settings: MetadataSettings, on_built: Progress | None, metrics: MetadataMetrics | None) -> HoodieTable:
    wanted = settings.partitions
    if set(wanted) <= set(table.config.metadata_partitions):
        return table
    started = time.monotonic()
    listing = table_listing(table)
    latest = table.timeline.completed()
    as_of = latest[-1].timestamp if latest else ""
    writer = MetadataWriter(table, settings, metrics)
    table = writer.initialise(wanted, listing, lambda partition, instant: records_for_listing(table, listing, [partition], settings, as_of), on_built)
    log.info("metadata table of %s initialised in %.2f s (%s)", table.base_path, time.monotonic() - started, ",".join(wanted))
    return table
