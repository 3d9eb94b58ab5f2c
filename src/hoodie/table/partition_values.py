"""What a partition path says, exactly, about the values of the partition columns.

An engine can skip a partition's files only if it knows the partition column's value
there without reading them. A Hudi partition path is derived from the values (key generator,
hive-style ``field=``, URL encoding), but not always invertibly: the default partition
holds both nulls and empty strings, a timestamp-based key generator formats dates, a
value may contain ``/``. This module decides, per partition and field, whether the path
gives back the value exactly; :mod:`hoodie.spark.read`, :mod:`hoodie.query.skipping`
(``prune_partitions``) and :mod:`hoodie.query.dataset` (partition expressions of Arrow
fragments) use only such values. They are the values of the records written to that
partition; a record a global index updated in place with a new partition value keeps
the old partition's path (as in Apache Hudi, pruning by path does not find it by its new
value). Pure functions; no I/O.
"""
from __future__ import annotations

import datetime
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hoodie.config.table_config import TableConfig
from hoodie.layout import DEFAULT_PARTITION

# Key generators whose partition path segment is the value's text (Hudi's and hoodie's).
_VALUE_KEYGENS = {
    "org.apache.hudi.keygen.SimpleKeyGenerator",
    "org.apache.hudi.keygen.SimpleAvroKeyGenerator",
    "org.apache.hudi.keygen.ComplexKeyGenerator",
    "org.apache.hudi.keygen.ComplexAvroKeyGenerator",
}
# Segments that do not name one string value: the default partition holds null and "",
# and Hudi releases before 0.12 called it "default".
_AMBIGUOUS_STRINGS = {DEFAULT_PARTITION, "default"}
_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")


def exact_value(text: str, arrow_type: pa.DataType) -> tuple[bool, Any]:
    """``(True, value)`` when a column of ``arrow_type`` whose partition text is ``text``
    must hold ``value``; ``(False, None)`` when the text does not determine it."""
    is_string = pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    if text in _AMBIGUOUS_STRINGS and is_string:
        return False, None
    if text == DEFAULT_PARTITION:
        return True, None  # only a null has no text for a non-string column
    if is_string:
        return True, text
    if pa.types.is_integer(arrow_type) and _CANONICAL_INT.fullmatch(text):
        return True, int(text)
    if pa.types.is_date32(arrow_type):
        try:
            day = datetime.date.fromisoformat(text)
        except ValueError:
            return False, None
        return day.isoformat() == text, day
    if pa.types.is_boolean(arrow_type) and text in ("true", "false"):
        return True, text == "true"
    return False, None


@dataclass(frozen=True)
class PartitionScheme:
    """How a table's partition paths are made from its partition fields."""

    fields: tuple[str, ...]
    hive_style: bool
    url_encoded: bool
    value_paths: bool  # each path segment is a value's text (Simple/Complex key generators)

    @classmethod
    def of(cls, config: TableConfig) -> PartitionScheme:
        # v8+ custom key generators declare "field:type"; their segments are not plain values
        custom = ":" in config.props.get("hoodie.table.partition.fields", "")
        value_paths = config.is_partitioned and not custom and config.keygen_class in _VALUE_KEYGENS
        return cls(config.partition_fields, config.hive_style_partitioning, config.url_encode_partitions, value_paths)

    def _texts(self, partition_path: str) -> list[str] | None:
        """The raw value text of each field, or None if the path does not split into them."""
        if not self.value_paths:
            return None
        segments = partition_path.split("/")
        if len(segments) != len(self.fields):
            return None  # e.g. a value containing "/"
        texts = []
        for name, segment in zip(self.fields, segments):
            if self.hive_style:
                if not segment.startswith(f"{name}="):
                    return None
                segment = segment[len(name) + 1 :]
            texts.append(segment)
        return texts

    def literals(self, partition_path: str, schema: pa.Schema) -> dict[str, Any]:
        """Field -> value for the partition fields of ``schema`` that ``partition_path``
        determines exactly (possibly none)."""
        texts = self._texts(partition_path)
        if texts is None:
            return {}
        out: dict[str, Any] = {}
        for name, raw in zip(self.fields, texts):
            if schema.get_field_index(name) < 0 or (self.url_encoded and "+" in raw):
                # "+" is a space to hoodie's encoder (quote_plus) but a plus sign to Hudi's
                # (Hive's escapePathName): which one wrote the table is unknown.
                continue
            ok, value = exact_value(urllib.parse.unquote(raw) if self.url_encoded else raw, schema.field(name).type)
            if ok:
                out[name] = value
        return out

    def discoverable(self, partition_paths: Sequence[str], schema: pa.Schema) -> bool:
        """Whether Spark's own partition discovery (``basePath``) derives exactly the stored
        value of every partition field in every one of ``partition_paths``.

        Spark reads ``field=text`` directories, unescapes ``%XX`` in the text, reads the
        default partition as null and casts the text to the schema's type; so the texts
        must need no unescaping and be exact values of their column's type.
        """
        if not (self.value_paths and self.hive_style) or any(schema.get_field_index(f) < 0 for f in self.fields):
            return False
        for path in partition_paths:
            texts = self._texts(path)
            if texts is None:
                return False
            for name, raw in zip(self.fields, texts):
                if "%" in raw or (self.url_encoded and "+" in raw):
                    return False
                if not exact_value(raw, schema.field(name).type)[0]:
                    return False
        return True
