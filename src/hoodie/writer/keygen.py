"""Key generators: record keys and partition paths for a batch, vectorised over Arrow.

Mirrors Hudi's Simple, Complex, Nonpartitioned and TimestampBased key generators so that
keys and partition paths written by hoodie equal those Java would write for the same
options. Bad keys (null or empty) raise :class:`RecordError` naming the field and row.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.config.table_config import KEYGEN_TYPE_TO_CLASS
from hoodie.errors import ConfigError, PartitionPathError, RecordError
from hoodie.layout import DEFAULT_PARTITION
from hoodie.storage.paths import partition_path_problem

SIMPLE = "org.apache.hudi.keygen.SimpleKeyGenerator"
COMPLEX = "org.apache.hudi.keygen.ComplexKeyGenerator"
NON_PARTITIONED = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
TIMESTAMP = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
_ALIASES = {
    "org.apache.hudi.keygen.SimpleAvroKeyGenerator": SIMPLE,
    "org.apache.hudi.keygen.ComplexAvroKeyGenerator": COMPLEX,
    "org.apache.hudi.keygen.NonpartitionedAvroKeyGenerator": NON_PARTITIONED,
    "org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator": TIMESTAMP,
}
NULL_KEY_PART = "__null__"
EMPTY_KEY_PART = "__empty__"

# Java SimpleDateFormat letters -> strftime directives
_JAVA_DATE = [("yyyy", "%Y"), ("yy", "%y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"), ("SSS", "%f")]


def java_date_format_to_strftime(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "'":
            j = pattern.index("'", i + 1)
            out.append(pattern[i + 1 : j].replace("%", "%%"))
            i = j + 1
            continue
        for java, py in _JAVA_DATE:
            if pattern.startswith(java, i):
                out.append(py)
                i += len(java)
                break
        else:
            if pattern[i].isalpha():
                raise ConfigError(f"unsupported date format letter {pattern[i]!r} in {pattern!r}")
            out.append(pattern[i].replace("%", "%%"))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class KeyGenerator:
    """Computes ``_hoodie_record_key`` and ``_hoodie_partition_path`` for Arrow batches."""

    class_name: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    hive_style: bool = False
    url_encode: bool = False
    ts_type: str | None = None
    ts_input_format: str = ""
    ts_output_format: str = "yyyy-MM-dd"
    # Java's three zones: the key generator's sets both of the others
    ts_timezone: str | None = "UTC"
    ts_input_timezone: str | None = None
    ts_output_timezone: str | None = None
    ts_scalar_unit: str = "SECONDS"

    @classmethod
    def from_config(cls, config: HoodieConfig) -> KeyGenerator:
        key_fields = config.get(o.RECORD_KEY_FIELD)
        if not key_fields:
            raise ConfigError(f"missing required option {o.RECORD_KEY_FIELD.key}")
        partition_fields: tuple[str, ...] = config.get(o.PARTITION_PATH_FIELD) or ()
        class_name = config.get(o.KEYGEN_CLASS)
        kg_type = config.get(o.KEYGEN_TYPE)
        if class_name is None and kg_type:
            class_name = KEYGEN_TYPE_TO_CLASS[kg_type]
        class_name = _ALIASES.get(class_name, class_name) if class_name else None
        if class_name is None:
            if not partition_fields:
                class_name = NON_PARTITIONED
            elif len(key_fields) > 1 or len(partition_fields) > 1:
                class_name = COMPLEX
            else:
                class_name = SIMPLE
        if class_name not in (SIMPLE, COMPLEX, NON_PARTITIONED, TIMESTAMP):
            raise ConfigError(f"unsupported key generator {class_name!r} (supported: Simple, Complex, Nonpartitioned, TimestampBased)")
        if class_name == SIMPLE and len(key_fields) > 1:
            raise ConfigError(f"SimpleKeyGenerator takes one record key field, got {','.join(key_fields)}; use ComplexKeyGenerator")
        if class_name == NON_PARTITIONED:
            partition_fields = ()
        if class_name == TIMESTAMP:
            if len(partition_fields) != 1:
                raise ConfigError(f"TimestampBasedKeyGenerator takes one partition field, got {partition_fields!r}")
            if config.get(o.TS_TYPE) is None:
                raise ConfigError(f"TimestampBasedKeyGenerator needs {o.TS_TYPE.key}")
            for zone_option in (o.TS_TIMEZONE, o.TS_INPUT_TIMEZONE, o.TS_OUTPUT_TIMEZONE):
                zone = config.get(zone_option)
                if zone:
                    _check_time_zone(zone_option, zone)
        # without any zone, UTC: recorded in hoodie.properties, it holds Java's writers to it too
        zones_given = any(config.get(z) for z in (o.TS_TIMEZONE, o.TS_INPUT_TIMEZONE, o.TS_OUTPUT_TIMEZONE))
        return cls(
            class_name=class_name,
            record_key_fields=tuple(key_fields),
            partition_fields=partition_fields,
            hive_style=bool(config.get(o.HIVE_STYLE)),
            url_encode=bool(config.get(o.URL_ENCODE)),
            ts_type=config.get(o.TS_TYPE),
            ts_input_format=config.get(o.TS_INPUT_FORMAT) or "",
            ts_output_format=config.get(o.TS_OUTPUT_FORMAT) or "yyyy-MM-dd",
            ts_timezone=config.get(o.TS_TIMEZONE) or (None if zones_given else "UTC"),
            ts_input_timezone=config.get(o.TS_INPUT_TIMEZONE) or None,
            ts_output_timezone=config.get(o.TS_OUTPUT_TIMEZONE) or None,
            ts_scalar_unit=config.get(o.TS_SCALAR_UNIT) or "SECONDS",
        )

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def required_fields(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.record_key_fields + self.partition_fields))

    # --- record keys --------------------------------------------------------------------------
    def record_keys(self, batch: pa.Table) -> pa.Array:
        self._check_fields(batch, self.record_key_fields, "record key")
        if self.class_name == COMPLEX or (self.class_name != SIMPLE and len(self.record_key_fields) > 1):
            parts = []
            all_null = None
            for f in self.record_key_fields:
                text = _as_text(batch.column(f), f)
                is_null = pc.is_null(text)
                all_null = is_null if all_null is None else pc.and_(all_null, is_null)
                part = pc.if_else(is_null, NULL_KEY_PART, pc.if_else(pc.equal(text, ""), EMPTY_KEY_PART, text))
                parts.append(pc.binary_join_element_wise(pa.scalar(f + ":"), part, ""))
            keys = pc.binary_join_element_wise(*parts, ",") if len(parts) > 1 else parts[0]
            if all_null is not None and pc.any(all_null).as_py():
                row = pc.index(all_null, True).as_py()
                raise RecordError(f"record key fields {','.join(self.record_key_fields)} are all null in row {row}")
            return keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        field = self.record_key_fields[0]
        keys = _as_text(batch.column(field), field)
        bad = pc.or_kleene(pc.is_null(keys), pc.equal(keys, ""))
        if pc.any(bad).as_py():
            row = pc.index(bad, True).as_py()
            value = keys[row].as_py()
            raise RecordError(f"record key field {field!r} is {'null' if value is None else 'empty'} in row {row}")
        return keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys

    # --- partition paths ----------------------------------------------------------------------
    def partition_paths(self, batch: pa.Table) -> pa.Array:
        """The partition path of every record; :class:`PartitionPathError` if one of them
        cannot be a folder inside the table."""
        n = batch.num_rows
        if not self.partition_fields:
            return pa.array([""] * n, pa.string())
        self._check_fields(batch, self.partition_fields, "partition path")
        parts = []
        for f in self.partition_fields:
            text = self._field_text(batch, f)
            # the value on its own too: hive style's "field=" prefix would hide a leading "/"
            self._check_paths(batch, text, f)
            parts.append(pc.binary_join_element_wise(pa.scalar(f + "="), text, "") if self.hive_style else text)
        out = pc.binary_join_element_wise(*parts, "/") if len(parts) > 1 else parts[0]
        out = out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out
        self._check_paths(batch, out, None)
        return out

    def _field_text(self, batch: pa.Table, field: str) -> pa.Array:
        """One partition field's value in the partition path (before a hive-style prefix)."""
        column = batch.column(field)
        text = self._timestamp_partition(batch, field) if self.class_name == TIMESTAMP else _as_text(column, field)
        text = pc.if_else(pc.or_kleene(pc.is_null(text), pc.equal(text, "")), DEFAULT_PARTITION, text)
        if self.url_encode:
            text = pa.array([escape_path_name(v) for v in text.to_pylist()], pa.string())
        return text

    def _check_paths(self, batch: pa.Table, paths: pa.Array, field: str | None) -> None:
        """Refuse the batch if any distinct path (of ``field``'s values, or whole partition
        paths) cannot be a folder inside the table: checked once per distinct value."""
        for path in pc.unique(paths).to_pylist():
            problem = partition_path_problem(path)
            if problem is not None:
                raise self._path_error(batch, pc.index(paths, path).as_py(), field, problem)

    def _path_error(self, batch: pa.Table, row: int, field: str | None, problem: str) -> PartitionPathError:
        """The error for record ``row`` of ``batch``: it names the field whose value is at
        fault, that value, the partition path, and the record key (when the batch holds
        the key fields)."""
        one = batch.slice(row, 1)
        field = field or self.partition_fields[-1]
        value = one.column(field)[0].as_py()
        texts = [self._field_text(one, f)[0].as_py() for f in self.partition_fields]
        if self.hive_style:
            texts = [f"{f}={t}" for f, t in zip(self.partition_fields, texts)]
        path = "/".join(texts)
        key = self._record_name(one, row)
        hint = ""
        if not self.url_encode and isinstance(value, str) and partition_path_problem(escape_path_name(value)) is None:
            hint = "; hoodie.datasource.write.partitionpath.urlencode=true would encode it"
        return PartitionPathError(
            f"partition field {field!r} of {key} has the value {value!r}, which cannot be a partition "
            f"folder inside the table (partition path {path!r}): {problem}; nothing was written{hint}"
        )

    def _timestamp_partition(self, batch: pa.Table, field: str) -> pa.Array:
        """The formatted dates of ``field``, as Java's TimestampBasedKeyGenerator makes
        them: DATE_STRING values read in the input zone, dates written in the output zone
        (the key generator's zone sets both), a null value taken as the instant one unit
        after the epoch (Java's default partition value), a DATE_STRING value that does
        not match the input format refused."""
        col = batch.column(field)
        ts_type = self.ts_type
        zone_in = self.ts_timezone or self.ts_input_timezone
        zone_out = self.ts_timezone or self.ts_output_timezone
        if ts_type == "DATE_STRING":
            if not self.ts_input_format:
                raise ConfigError(f"{o.TS_INPUT_FORMAT.key} is required for DATE_STRING")
            fmt = java_date_format_to_strftime(self.ts_input_format)
            text = pc.cast(col, pa.string())
            ts = pc.strptime(text, format=fmt, unit="us", error_is_null=True)
            unparsed = pc.and_(pc.is_valid(text), pc.is_null(ts))
            if pc.any(unparsed).as_py():
                problem = f"does not match {o.TS_INPUT_FORMAT.key}={self.ts_input_format!r}"
                raise self._date_error(batch, field, pc.index(unparsed, True).as_py(), problem)
            # Java formats its default instant in the first zone set and reads it back in the input zone
            default = dt.datetime.fromtimestamp(0.001, _zone(zone_in or zone_out or "UTC")).strftime(fmt)
            ts = ts_local = pc.fill_null(ts, pc.strptime(pa.scalar(default), format=fmt, unit="us"))
            # a time the clocks repeat is the earlier; one they skip is refused (as Joda-Time, Java's reader)
            zone = zone_in or "UTC"
            ts = pc.assume_timezone(ts, zone, ambiguous="earliest", nonexistent="earliest")
            skipped = pc.not_equal(ts, pc.assume_timezone(ts_local, zone, ambiguous="earliest", nonexistent="latest"))
            if pc.any(skipped).as_py():
                raise self._date_error(batch, field, pc.index(skipped, True).as_py(), f"is a time the clocks skip in {zone}")
            zone_out = zone_out or zone_in or "UTC"  # (Java: the zone the value was read in)
        else:
            unit = {"UNIX_TIMESTAMP": "s", "EPOCHMILLISECONDS": "ms", "EPOCHMICROSECONDS": "us"}.get(ts_type or "")
            if ts_type == "SCALAR":
                unit = {"SECONDS": "s", "MILLISECONDS": "ms", "MICROSECONDS": "us", "DAYS": "days"}.get(self.ts_scalar_unit, "s")
            if unit is None:
                raise ConfigError(f"unsupported {o.TS_TYPE.key} {ts_type!r}")
            if pa.types.is_timestamp(col.type):
                ts = pc.fill_null(col, pa.scalar(1, pa.int64()).cast(col.type))
            else:
                epoch = pc.fill_null(pc.cast(col, pa.int64()), 1)  # Java's default partition value: 1
                ts = pc.cast(pc.multiply(epoch, 86400), pa.timestamp("s")) if unit == "days" else pc.cast(epoch, pa.timestamp(unit))
            zone_out = zone_out or "UTC"
        if isinstance(ts, pa.ChunkedArray):
            ts = ts.combine_chunks()
        if ts.type.tz is None:
            ts = ts.cast(pa.timestamp(ts.type.unit, "UTC"))
        out_fmt = java_date_format_to_strftime(self.ts_output_format)
        return pc.strftime(ts.cast(pa.timestamp(ts.type.unit, zone_out)), format=out_fmt, locale="C")

    def _record_name(self, one: pa.Table, row: int) -> str:
        """The record key of ``one`` (row ``row`` of a batch), or the row when the batch
        does not hold the key fields."""
        try:
            return f"record key {self.record_keys(one)[0].as_py()!r}"
        except RecordError:
            return f"row {row}"

    def _date_error(self, batch: pa.Table, field: str, row: int, problem: str) -> RecordError:
        one = batch.slice(row, 1)
        value = one.column(field)[0].as_py()
        return RecordError(f"partition field {field!r} of {self._record_name(one, row)} has the value {value!r}, which {problem}; nothing was written")

    def _check_fields(self, batch: pa.Table, fields: tuple[str, ...], role: str) -> None:
        missing = [f for f in fields if f not in batch.column_names]
        if missing:
            raise RecordError(f"{role} field {missing[0]!r} is not a column of the batch (columns: {', '.join(batch.column_names)})")

    # --- table properties ----------------------------------------------------------------------
    def table_properties(self) -> dict[str, str]:
        props = {
            "hoodie.table.recordkey.fields": ",".join(self.record_key_fields),
            "hoodie.table.keygenerator.class": self.class_name,
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
            "hoodie.datasource.write.partitionpath.urlencode": str(self.url_encode).lower(),
        }
        if self.partition_fields:
            props["hoodie.table.partition.fields"] = ",".join(self.partition_fields)
        if self.class_name == TIMESTAMP:
            props["hoodie.keygen.timebased.timestamp.type"] = self.ts_type or ""
            props["hoodie.keygen.timebased.output.dateformat"] = self.ts_output_format
            if self.ts_input_format:
                props["hoodie.keygen.timebased.input.dateformat"] = self.ts_input_format
            for key, zone in (
                ("hoodie.keygen.timebased.timezone", self.ts_timezone),
                ("hoodie.keygen.timebased.input.timezone", self.ts_input_timezone),
                ("hoodie.keygen.timebased.output.timezone", self.ts_output_timezone),
            ):
                if zone:
                    props[key] = zone
            # Java persists the scalar unit too (HoodieTableConfig's persisted key
            # generator options): later writes must read SCALAR values in the same unit
            props["hoodie.keygen.timebased.timestamp.scalar.time.unit"] = self.ts_scalar_unit
        return props


# Hive's FileUtils.escapePathName (Hudi's PartitionPathEncodeUtils): control characters and
# these punctuation marks become %XX; everything else, spaces and non-ASCII included, stays.
_ESCAPED = set('"#%\'*/:=?\\{[]^') | {chr(c) for c in range(1, 0x20)} | {chr(0x7F)}


def escape_path_name(value: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def _as_text(col: pa.ChunkedArray | pa.Array, field: str) -> pa.Array:
    """String form of key/partition values as Java's ``toString`` gives them."""
    t = col.type
    if pa.types.is_string(t):
        return col
    if pa.types.is_large_string(t) or pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_decimal(t):
        return pc.cast(col, pa.string())
    if pa.types.is_boolean(t):
        return pc.cast(col, pa.string())  # "true"/"false" as in Java
    if pa.types.is_floating(t):
        # Java Double.toString keeps ".0" on integral values; pyarrow drops it
        return pa.array([None if v is None else _java_double(v) for v in col.to_pylist()], pa.string())
    if pa.types.is_timestamp(t):
        return pc.cast(pc.cast(col, pa.int64()), pa.string())
    raise RecordError(f"field {field!r} of type {t} cannot be used in a record key or partition path")


def _java_double(v: float) -> str:
    r = repr(float(v))
    if re.fullmatch(r"-?\d+", r):
        r += ".0"
    return r.replace("inf", "Infinity").replace("nan", "NaN")


def _check_time_zone(option: o.Option[str | None], name: str) -> None:
    """Refuse a time zone Arrow cannot format in before any record is keyed (the error
    names the option, the value and what is expected, not Arrow's)."""
    try:
        pc.strftime(pa.array([0], pa.timestamp("s", name)), format="%Y")
        _zone(name)
    except (pa.ArrowInvalid, ValueError, KeyError):
        raise ConfigError(
            f"invalid value {name!r} for option {option.key}: expected a time zone name (UTC, Europe/Paris) or an offset (+08:00)"
        ) from None


def _zone(name: str) -> dt.tzinfo:
    """A time zone by name (Europe/Paris) or offset (+08:00), as Arrow takes them."""
    offset = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", name)
    if offset:
        sign = -1 if offset.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3))))
    return ZoneInfo(name)
