"""The commit protocol of one write, run on the driver.

``begin`` creates ``<t>.<action>.requested``; ``mark_inflight`` writes the planned
workload as ``<t>.inflight``; data files are written (each after its marker); ``commit``
deletes files of failed or duplicate task attempts (markers without a write stat),
writes the completed instant atomically and exactly once, then drops the markers. If
anything fails before the completed instant exists, ``abort`` rolls the write back; a
writer killed outright is rolled back by the next writer.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa

from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.markers import DirectMarkers
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.commit_metadata import STORAGE_CALLS, CommitMetadata, WriteStat
from hoodie.timeline.instant import Action, Instant, State
from hoodie.writer.table_services import TableServices

log = logging.getLogger(__name__)

REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table")


def operation_type_name(operation: str) -> str:
    return operation.upper()


def action_for(operation: str, table_type: str) -> str:
    if operation in REPLACE_OPERATIONS:
        return Action.REPLACE_COMMIT
    return Action.DELTA_COMMIT if table_type == "MERGE_ON_READ" else Action.COMMIT


@dataclass
class WriteTransaction:
    table: HoodieTable
    operation: str
    instant: Instant
    services: TableServices  # rolls the instant back if the write fails

    @property
    def instant_time(self) -> str:
        return self.instant.timestamp

    @property
    def markers(self) -> DirectMarkers:
        return DirectMarkers(self.table.storage, self.table.base_path, self.instant_time)

    @classmethod
    def begin(cls, table: HoodieTable, operation: str, services: TableServices) -> WriteTransaction:
        timeline = table.timeline.reload()
        action = action_for(operation, table.table_type)
        instant = Instant(timeline.new_instant_time(), action, State.REQUESTED)
        content = b""
        if action == Action.REPLACE_COMMIT:
            content = avro.encode(avro.REQUESTED_REPLACE_METADATA, {"operationType": operation_type_name(operation), "extraMetadata": {}, "version": 1})
        timeline.create_requested(instant, content)
        return cls(table, operation, instant, services)

    def mark_inflight(self, workload: Mapping[str, Iterable[WriteStat]] | None = None) -> None:
        """Write ``<t>.inflight`` with the planned workload (partitions and file groups)."""
        planned = CommitMetadata(
            partition_to_write_stats={p: list(stats) for p, stats in (workload or {}).items()},
            operation_type=operation_type_name(self.operation),
        )
        self.table.timeline.transition_to_inflight(self.instant, planned.to_json_bytes())
        self.instant = self.instant.with_state(State.INFLIGHT)

    def commit(
        self,
        stats: list[WriteStat],
        data_schema: pa.Schema,
        replaced_file_ids: Mapping[str, list[str]] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        storage_calls: Callable[[], Mapping[str, int]] | None = None,
    ) -> CommitMetadata:
        """Make the write visible. Files written by tasks whose stats were not accepted
        (failed or duplicate attempts) are deleted first, so they never become visible.
        ``storage_calls`` says what the write cost in storage calls up to this point; the
        commit metadata records it (extra metadata :data:`STORAGE_CALLS`)."""
        self.markers.delete_unaccepted(stats)
        if storage_calls is not None:
            extra_metadata = {**(extra_metadata or {}), STORAGE_CALLS: json.dumps(dict(storage_calls()), sort_keys=True)}
        by_partition: dict[str, list[WriteStat]] = {}
        for s in stats:
            by_partition.setdefault(s.partitionPath, []).append(s)
        schema_json = avro_schema_json(arrow_to_avro_schema(data_schema, self.table.name))
        metadata = CommitMetadata(
            partition_to_write_stats=by_partition,
            operation_type=operation_type_name(self.operation),
            extra_metadata={"schema": schema_json, **(extra_metadata or {})},
            compacted=False,
            partition_to_replace_file_ids={p: list(ids) for p, ids in replaced_file_ids.items()} if replaced_file_ids is not None else None,
        )
        self.table.timeline.transition_to_completed(self.instant, metadata.to_json_bytes())
        self.instant = self.instant.with_state(State.COMPLETED)
        self.markers.delete_all()
        return metadata

    def abort(self) -> None:
        """Roll back a write that failed before completing (best effort; the next writer
        retries if this fails too)."""
        if self.instant.is_completed:
            return
        try:
            self.services.roll_back(self.table.reload(), self.instant)
        except Exception:  # the original error matters more; the next writer rolls back
            log.exception("rollback of failed write %s did not finish", self.instant_time)
