"""``.hoodie/hoodie.properties``: the table's identity, its typed views and its checksum.

This module only parses and renders; reading and writing the file (with Java's backup
protocol) is :mod:`hoodie.table.properties_file`.
"""
from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from hoodie.config.properties import parse_properties, render_properties
from hoodie.errors import TableError, UnsupportedTableError

PROPERTIES_FILE = "hoodie.properties"
BACKUP_FILE = "hoodie.properties.backup"
CHECKSUM_KEY = "hoodie.table.checksum"

KEYGEN_TYPE_TO_CLASS = {
    "SIMPLE": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "COMPLEX": "org.apache.hudi.keygen.ComplexKeyGenerator",
    "NON_PARTITION": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    "TIMESTAMP": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    "CUSTOM": "org.apache.hudi.keygen.CustomKeyGenerator",
}
SUPPORTED_READ_VERSIONS = (6, 8, 9)
VERSION_KEY = "hoodie.table.version"
LAYOUT_KEY = "hoodie.timeline.layout.version"


def timeline_layout_of(version: int) -> int:
    """The timeline layout Hudi gives a table version: 1 (flat ``.hoodie``) up to version 7,
    2 (``.hoodie/timeline``, completion times in names) from version 8 on."""
    return 1 if version < 8 else 2


def table_checksum(database: str, table: str) -> int:
    """CRC-32 of ``"<database>.<table>"`` (``HoodieTableConfig.generateChecksum``)."""
    return zlib.crc32(f"{database}.{table}".encode()) & 0xFFFFFFFF


@dataclass(frozen=True)
class TableConfig:
    """The parsed ``hoodie.properties`` of a table (all keys kept in ``props``)."""

    props: Mapping[str, str] = field(default_factory=dict)

    # --- typed views ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.props["hoodie.table.name"]

    @property
    def database(self) -> str:
        return self.props.get("hoodie.database.name", "")

    @property
    def table_type(self) -> str:
        return self.props.get("hoodie.table.type", "COPY_ON_WRITE")

    @property
    def version(self) -> int:
        return int(self.props.get(VERSION_KEY, "6"))

    @property
    def timeline_layout_version(self) -> int:
        return int(self.props.get(LAYOUT_KEY, timeline_layout_of(self.version)))

    @property
    def timeline_path(self) -> str:
        """Folder of the active timeline relative to ``.hoodie`` ("" for layout 1)."""
        return self.props.get("hoodie.timeline.path", "timeline") if self.timeline_layout_version >= 2 else ""

    @property
    def archive_folder(self) -> str:
        """Folder of the archived timeline: for layout 1 relative to ``.hoodie``
        (``hoodie.archivelog.folder``), for layout 2 the LSM history relative to the
        timeline folder (``hoodie.timeline.history.path``)."""
        if self.timeline_layout_version >= 2:
            return self.props.get("hoodie.timeline.history.path") or "history"
        return self.props.get("hoodie.archivelog.folder") or "archived"

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return _split(self.props.get("hoodie.table.recordkey.fields", ""))

    @property
    def partition_fields(self) -> tuple[str, ...]:
        # v8+ may write "field:type" for the custom key generator
        return tuple(p.split(":")[0] for p in _split(self.props.get("hoodie.table.partition.fields", "")))

    @property
    def precombine_field(self) -> str | None:
        value = self.props.get("hoodie.table.precombine.field") or self.props.get("hoodie.table.ordering.fields")
        return value.split(",")[0].strip() if value else None

    @property
    def keygen_class(self) -> str | None:
        cls = self.props.get("hoodie.table.keygenerator.class")
        if cls:
            return cls
        kg_type = self.props.get("hoodie.table.keygenerator.type")
        return KEYGEN_TYPE_TO_CLASS.get(kg_type.upper()) if kg_type else None

    @property
    def hive_style_partitioning(self) -> bool:
        return self.props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"

    @property
    def drop_partition_columns(self) -> bool:
        """Whether the data files were written without the partition columns (readers take
        their values from the partition path)."""
        return self.props.get("hoodie.datasource.write.drop.partition.columns", "false").lower() == "true"

    @property
    def url_encode_partitions(self) -> bool:
        return self.props.get("hoodie.datasource.write.partitionpath.urlencode", "false").lower() == "true"

    @property
    def populate_meta_fields(self) -> bool:
        return self.props.get("hoodie.populate.meta.fields", "true").lower() == "true"

    @property
    def base_file_format(self) -> str:
        return self.props.get("hoodie.table.base.file.format", "PARQUET").upper()

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields) and "Nonpartitioned" not in (self.keygen_class or "")

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        return _split(self.props.get("hoodie.table.metadata.partitions", ""))

    @property
    def create_schema(self) -> str | None:
        return self.props.get("hoodie.table.create.schema")

    def with_updates(self, updates: Mapping[str, str | None]) -> TableConfig:
        props = dict(self.props)
        for k, v in updates.items():
            if v is None:
                props.pop(k, None)
            else:
                props[k] = v
        return TableConfig(props)

    def validate_readable(self, path: str) -> None:
        if "hoodie.table.name" not in self.props:
            raise TableError(f"{path}: hoodie.properties has no hoodie.table.name")
        version = self.props.get(VERSION_KEY, "6").strip()
        if version not in {str(v) for v in SUPPORTED_READ_VERSIONS}:
            raise UnsupportedTableError(f"{path}: table version {version} is not supported (readable: 6, 8, 9)")
        # Hudi gives each table version one timeline layout; any other pairing (a version 6
        # table claiming layout 2) would have hoodie look for its instants in the wrong place
        # and read an empty table
        layout = self.props.get(LAYOUT_KEY)
        expected = timeline_layout_of(int(version))
        if layout is not None and layout.strip() != str(expected):
            raise UnsupportedTableError(
                f"{path}: hoodie.properties sets {LAYOUT_KEY}={layout!r} for a version {version} table;"
                f" hoodie reads version {version} tables with timeline layout {expected} only"
            )

    def render(self) -> bytes:
        """The file's bytes, with a fresh checksum as its last line (as Java writes it)."""
        props = dict(self.props)
        props[CHECKSUM_KEY] = str(table_checksum(props.get("hoodie.database.name", ""), props["hoodie.table.name"]))
        return render_properties(props, last_key=CHECKSUM_KEY)

    @staticmethod
    def parse(data: bytes) -> TableConfig | None:
        """The config in ``data``, or None when its checksum (or table name) is bad."""
        props = parse_properties(data.decode("utf-8"))
        return TableConfig(props) if _checksum_ok(props) else None


def _checksum_ok(props: Mapping[str, str]) -> bool:
    if "hoodie.table.name" not in props:
        return False
    stored = props.get(CHECKSUM_KEY)
    if stored is None:  # very old tables carry no checksum
        return True
    return stored.strip() == str(table_checksum(props.get("hoodie.database.name", ""), props["hoodie.table.name"]))


def _split(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())
