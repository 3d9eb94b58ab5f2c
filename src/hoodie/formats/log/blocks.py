"""The log block model: block kinds, header keys, and one frozen dataclass per block kind.

This module owns *what a block is*, not how it is encoded (see :mod:`.framing`,
:mod:`.content`, and :mod:`.hfile_content` for the HFile an HFILE_DATA block holds) or
read from a file (see :mod:`.reader`).

Every block carries a ``header`` and a ``footer``: plain dicts of :class:`HeaderKey` to
string. Their iteration order is the order the entries are written in. Java writes them
from a ``HashMap`` whose order depends on enum identity hash codes, so decoded blocks keep
the order found in the file (re-encoding then reproduces the bytes), and blocks built here
put the entries in key-ordinal order.

Blocks whose content has typed fields (the schema of an Avro block, the target of a
rollback command) keep those fields and the matching header entries in agreement: a
missing entry is added, a contradicting one is refused.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from hoodie.formats.avro_schema import avro_schema_json
from hoodie.formats.hfile import HFileSettings
from hoodie.formats.log.hfile_content import LOG_BLOCK_HFILE, METADATA_KEY_FIELD, decode_hfile_records, encode_hfile_records

__all__ = [
    "AvroDataBlock",
    "BlockType",
    "CdcDataBlock",
    "CommandBlock",
    "CommandType",
    "CorruptBlock",
    "DataBlock",
    "DeleteBlock",
    "DeleteRecord",
    "HFileDataBlock",
    "Header",
    "HeaderKey",
    "LogBlock",
    "OrderingType",
    "ParquetDataBlock",
]


class BlockType(enum.IntEnum):
    """``HoodieLogBlockType``: the int32 written after the format version."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2  # never written; what a reader reports for bytes it could not frame
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(enum.IntEnum):
    """``HeaderMetadataType``: the int32 key ordinal of header and footer entries."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


class CommandType(enum.IntEnum):
    """``HoodieCommandBlockTypeEnum``; the header stores the ordinal as a decimal string."""

    ROLLBACK_PREVIOUS_BLOCK = 0


Header = dict[HeaderKey, str]


class OrderingType(enum.Enum):
    """Branch of the ``orderingVal`` union of a delete record (``HoodieDeleteRecordList.avsc``).

    The union is ``[null, BooleanWrapper, IntWrapper, LongWrapper, FloatWrapper,
    DoubleWrapper, BytesWrapper, StringWrapper, DateWrapper, DecimalWrapper,
    TimeMicrosWrapper, TimestampMicrosWrapper, ArrayWrapper]``; each wrapper is a record
    with one field ``value``. ``ArrayWrapper`` (Hudi 1.1, several ordering fields) holds
    a list whose items use the same wrappers plus ``LocalDateWrapper``.
    """

    BOOLEAN = "boolean"
    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    BYTES = "bytes"
    STRING = "string"
    DATE = "date"
    DECIMAL = "decimal"
    TIME_MICROS = "time-micros"
    TIMESTAMP_MICROS = "timestamp-micros"
    ARRAY = "array"  # top level only
    LOCAL_DATE = "local-date"  # inside ARRAY only

    @classmethod
    def infer(cls, value: object) -> OrderingType | None:
        """The branch Java's ``wrapValueIntoAvro`` would pick for a Python value.

        Python has one integer type: ints that fit 32 bits become ``INT`` (Java's default
        ordering value ``0`` is an ``Integer``), larger ones ``LONG``. Pass an explicit
        type (see :meth:`for_arrow_type`) when the ordering field is a ``long``.
        """
        if value is None:
            return None
        if isinstance(value, bool):
            return cls.BOOLEAN
        if isinstance(value, int):
            return cls.INT if -(2**31) <= value < 2**31 else cls.LONG
        if isinstance(value, float):
            return cls.DOUBLE
        if isinstance(value, str):
            return cls.STRING
        if isinstance(value, (bytes, bytearray, memoryview)):
            return cls.BYTES
        if isinstance(value, decimal.Decimal):
            return cls.DECIMAL
        if isinstance(value, _dt.datetime):  # before date: datetime is a date subclass
            return cls.TIMESTAMP_MICROS
        if isinstance(value, _dt.date):
            return cls.DATE
        if isinstance(value, _dt.time):
            return cls.TIME_MICROS
        if isinstance(value, (tuple, list)):
            return cls.ARRAY
        raise TypeError(f"no Hudi ordering type for {type(value).__name__} value {value!r}")

    @classmethod
    def for_arrow_type(cls, arrow_type: pa.DataType) -> OrderingType:
        """The branch Java uses for values of an ordering column of this Arrow type."""
        t = arrow_type
        if pa.types.is_boolean(t):
            return cls.BOOLEAN
        if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
            return cls.INT
        if pa.types.is_integer(t):
            return cls.LONG
        if pa.types.is_float16(t) or pa.types.is_float32(t):
            return cls.FLOAT
        if pa.types.is_float64(t):
            return cls.DOUBLE
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return cls.STRING
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            return cls.BYTES
        if pa.types.is_decimal(t):
            return cls.DECIMAL
        if pa.types.is_date(t):
            return cls.DATE
        if pa.types.is_time(t):
            return cls.TIME_MICROS
        if pa.types.is_timestamp(t):
            return cls.TIMESTAMP_MICROS
        raise TypeError(f"Arrow type {t} cannot be a Hudi ordering value")


@dataclass(frozen=True)
class DeleteRecord:
    """One entry of a delete block: the key to delete and its ordering value.

    ``ordering_value`` defaults to ``0`` (Java's ``DeleteRecord.create`` default, an
    ``IntWrapper``; a delete with ordering 0 always wins in Java and hudi-rs).
    ``ordering_type`` is inferred from the value when not given (see
    :meth:`OrderingType.infer`); ``None`` only with a ``None`` value (the null branch,
    which hudi-rs 0.5.0 rejects). Decoded values are Python objects: ``date`` for DATE and
    LOCAL_DATE, an aware UTC ``datetime`` for TIMESTAMP_MICROS, ``int`` microseconds for
    TIME_MICROS, ``Decimal`` for DECIMAL, and for ARRAY a tuple of
    ``(OrderingType | None, value)`` pairs.
    """

    record_key: str | None
    partition_path: str | None
    ordering_value: Any = 0
    ordering_type: OrderingType | None = None

    def __post_init__(self) -> None:
        if self.ordering_type is None and self.ordering_value is not None:
            object.__setattr__(self, "ordering_type", OrderingType.infer(self.ordering_value))
        if self.ordering_value is None and self.ordering_type is not None:
            raise ValueError("a None ordering value has no ordering type")
        if self.ordering_type is OrderingType.LOCAL_DATE:
            raise ValueError("LOCAL_DATE is only valid inside an ARRAY ordering value")
        if self.ordering_type is OrderingType.ARRAY:
            items = []
            for item in self.ordering_value:
                if isinstance(item, tuple) and len(item) == 2 and (item[0] is None or isinstance(item[0], OrderingType)):
                    items.append(item)
                else:
                    items.append((OrderingType.infer(item), item))
            object.__setattr__(self, "ordering_value", tuple(items))


def _with_entry(header: Mapping[HeaderKey, str], key: HeaderKey, value: str, what: str) -> Header:
    """``header`` plus ``key: value``; refuses a different value already present."""
    present = header.get(key)
    if present is not None and present != value:
        raise ValueError(f"{what}: header {key.name}={present!r} contradicts {value!r}")
    out = dict(header)
    if present is None:
        out[key] = value
    return out


def _checked_header(header: Mapping[Any, str], what: str) -> Header:
    out: Header = {}
    for k, v in header.items():
        if not isinstance(k, HeaderKey):
            k = HeaderKey(k)
        if not isinstance(v, str):
            raise TypeError(f"{what}: header {k.name} value must be str, got {type(v).__name__}")
        out[k] = v
    return out


def _new_header(instant_time: str | None, extra: Mapping[HeaderKey, str] | None) -> Header:
    """A header for a block built here: entries in key-ordinal order."""
    entries: dict[HeaderKey, str] = dict(extra or {})
    if instant_time is not None:
        entries[HeaderKey.INSTANT_TIME] = instant_time
    return {k: entries[k] for k in sorted(entries)}


class LogBlock:
    """Base of every block kind; ``block_type`` says which kind it is."""

    block_type: ClassVar[BlockType]
    header: Header
    footer: Header

    @property
    def instant_time(self) -> str | None:
        """``INSTANT_TIME`` of the header: the write (or rollback) that produced the block."""
        return self.header.get(HeaderKey.INSTANT_TIME)


@dataclass(frozen=True)
class AvroDataBlock(LogBlock):
    """``AVRO_DATA``: records as Arrow, typed as :func:`avro_schema_to_arrow` types ``schema_json``.

    ``schema_json`` is the writer schema (with the five meta fields, as Java writes it);
    it is also the ``SCHEMA`` header entry.
    """

    block_type: ClassVar[BlockType] = BlockType.AVRO_DATA
    records: pa.Table
    schema_json: str
    header: Header = field(default_factory=dict)
    footer: Header = field(default_factory=dict)
    # the content bytes of ``records``, when already encoded (content.encode_together)
    encoded: bytes | bytearray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.schema_json, str):
            object.__setattr__(self, "schema_json", avro_schema_json(self.schema_json))
        header = _checked_header(self.header, "AVRO_DATA block")
        object.__setattr__(self, "header", _with_entry(header, HeaderKey.SCHEMA, self.schema_json, "AVRO_DATA block"))
        object.__setattr__(self, "footer", _checked_header(self.footer, "AVRO_DATA block footer"))

    @classmethod
    def create(
        cls,
        records: pa.Table,
        schema: str | Mapping[str, Any],
        instant_time: str,
        extra_header: Mapping[HeaderKey, str] | None = None,
    ) -> AvroDataBlock:
        """A new block of ``records`` written with Avro ``schema`` by ``instant_time``."""
        schema_json = schema if isinstance(schema, str) else avro_schema_json(schema)
        header = _new_header(instant_time, {**(extra_header or {}), HeaderKey.SCHEMA: schema_json})
        return cls(records, schema_json, header)


@dataclass(frozen=True)
class ParquetDataBlock(LogBlock):
    """``PARQUET_DATA``: the content is a whole Parquet file; ``records`` is its data."""

    block_type: ClassVar[BlockType] = BlockType.PARQUET_DATA
    records: pa.Table
    header: Header = field(default_factory=dict)
    footer: Header = field(default_factory=dict)
    # How the content is compressed when encoded (Java: hoodie.parquet.compression.codec);
    # not part of the block's identity: a decoded block reads whatever codec it has.
    compression: str = field(default="gzip", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "header", _checked_header(self.header, "PARQUET_DATA block"))
        object.__setattr__(self, "footer", _checked_header(self.footer, "PARQUET_DATA block footer"))

    @classmethod
    def create(
        cls,
        records: pa.Table,
        instant_time: str,
        schema: str | Mapping[str, Any] | None = None,
        extra_header: Mapping[HeaderKey, str] | None = None,
        compression: str = "gzip",
    ) -> ParquetDataBlock:
        """A new block; Java also puts the writer ``schema`` (with meta fields) in the header."""
        extra = dict(extra_header or {})
        if schema is not None:
            extra[HeaderKey.SCHEMA] = schema if isinstance(schema, str) else avro_schema_json(schema)
        return cls(records, _new_header(instant_time, extra), compression=compression)


@dataclass(frozen=True)
class DeleteBlock(LogBlock):
    """``DELETE``: keys deleted by the write ``INSTANT_TIME`` (Java also puts ``SCHEMA``)."""

    block_type: ClassVar[BlockType] = BlockType.DELETE
    keys: tuple[DeleteRecord, ...]
    header: Header = field(default_factory=dict)
    footer: Header = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(self.keys))
        object.__setattr__(self, "header", _checked_header(self.header, "DELETE block"))
        object.__setattr__(self, "footer", _checked_header(self.footer, "DELETE block footer"))

    @classmethod
    def create(
        cls,
        keys: list[DeleteRecord] | tuple[DeleteRecord, ...],
        instant_time: str,
        schema: str | Mapping[str, Any] | None = None,
        extra_header: Mapping[HeaderKey, str] | None = None,
    ) -> DeleteBlock:
        extra = dict(extra_header or {})
        if schema is not None:
            extra[HeaderKey.SCHEMA] = schema if isinstance(schema, str) else avro_schema_json(schema)
        return cls(tuple(keys), _new_header(instant_time, extra))


@dataclass(frozen=True)
class CommandBlock(LogBlock):
    """``COMMAND``: empty content; a rollback of every earlier block of ``target_instant``.

    The header holds ``INSTANT_TIME`` (the rollback instant), ``TARGET_INSTANT_TIME`` and
    ``COMMAND_BLOCK_TYPE`` (``"0"``); the last two are added from the fields if missing.
    """

    block_type: ClassVar[BlockType] = BlockType.COMMAND
    target_instant: str
    command: CommandType = CommandType.ROLLBACK_PREVIOUS_BLOCK
    header: Header = field(default_factory=dict)
    footer: Header = field(default_factory=dict)

    def __post_init__(self) -> None:
        header = _checked_header(self.header, "COMMAND block")
        header = _with_entry(header, HeaderKey.TARGET_INSTANT_TIME, self.target_instant, "COMMAND block")
        header = _with_entry(header, HeaderKey.COMMAND_BLOCK_TYPE, str(int(self.command)), "COMMAND block")
        object.__setattr__(self, "header", header)
        object.__setattr__(self, "footer", _checked_header(self.footer, "COMMAND block footer"))

    @classmethod
    def rollback(cls, instant_time: str, target_instant: str) -> CommandBlock:
        """The block Java appends when rolling back ``target_instant`` at ``instant_time``."""
        header = _new_header(
            instant_time,
            {
                HeaderKey.TARGET_INSTANT_TIME: target_instant,
                HeaderKey.COMMAND_BLOCK_TYPE: str(int(CommandType.ROLLBACK_PREVIOUS_BLOCK)),
            },
        )
        return cls(target_instant, CommandType.ROLLBACK_PREVIOUS_BLOCK, header)


@dataclass(frozen=True)
class HFileDataBlock(LogBlock):
    """``HFILE_DATA`` (metadata table): ``content`` is a whole HFile (kept as read, so a
    decoded block re-encodes to the same bytes) of the records keyed by record key; read
    them with :meth:`records`, build a block with :meth:`create`."""

    block_type: ClassVar[BlockType] = BlockType.HFILE_DATA
    content: bytes
    header: Header = field(default_factory=dict)
    footer: Header = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", bytes(self.content))
        object.__setattr__(self, "header", _checked_header(self.header, "HFileDataBlock"))
        object.__setattr__(self, "footer", _checked_header(self.footer, "HFileDataBlock footer"))

    @classmethod
    def create(
        cls,
        records: pa.Table,
        schema: str | Mapping[str, Any],
        instant_time: str,
        key_field: str = METADATA_KEY_FIELD,
        extra_header: Mapping[HeaderKey, str] | None = None,
        settings: HFileSettings = LOG_BLOCK_HFILE,
    ) -> HFileDataBlock:
        """A new block of ``records`` (Avro ``schema``, keyed by ``key_field``) written by
        ``instant_time``, encoded as Apache Hudi encodes them."""
        schema_json = schema if isinstance(schema, str) else avro_schema_json(schema)
        header = _new_header(instant_time, {**(extra_header or {}), HeaderKey.SCHEMA: schema_json})
        return cls(encode_hfile_records(records, schema_json, key_field, settings), header)

    def records(
        self,
        keys: Iterable[str] | None = None,
        prefixes: Iterable[str] | None = None,
        key_field: str = METADATA_KEY_FIELD,
    ) -> pa.Table:
        """The block's records in key order: all, those of ``keys`` (sorted), or those whose
        key starts with one of ``prefixes`` (sorted); only the HFile blocks needed are read."""
        return decode_hfile_records(self.content, self.header.get(HeaderKey.SCHEMA), key_field, keys, prefixes)


@dataclass(frozen=True)
class CdcDataBlock(LogBlock):
    """``CDC_DATA`` (change-data-capture log files), kept undecoded; hudi-rs rejects these."""

    block_type: ClassVar[BlockType] = BlockType.CDC_DATA
    content: bytes
    header: Header = field(default_factory=dict)
    footer: Header = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", bytes(self.content))
        object.__setattr__(self, "header", _checked_header(self.header, "CdcDataBlock"))
        object.__setattr__(self, "footer", _checked_header(self.footer, "CdcDataBlock footer"))


@dataclass(frozen=True)
class CorruptBlock(LogBlock):
    """Bytes ``[offset, offset + length)`` of a file that do not frame a complete block.

    A crash mid-write (or garbage) produces these; readers skip them, as Java does.
    ``reason`` says which check failed.
    """

    block_type: ClassVar[BlockType] = BlockType.CORRUPT
    offset: int
    length: int
    reason: str = ""
    header: Header = field(default_factory=dict, repr=False)
    footer: Header = field(default_factory=dict, repr=False)


DataBlock = AvroDataBlock | ParquetDataBlock
