"""Row filters of a read and data skipping: which file slices a filter rules out by the
column statistics of the table's metadata table.

A read's ``filters`` are in pyarrow's disjunctive normal form, as ``pq.read_table`` takes
them: a list of ``(column, op, value)`` predicates ANDed together, or a list of such
lists ORed. The rows a read returns are always filtered by the whole expression; data
skipping only spares the files that cannot hold a matching row, so a read with skipping
equals the same read without it.

A slice is skipped only when *every* file it reads (its base file and each log file:
Apache Hudi records statistics for both) has statistics that rule out every conjunction.
A file or column without statistics, statistics of a value type that do not compare with
the filter's value, or a predicate these rules do not cover (``not in``, a null value)
keep the slice. Besides pyarrow's operators, ``is null`` and ``is not null`` (value
``None``) test for nulls: a file without nulls rules out ``is null``, a file of nulls
only ``is not null``. Statistics are looked up by the names of the files of the planned
(latest committed) slices only, so those of older or uncommitted files never count. A
metadata table out of sync with the table (:class:`~hoodie.errors.MetadataOutOfSyncError`)
is not used: the read says so in a warning and skips nothing.
"""
from __future__ import annotations

import functools
import logging
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.errors import ConfigError, MetadataOutOfSyncError, SchemaError
from hoodie.metadata_table.index_lookup import has_record_index
from hoodie.metadata_table.reader import COLUMN_STATS, MetadataTableReader
from hoodie.metadata_table.records import ColumnStats
from hoodie.table.file_group import FileSlice
from hoodie.table.partition_values import PartitionScheme
from hoodie.table.table import HoodieTable

__all__ = ["RowFilter", "has_column_stats", "prune_partitions", "prune_slices"]

log = logging.getLogger(__name__)
Predicate = tuple[str, str, Any]
_NULL_OPS = {"is null", "is not null"}
_OPS = {"=", "==", "!=", "<", "<=", ">", ">=", "in", "not in", *_NULL_OPS}


@dataclass(frozen=True)
class RowFilter:
    """A read's filter in disjunctive normal form: ``conjunctions`` ORed, each a tuple of
    predicates ANDed."""

    conjunctions: tuple[tuple[Predicate, ...], ...]

    @classmethod
    def of(cls, filters: Sequence[Any] | None) -> RowFilter | None:
        """``filters`` as pyarrow takes them (``[(col, op, value), ...]`` or a list of such
        lists), checked; None or empty means no filter."""
        if not filters:
            return None
        if not isinstance(filters, (list, tuple)):
            raise ConfigError(f"filters must be a list of (column, op, value) tuples or a list of such lists, not {filters!r}")
        nested = all(isinstance(f, list) for f in filters)
        groups = filters if nested else [filters]
        out = []
        for group in groups:
            preds = []
            for p in group:
                if not (isinstance(p, (list, tuple)) and len(p) == 3 and isinstance(p[0], str)):
                    raise ConfigError(f"invalid filter predicate {p!r}: expected (column, op, value)")
                op = str(p[1]).lower()
                if op not in _OPS:
                    raise ConfigError(f"invalid filter operator {p[1]!r} in {p!r}: expected one of {', '.join(sorted(_OPS))}")
                if op in ("in", "not in") and not isinstance(p[2], (list, tuple, set, frozenset)):
                    raise ConfigError(f"filter {p!r}: {op!r} needs a list of values")
                if op in _NULL_OPS and p[2] is not None:
                    raise ConfigError(f"filter {p!r}: {op!r} takes no value (None)")
                preds.append((p[0], op, p[2]))
            if not preds:
                raise ConfigError(f"invalid filters {filters!r}: an empty conjunction")
            out.append(tuple(preds))
        return cls(tuple(out))

    @property
    def columns(self) -> list[str]:
        return list(dict.fromkeys(c for conj in self.conjunctions for c, _, _ in conj))

    def check_columns(self, schema: pa.Schema) -> None:
        unknown = [c for c in self.columns if schema.get_field_index(c) < 0]
        if unknown:
            raise SchemaError(f"filter on unknown column(s) {', '.join(map(repr, unknown))}; the table has {', '.join(schema.names)}")

    def expression(self) -> pc.Expression:
        """The filter as a pyarrow compute expression (nulls never match, as in SQL)."""
        if not any(op in _NULL_OPS for conj in self.conjunctions for _, op, _ in conj):
            return pq.filters_to_expression([list(conj) for conj in self.conjunctions])
        ors = [functools.reduce(operator.and_, [_predicate(p) for p in conj]) for conj in self.conjunctions]
        return functools.reduce(operator.or_, ors)

    def apply(self, rows: pa.Table) -> pa.Table:
        if rows.num_columns == 0:
            return rows
        self.check_columns(rows.schema)
        return rows.filter(self.expression())

    def may_match(self, stats: Mapping[str, ColumnStats]) -> bool:
        """Whether a file with these column statistics may hold a matching row."""
        return any(_conjunction_may_match(conj, stats) for conj in self.conjunctions)


def _conjunction_may_match(conj: tuple[Predicate, ...], stats: Mapping[str, ColumnStats]) -> bool:
    return all(_may_match(stats.get(c), op, v) for c, op, v in conj)


def _predicate(p: Predicate) -> pc.Expression:
    column, op, _ = p
    if op == "is null":
        return pc.field(column).is_null()
    if op == "is not null":
        return pc.field(column).is_valid()
    return pq.filters_to_expression([[p]])


def _all_null(s: ColumnStats) -> bool:
    return s.value_count is not None and s.null_count is not None and s.value_count == s.null_count


def _may_match(s: ColumnStats | None, op: str, value: Any) -> bool:
    if s is None or op == "not in":
        return True
    if op == "is null":
        return s.null_count is None or s.null_count > 0
    if op == "is not null":
        return not _all_null(s)
    values = list(value) if op == "in" else [value]
    if any(v is None for v in values):
        return True
    if _all_null(s):
        return False  # only nulls: no comparison holds
    lo, hi = s.min, s.max
    if lo is None or hi is None:
        return True
    try:
        if op in ("=", "=="):
            return bool(lo <= value <= hi)
        if op == "in":
            return any(lo <= v <= hi for v in values)
        if op == "!=":
            return not (lo == hi == value)
        if op == "<":
            return bool(lo < value)
        if op == "<=":
            return bool(lo <= value)
        if op == ">":
            return bool(hi > value)
        return bool(hi >= value)
    except TypeError:
        return True  # a value type the statistics do not compare with: keep the file


def _files(s: FileSlice) -> Iterable[str]:
    if s.base_file is not None:
        yield s.base_file.file_name
    for lf in s.log_files:
        yield lf.file_name


def has_column_stats(table: HoodieTable) -> bool:
    """Whether ``table``'s metadata table has a complete ``column_stats`` partition, the
    statistics skipping reads."""
    return COLUMN_STATS in table.config.metadata_partitions


def prune_slices(table: HoodieTable, slices: Sequence[FileSlice], row_filter: RowFilter, by_record_index: bool = False) -> list[FileSlice]:
    """The slices of ``slices`` that may hold a row ``row_filter`` matches, by the column
    statistics of the table's metadata table and, with ``by_record_index`` (a read of the
    latest snapshot: the index places keys as they are now), by its record index: a
    conjunction that asks for given record keys (``=``/``in`` on the record key field)
    can only match in the file groups the index names for them. All of ``slices`` when
    the metadata table has neither."""
    if not slices:
        return []
    wanted = _wanted_keys(table, row_filter) if by_record_index and has_record_index(table) else [None] * len(row_filter.conjunctions)
    use_stats = has_column_stats(table)
    if not use_stats and all(keys is None for keys in wanted):
        return list(slices)
    try:
        reader = MetadataTableReader(table)
    except MetadataOutOfSyncError as exc:
        # its statistics and record index would be stale: read every slice rather than trust them
        log.warning("%s; data skipping is off for this read", exc)
        return list(slices)
    stats = reader.column_stats_many(((s.partition_path, f) for s in slices for f in _files(s)), row_filter.columns) if use_stats else {}
    asked = sorted({k for keys in wanted if keys is not None for k in keys})
    located = {k: (loc.partition, loc.file_id) for k, loc in reader.record_locations(asked).items()} if asked else {}

    def allows(conj: tuple[Predicate, ...], keys: frozenset[str] | None, s: FileSlice) -> bool:
        if keys is not None and not any(located.get(k) == (s.partition_path, s.file_id) for k in keys):
            return False
        return not use_stats or any(_conjunction_may_match(conj, stats.get((s.partition_path, f), {})) for f in _files(s))

    return [s for s in slices if any(allows(conj, keys, s) for conj, keys in zip(row_filter.conjunctions, wanted))]


def _wanted_keys(table: HoodieTable, row_filter: RowFilter) -> list[frozenset[str] | None]:
    """Per conjunction, the record keys it asks for (None: it names none, or the keys
    cannot be told from the values). Only where a key is its one field's value as text:
    one record key field of a string or integer column, not the complex key generator's
    ``field:value`` pairs."""
    fields = table.config.record_key_fields
    if len(fields) != 1 or "Complex" in (table.config.keygen_class or ""):
        return [None] * len(row_filter.conjunctions)
    schema = table.data_schema()
    index = schema.get_field_index(fields[0]) if schema is not None else -1
    if index < 0:
        return [None] * len(row_filter.conjunctions)
    kind = schema.field(index).type  # type: ignore[union-attr]
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if not (text or pa.types.is_integer(kind)):
        return [None] * len(row_filter.conjunctions)

    def as_key(value: Any) -> str | None:
        if text:
            return value if isinstance(value, str) else None
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else None

    out: list[frozenset[str] | None] = []
    for conj in row_filter.conjunctions:
        keys: frozenset[str] | None = None
        for column, op, value in conj:
            if column != fields[0] or op not in ("=", "==", "in"):
                continue
            values = [as_key(v) for v in (value if op == "in" else [value])]
            if any(v is None for v in values):
                continue  # a value no key is written as (None matches nothing anyway)
            given = frozenset(v for v in values if v is not None)
            keys = given if keys is None else keys & given
        out.append(keys)
    return out


def prune_partitions(table: HoodieTable, slices: Sequence[FileSlice], row_filter: RowFilter, schema: pa.Schema) -> list[FileSlice]:
    """The slices of ``slices`` whose partition may hold a row ``row_filter`` matches, by
    the values their partition path gives the partition columns, where the path gives them
    exactly (:class:`~hoodie.table.partition_values.PartitionScheme`), as Apache Hudi's
    file index prunes partitions. A record updated in place with a new partition value
    (a global index without ``update.partition.path``) keeps its old partition's path, so
    it is pruned as that partition is: the rows read are still filtered on the values
    stored in the files."""
    scheme = PartitionScheme.of(table.config)
    known: dict[str, bool] = {}

    def allows(partition: str) -> bool:
        if partition not in known:
            # each value the path gives, as the statistics of a column holding it alone
            stats = {name: ColumnStats(None, name, value, value, 1, 1 if value is None else 0, None, None)
                     for name, value in scheme.literals(partition, schema).items()}
            known[partition] = not stats or row_filter.may_match(stats)
        return known[partition]

    return [s for s in slices if allows(s.partition_path)]
