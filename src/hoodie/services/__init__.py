"""Table services: rollback of failed writes, compaction, cleaning, savepoints and
restore, archival, and the inline runner that writers call after a commit.

Each service plans first (a pure step that also says why it would not run), saves the
plan as a requested instant, executes idempotently (a crashed run is finished by the
next one) and completes with Hudi's Avro metadata.

Its public API is what this package exports; the CLI uses nothing else of it.
"""
from __future__ import annotations

from hoodie.services.archival import ArchiveResult, ArchiveSettings, archive, plan_archive
from hoodie.services.cleaning import CleanPlan, CleanPolicy, CleanResult, CleanSettings, clean, pending_cleans, plan_clean, run_clean, schedule_clean
from hoodie.services.compaction import (
    CompactionDecision,
    CompactionSettings,
    compact,
    pending_compactions,
    plan_compaction,
    register_compaction_strategy,
    run_compaction,
    schedule_compaction,
)
from hoodie.services.decision import ServiceDecision
from hoodie.services.inline import archive_settings, clean_settings, compaction_settings
from hoodie.services.opening import open_for_services
from hoodie.services.restore import RestoreResult, instants_to_restore, pending_restore, restore_to, resume_restore
from hoodie.services.savepoint import SavepointInfo, create_savepoint, delete_savepoint, list_savepoints, savepoint_instants

__all__ = [
    "ArchiveResult",
    "ArchiveSettings",
    "CleanPlan",
    "CleanPolicy",
    "CleanResult",
    "CleanSettings",
    "CompactionDecision",
    "CompactionSettings",
    "RestoreResult",
    "SavepointInfo",
    "ServiceDecision",
    "archive",
    "archive_settings",
    "clean",
    "clean_settings",
    "compact",
    "compaction_settings",
    "create_savepoint",
    "delete_savepoint",
    "instants_to_restore",
    "list_savepoints",
    "open_for_services",
    "pending_cleans",
    "pending_compactions",
    "pending_restore",
    "plan_archive",
    "plan_clean",
    "plan_compaction",
    "register_compaction_strategy",
    "restore_to",
    "resume_restore",
    "run_clean",
    "run_compaction",
    "savepoint_instants",
    "schedule_clean",
    "schedule_compaction",
]
