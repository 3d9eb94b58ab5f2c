"""The incremental source: another Hudi table's commits, pulled a few at a time.

As Apache Hudi's HoodieIncrSource: the checkpoint is the time of the last source commit
a batch pulled (its instant time on a version 6 table, its completion time on versions
8 and 9); the next batch pulls the changes of the next
``hoodie.streamer.source.hoodieincr.num_instants`` completed commits (an incremental
query, :func:`hoodie.query.read_incremental`: each changed record in its latest state as
of the batch's last commit). Without a checkpoint it starts at the source's first commit
(``READ_UPTO_LATEST_COMMIT``) or at its latest (``READ_LATEST``).

A job that fell behind the source's table services gets an error naming its checkpoint,
never a batch with changes missing: when the commits after the checkpoint were archived
(the source's timeline starts later), or when the source's latest clean kept only the
file slices needed from a commit after the batch's end (the slices as of that end may be
gone). Either way a restart with ``--checkpoint`` (a later source commit: the changes
in between are skipped) moves on; for cleaning, a larger ``num_instants`` lets a batch
reach the retained commits.
"""
from __future__ import annotations

from hoodie.errors import ConfigError, InstantNotFoundError
from hoodie.layout import InstantTime
from hoodie.query.planner import as_instant, has_archived_instants
from hoodie.storage.base import Storage
from hoodie.streamer.batches import InstantsBatch
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action, Instant

READ_UPTO_LATEST_COMMIT, READ_LATEST = "READ_UPTO_LATEST_COMMIT", "READ_LATEST"
FROM_THE_START = "000"  # Hudi's DEFAULT_BEGIN_TIMESTAMP: before any commit


class HoodieIncrSource:
    """The commits of the Hudi table at ``path``."""

    def __init__(self, path: str, storage: Storage | None = None, *, num_instants: int = 5,
                 missing_checkpoint: str = READ_UPTO_LATEST_COMMIT, drop_all_meta: bool = False) -> None:
        self.path = path
        self.storage = storage
        self.num_instants = num_instants
        self.missing_checkpoint = missing_checkpoint
        self.drop_all_meta = drop_all_meta

    def describe(self) -> str:
        return f"commits of the Hudi table {self.path}"

    def plan(self, checkpoint: str | None, source_limit: int | None = None) -> InstantsBatch | None:
        """The next batch after ``checkpoint``; None when the source has no newer commit.
        (``source_limit`` bounds file sources only; commits are bounded by ``num_instants``.)"""
        table = HoodieTable.open(self.path, self.storage)
        timeline = table.timeline
        writes = sorted(timeline.completed_writes(), key=lambda i: InstantTime(timeline.completion_time(i)))
        if checkpoint is None:
            begin = FROM_THE_START
            if self.missing_checkpoint == READ_LATEST and len(writes) > 1:
                begin = timeline.completion_time(writes[-2])
        else:
            try:
                begin = as_instant(checkpoint)
            except ValueError:
                raise ConfigError(f"checkpoint {checkpoint!r} is not an instant time of the source table {self.path}") from None
            self._check_not_archived(table, begin)
        new = [i for i in writes if InstantTime(timeline.completion_time(i)) > InstantTime(begin)]
        if not new:
            return None
        taken = new[: self.num_instants]
        end = timeline.completion_time(taken[-1])
        self._check_not_cleaned(table, begin, end)
        return InstantsBatch(
            self.path, begin, end, tuple(i.timestamp for i in taken), self.drop_all_meta, instants_behind=len(new) - len(taken)
        )

    def _check_not_archived(self, table: HoodieTable, begin: str) -> None:
        start = table.timeline.commits_start()
        if start is not None and InstantTime(begin) < InstantTime(start) and has_archived_instants(table):
            raise InstantNotFoundError(
                f"the streamer's checkpoint {begin} is behind the source table {self.path}: its active timeline starts at "
                f"{start} and the commits after {begin} were archived, so their changes can no longer be pulled; "
                f"restart with --checkpoint {start} or later (the changes in between are not pulled)"
            )

    def _check_not_cleaned(self, table: HoodieTable, begin: str, end: str) -> None:
        cleans: list[Instant] = table.timeline.completed([Action.CLEAN])
        if not cleans:
            return
        retained = table.timeline.cleaner_plan(cleans[-1]).earliest_instant_to_retain
        if retained is not None and InstantTime(end) < InstantTime(retained.timestamp):
            raise InstantNotFoundError(
                f"the streamer's checkpoint {begin} is behind the source table {self.path}'s cleaning: its clean "
                f"{cleans[-1].timestamp} kept only the file slices needed from {retained.timestamp}, after this batch's last "
                f"commit {end}, so the table as of {end} may be gone; raise "
                f"hoodie.streamer.source.hoodieincr.num_instants so that a batch reaches {retained.timestamp}, or restart "
                f"with --checkpoint {retained.timestamp} (the changes in between are not pulled)"
            )
