"""Pure file-name grammar of a Hudi table: instant times, base, log and marker file names,
write tokens and partition paths. Nothing here touches storage.
"""
from __future__ import annotations

import functools
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

from hoodie.storage.paths import relative

HOODIE_FOLDER = ".hoodie"
PARTITION_METAFILE_PREFIX = ".hoodie_partition_metadata"
TEMP_FOLDER = ".temp"
AUX_FOLDER = ".aux"
SCHEMA_FOLDER = ".schema"
METADATA_FOLDER = "metadata"
NON_PARTITIONED = ""
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

INSTANT_FORMAT = "%Y%m%d%H%M%S"
# [0-9], not \d: Python's \d and str.isdigit() take any Unicode digit (fullwidth "２０２４"),
# and an instant is ASCII digits only, as Java's parser and every other reader expect
_INSTANT_RE = re.compile(r"[0-9]{14}(?:[0-9]{3}){0,2}")


def is_ascii_digits(text: str) -> bool:
    """True when ``text`` is one or more ASCII digits (an instant's alphabet)."""
    return text.isascii() and text.isdigit()


def format_instant(dt: datetime) -> str:
    """``yyyyMMddHHmmssSSS`` of a datetime (converted to UTC)."""
    dt = dt.astimezone(timezone.utc)
    return dt.strftime(INSTANT_FORMAT) + f"{dt.microsecond // 1000:03d}"


def parse_instant(instant: str) -> datetime:
    """UTC datetime of an instant time (14, 17 or 20 digits; MDT suffixes are ignored)."""
    if not is_instant_time(instant):
        raise ValueError(f"not an instant time: {instant!r}")
    base = datetime.strptime(instant[:14], INSTANT_FORMAT).replace(tzinfo=timezone.utc)
    millis = int(instant[14:17]) if len(instant) >= 17 else 999
    return base.replace(microsecond=millis * 1000)


def is_instant_time(text: str) -> bool:
    """``yyyyMMddHHmmss``, ``yyyyMMddHHmmssSSS`` or a metadata-table instant (17 + 3 digits)."""
    return _INSTANT_RE.fullmatch(text) is not None


class InstantTime:
    """An instant time that compares (and hashes) as Hudi compares instant times.

    Instant times are ASCII digits, ``yyyyMMddHHmmss`` (tables of Hudi before 0.9) or
    ``yyyyMMddHHmmssSSS``; metadata-table instants add three digits. They order as Java's
    ``InstantComparison`` orders them: a second-precision time stands for the end of its
    second (``...999``), so it sorts after every millisecond of that second. ``text`` is
    the time as written; ``key`` the string that sorts like it (for columnar filters on
    ``_hoodie_commit_time``). Usable as ``key=`` of :func:`sorted`, :func:`max` and
    :func:`min` over instant time strings."""

    __slots__ = ("key", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.key = text + "999" if len(text) == 14 else text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InstantTime) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: InstantTime) -> bool:
        return self.key < other.key

    def __le__(self, other: InstantTime) -> bool:
        return self.key <= other.key

    def __gt__(self, other: InstantTime) -> bool:
        return self.key > other.key

    def __ge__(self, other: InstantTime) -> bool:
        return self.key >= other.key

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"InstantTime({self.text!r})"

    def __reduce__(self) -> tuple[type[InstantTime], tuple[str]]:
        return (InstantTime, (self.text,))


# --- file ids and write tokens ------------------------------------------------------------


def new_file_id(index: int = 0) -> str:
    """A new file group id: UUID4 plus ``-<index>``."""
    return f"{uuid.uuid4()}-{index}"


def write_token(task_partition_id: int, stage_id: int, task_attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{task_attempt_id}"


# --- base files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant: str
    extension: str

    @property
    def name(self) -> str:
        return f"{self.file_id}_{self.write_token}_{self.instant}{self.extension}"


BASE_FILE_EXTENSIONS = (".parquet", ".hfile", ".orc", ".lance")


def base_file_name(file_id: str, token: str, instant: str, extension: str = ".parquet") -> str:
    return f"{file_id}_{token}_{instant}{extension}"


#: names whose parse is kept, per kind (base, log, timeline file): a table's views parse
#: the same names again each time they are built (its listings, its commits' write
#: stats), several times a write; a thousand hold a streaming table's latest slices
#: and timeline, in well under a megabyte, and a wider table's names just pass through
NAME_CACHE_SIZE = 1024


@functools.lru_cache(maxsize=NAME_CACHE_SIZE)
def parse_base_file_name(name: str) -> BaseFileName | None:
    """Parse ``<fileId>_<token>_<instant>.<ext>``; None when ``name`` is not a base file
    (a kept, immutable result: see :data:`NAME_CACHE_SIZE`)."""
    if name.startswith("."):
        return None
    stem, dot, ext = name.rpartition(".")
    if not dot or f".{ext}" not in BASE_FILE_EXTENSIONS:
        return None
    parts = stem.split("_")
    if len(parts) != 3 or not is_ascii_digits(parts[2]):
        return None
    return BaseFileName(parts[0], parts[1], parts[2], f".{ext}")


# --- log files ----------------------------------------------------------------------------

_LOG_RE = re.compile(r"^\.(.+)_([0-9]*)\.(log|archive)\.([0-9]+)(_(([0-9]+)-([0-9]+)-([0-9]+))(\.cdc)?)?$")


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    instant: str  # v6: base instant of the slice; v8+: the writing deltacommit's instant
    version: int
    write_token: str
    extension: str = "log"
    cdc: bool = False

    @property
    def name(self) -> str:
        token = f"_{self.write_token}" if self.write_token else ""
        return f".{self.file_id}_{self.instant}.{self.extension}.{self.version}{token}{'.cdc' if self.cdc else ''}"

    def sort_key(self) -> tuple[str, int, str]:
        return (InstantTime(self.instant).key, self.version, self.write_token)


@functools.lru_cache(maxsize=NAME_CACHE_SIZE)
def parse_log_file_name(name: str) -> LogFileName | None:
    """Parse ``.<fileId>_<instant>.log.<version>[_<token>][.cdc]``; None when ``name`` is
    not a log file (a kept, immutable result: see :data:`NAME_CACHE_SIZE`)."""
    m = _LOG_RE.match(name)
    if not m:
        return None
    return LogFileName(m.group(1), m.group(2), int(m.group(4)), m.group(6) or "", m.group(3), bool(m.group(10)))


# --- markers ------------------------------------------------------------------------------

MARKER_EXTENSION = ".marker"
MARKER_IO_TYPES = ("CREATE", "MERGE", "APPEND")


def marker_name(partition_path: str, data_file_name: str, io_type: str) -> str:
    """Relative marker path: ``<partition>/<file>.marker.<IOType>``."""
    if io_type not in MARKER_IO_TYPES:
        raise ValueError(f"unknown marker IO type {io_type!r}")
    rel = f"{data_file_name}{MARKER_EXTENSION}.{io_type}"
    return relative(partition_path, rel)


def parse_marker_name(marker: str) -> tuple[str, str, str] | None:
    """``(partition_path, data_file_name, io_type)`` of a marker path, or None."""
    head, sep, io_type = marker.rpartition(f"{MARKER_EXTENSION}.")
    if not sep or io_type not in MARKER_IO_TYPES:
        return None
    partition, _, file_name = head.rpartition("/")
    return partition, file_name, io_type


# --- partition paths ----------------------------------------------------------------------


def partition_depth(partition_path: str) -> int:
    return 0 if partition_path == NON_PARTITIONED else partition_path.count("/") + 1


def partition_metadata_content(instant: str, partition_path: str, written_at: datetime | None = None) -> bytes:
    """The ``.hoodie_partition_metadata`` properties file Java writes."""
    when = (written_at or datetime.now(timezone.utc)).strftime("%a %b %d %H:%M:%S UTC %Y")
    return (
        f"#partition metadata\n#{when}\ncommitTime={instant}\npartitionDepth={partition_depth(partition_path)}\n"
    ).encode()
