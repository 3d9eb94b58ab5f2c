"""The content of HFILE_DATA blocks (the metadata table's log blocks): a whole HFile whose
keys are record keys and whose values are the records in schemaless Avro binary of the
block's SCHEMA header, as Apache Hudi's ``HoodieHFileDataBlock`` writes them.

Like Java, the writer blanks the record's own key field (``key`` for the metadata table)
in the value, since the HFile key holds it, and the reader puts the HFile key back into
an empty key field. The HFile is written with Hudi's settings for log blocks (GZ, 1 MiB
blocks, the Avro schema under ``schema`` in the file info) by :mod:`hoodie.formats.hfile`.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import FormatError, SchemaError
from hoodie.formats.avro_nodes import AvroNode, parse_avro_schema
from hoodie.formats.avro_schema import avro_schema_to_arrow
from hoodie.formats.hfile import HFileReader, HFileSettings, encode_hfile
from hoodie.formats.log.avro_decode import decode_columns
from hoodie.formats.log.avro_encode import encode_records

__all__ = ["LOG_BLOCK_HFILE", "METADATA_KEY_FIELD", "decode_hfile_records", "encode_hfile_records"]

#: The key field of the metadata table's records (``HoodieMetadataPayload.KEY_FIELD_NAME``).
METADATA_KEY_FIELD = "key"
#: How Java writes the HFile of a log block: GZ, 1 MiB blocks, Hudi's comparator.
LOG_BLOCK_HFILE = HFileSettings()


@functools.lru_cache(maxsize=16)
def _compiled(schema_json: str) -> tuple[AvroNode, pa.Schema]:
    try:
        return parse_avro_schema(schema_json), avro_schema_to_arrow(schema_json)
    except SchemaError as exc:
        raise FormatError(f"HFILE_DATA block schema is unusable: {exc}") from exc


def encode_hfile_records(records: pa.Table, schema_json: str, key_field: str = METADATA_KEY_FIELD, settings: HFileSettings = LOG_BLOCK_HFILE) -> bytes:
    """An HFile of ``records`` keyed by their ``key_field`` (sorted here; a repeated or
    null key is an error naming it), values Avro-encoded with the key field blanked."""
    if key_field not in records.column_names:
        raise SchemaError(f"HFILE_DATA records have no key field {key_field!r}")
    keys = records.column(key_field)
    if keys.null_count:
        raise SchemaError(f"HFILE_DATA records hold a null {key_field!r}")
    # the HFile sorts keys by their UTF-8 bytes, which is how Arrow sorts strings
    order = pc.sort_indices(keys)
    records = records.take(order)
    key_list = [str(k) for k in records.column(key_field).to_pylist()]
    blanked = records.set_column(records.column_names.index(key_field), key_field, pa.array([""] * records.num_rows, records.schema.field(key_field).type))
    node, arrow_schema = _compiled(schema_json)
    values = encode_records(node, blanked, arrow_schema)
    return encode_hfile(zip(key_list, values), settings, schema=schema_json)


def decode_hfile_records(
    content: bytes,
    schema_json: str | None,
    key_field: str = METADATA_KEY_FIELD,
    keys: Iterable[str] | None = None,
    prefixes: Iterable[str] | None = None,
    name: str = "HFILE_DATA block",
) -> pa.Table:
    """The records of an HFILE_DATA content: all of them, or those whose key is one of
    ``keys`` (sorted), or starts with one of ``prefixes`` (sorted), in key order.

    The values are read with the schema the HFile records in its file info (the writer's),
    else ``schema_json`` (the block's SCHEMA header)."""
    reader = HFileReader.from_bytes(content, name)
    writer_schema = reader.schema or schema_json
    if writer_schema is None:
        raise FormatError(f"{name} has no schema: neither a SCHEMA header nor one in its HFile")
    if keys is not None:
        entries = list(reader.get_many(keys).items())
    elif prefixes is not None:
        entries = list(reader.scan_prefixes(prefixes))
    else:
        entries = reader.read_all()
    node, arrow_schema = _compiled(writer_schema)
    buf = b"".join(v for _, v in entries)
    spans, pos = [], 0
    for _, value in entries:
        spans.append((pos, pos + len(value)))
        pos += len(value)
    try:
        table = decode_columns(node, buf, spans, arrow_schema)
    except FormatError as exc:
        raise FormatError(f"{name}: {exc}") from exc
    if key_field in table.column_names:
        stored = table.column(key_field).to_pylist()
        restored = [v if v else k for v, (k, _) in zip(stored, entries)]
        table = table.set_column(table.column_names.index(key_field), table.schema.field(key_field), pa.array(restored, table.schema.field(key_field).type))
    return table
