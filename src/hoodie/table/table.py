"""Open or create a table; the entry point to its config, timeline and views.

``HoodieTable`` is a read-only handle: it never writes data files or instants (the write
client does). ``create`` only lays down an empty table (``.hoodie`` and its properties).
Its views list storage unless it is given a :class:`ListingSource` (its metadata table,
chosen by whoever opens the table for a read, a write or a service) or a view source.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol

import pyarrow as pa

from hoodie.config.table_config import TableConfig
from hoodie.errors import TableError, UnsupportedTableError
from hoodie.layout import (
    AUX_FOLDER,
    HOODIE_FOLDER,
    SCHEMA_FOLDER,
    TEMP_FOLDER,
    InstantTime,
)
from hoodie.storage.base import Storage
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.storage.paths import under
from hoodie.table.fs_view import FileSystemView, PartitionLister, TableView
from hoodie.table.properties_file import load_table_config, properties_exist, store_table_config
from hoodie.table.remote_view import ViewSource
from hoodie.table.synced_listings import SharedListings
from hoodie.timeline.active import ActiveTimeline, CompletionHook
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Instant


class ListingSource(Protocol):
    """What a table's views find partitions and files with instead of listing storage: a
    lister made for the table as it is loaded (its metadata table's reader sees the
    instants the table's timeline completed), or None to list storage after all.
    Picklable: a table goes to tasks with it."""

    def lister(self, table: HoodieTable) -> PartitionLister | None: ...


@dataclass(frozen=True)
class HoodieTable:
    """A Hudi table at ``base_path``: its config and a snapshot of its timeline."""

    base_path: str
    storage: Storage
    config: TableConfig
    timeline: ActiveTimeline
    # where the latest views come from: a timeline server, the listings an operation shares
    # in process (SharedListings), or None: a listing of storage for each view
    view_source: ViewSource | SharedListings | None = None
    # what its views list partitions and files with: None lists storage
    listing: ListingSource | None = None

    # --- open / create ----------------------------------------------------------------------
    @staticmethod
    def exists(path: str, storage: Storage | None = None) -> bool:
        path = normalize_path(path)
        storage = storage or storage_for(path)
        return properties_exist(storage, under(path, HOODIE_FOLDER))

    @classmethod
    def open(cls, path: str, storage: Storage | None = None) -> HoodieTable:
        path = normalize_path(path)
        storage = storage or storage_for(path)
        meta = under(path, HOODIE_FOLDER)
        try:
            config = load_table_config(storage, meta)
        except TableError:
            if not storage.exists(meta):
                raise TableError(f"no Hudi table at {path} (missing .hoodie/hoodie.properties)") from None
            raise
        config.validate_readable(path)
        # a table keeping a metadata table completes instants only through its update
        timeline = ActiveTimeline.load(storage, path, config.timeline_layout_version, config.timeline_path, bool(config.metadata_partitions))
        return cls(path, storage, config, timeline)

    @classmethod
    def create(cls, path: str, props: Mapping[str, str], storage: Storage | None = None) -> HoodieTable:
        """Initialise an empty v6 table with the given ``hoodie.properties`` entries."""
        path = normalize_path(path)
        storage = storage or storage_for(path)
        meta = under(path, HOODIE_FOLDER)
        config = TableConfig(dict(props))
        for sub in (
            under(AUX_FOLDER, ".bootstrap", ".partitions"),
            under(AUX_FOLDER, ".bootstrap", ".fileids"),
            SCHEMA_FOLDER,
            TEMP_FOLDER,
            config.archive_folder,
        ):
            storage.makedirs(under(meta, sub, source="hoodie.properties"))
        store_table_config(config, storage, meta, create=True)
        return cls.open(path, storage)

    def require_writable(self, what: str = "write to") -> None:
        """Refuse to change a table hoodie cannot write: only version 6 (timeline layout 1)."""
        if self.config.version != 6 or self.config.timeline_layout_version != 1:
            raise UnsupportedTableError(
                f"cannot {what} {self.base_path}: it is a version {self.config.version} table and hoodie writes version 6 tables only"
            )

    def reload(self) -> HoodieTable:
        """The same table with a freshly loaded config and timeline (and the same
        completion hook)."""
        fresh = HoodieTable.open(self.base_path, self.storage)
        return replace(fresh, timeline=fresh.timeline.with_completion_hook(self.timeline.completion_hook), view_source=self.view_source, listing=self.listing)

    def with_completion_hook(self, hook: CompletionHook | None) -> HoodieTable:
        """The same table whose timeline runs ``hook`` before each instant it completes
        (the metadata table's update)."""
        return replace(self, timeline=self.timeline.with_completion_hook(hook))

    def served_by(self, source: ViewSource | SharedListings | None) -> HoodieTable:
        """The same table with its latest views from ``source``."""
        return replace(self, view_source=source)

    def listed_by(self, source: ListingSource | None) -> HoodieTable:
        """The same table with its views' partitions and files from ``source`` (None:
        listings of storage)."""
        return replace(self, listing=source)

    def lister(self) -> PartitionLister | None:
        """The lister of this table's views as of its loaded timeline (None: storage)."""
        return self.listing.lister(self) if self.listing is not None else None

    # --- paths ------------------------------------------------------------------------------
    @property
    def meta_path(self) -> str:
        return under(self.base_path, HOODIE_FOLDER)

    @property
    def archive_path(self) -> str:
        """The archived timeline's folder (:attr:`TableConfig.archive_folder`)."""
        parent = self.timeline.timeline_dir if self.timeline.layout_version >= 2 else self.meta_path
        return under(parent, self.config.archive_folder, source="hoodie.properties")

    @property
    def temp_path(self) -> str:
        return under(self.meta_path, TEMP_FOLDER)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def table_type(self) -> str:
        return self.config.table_type

    # --- views and schema -------------------------------------------------------------------
    def view(self, as_of: str | None = None, ignore_missing_files: bool = False) -> TableView:
        """The file groups of the table as of ``as_of`` (default: the latest completed
        instant): from :attr:`view_source` for the latest view (a timeline server, or the
        listings an operation shares), else (and for time travel and reads around missing
        files) from its :attr:`listing` or listings of storage."""
        if self.view_source is None or as_of is not None or ignore_missing_files:
            return self.local_view(as_of, ignore_missing_files)
        return self.view_source.view(self.base_path, self.timeline, self.local_view, self.lister)

    def local_view(
        self, as_of: str | None = None, ignore_missing_files: bool = False, archived: Sequence[tuple[Instant, CommitMetadata]] = ()
    ) -> FileSystemView:
        """A view built in process from the timeline and the table's :attr:`listing`, or
        listings of storage (and checked against the ``archived`` commits' files too, when
        given: :mod:`hoodie.table.archived`)."""
        return FileSystemView(self.storage, self.base_path, self.timeline, as_of, ignore_missing_files, archived=archived, lister=self.lister())

    def storage_view(self) -> FileSystemView:
        """A view listing storage whatever the table's :attr:`listing`: for those that
        look for files no completed instant names (a failed write's, a log version being
        appended), which a metadata table never holds."""
        return FileSystemView(self.storage, self.base_path, self.timeline)

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        return self.timeline.commit_metadata(instant)

    def latest_avro_schema(self, as_of: str | None = None) -> str | None:
        """Writer schema (Avro JSON, no meta fields) of the latest completed write ≤ ``as_of``."""
        for inst in reversed(self.timeline.completed_writes()):
            # InstantTime: a 14-digit (second) as-of covers that whole second, as in the view
            if as_of is not None and inst.time > InstantTime(as_of):
                continue
            schema = self.commit_metadata(inst).schema
            if schema:
                return schema
        return self.config.create_schema

    @cached_property
    def _schema_cache(self) -> dict[str | None, pa.Schema | None]:
        return {}

    def data_schema(self, as_of: str | None = None) -> pa.Schema | None:
        """Arrow schema of the data columns (no meta fields), or None for an empty table."""
        if as_of not in self._schema_cache:
            from hoodie.formats.avro_schema import avro_schema_to_arrow

            avro = self.latest_avro_schema(as_of)
            self._schema_cache[as_of] = avro_schema_to_arrow(avro) if avro else None
        return self._schema_cache[as_of]
