"""What a table says about its bucket index, so that no write places an existing key in
a file group other than the one holding it (the key would be stored twice).

Apache Hudi (0.15 and 1.x) keeps neither the index type nor the number of buckets in the
table: they are write options only. hoodie records them in ``hoodie.properties`` when it
creates a bucket-indexed table, under the write options' own keys
(``hoodie.index.type``, ``hoodie.bucket.index.num.buckets``,
``hoodie.bucket.index.hash.field``: Apache Hudi 0.15 and 1.x keep them on their writes and
refuse a write whose options contradict them), and hoodie refuses such a write as well
(:func:`check_recorded`). A table without the
entries (one Apache Hudi made) is checked on each bucket write by one footer
(:func:`check_bucket_count`): the smallest and largest record keys of one base file must
hash to its file group's bucket. Finding that file reads a bounded number of commits, and
a process remembers the file it checked last per table and options.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import pyarrow as pa

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.formats.parquet import BaseFileReader
from hoodie.index.bucket import BUCKET, BucketSpec, bucket_ids, bucket_of_file_id, not_a_bucket
from hoodie.layout import InstantTime, parse_base_file_name
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Instant

#: the hoodie.properties entries of a bucket-indexed table hoodie created, in this order
RECORDED_OPTIONS: tuple[o.Option, ...] = (o.INDEX_TYPE, o.BUCKET_INDEX_NUM_BUCKETS, o.BUCKET_INDEX_HASH_FIELD)


def bucket_table_properties(spec: BucketSpec) -> dict[str, str]:
    """The entries a new bucket-indexed table records in ``hoodie.properties``."""
    props = {o.INDEX_TYPE.key: BUCKET, o.BUCKET_INDEX_NUM_BUCKETS.key: str(spec.num_buckets)}
    if spec.hash_fields:
        props[o.BUCKET_INDEX_HASH_FIELD.key] = ",".join(spec.hash_fields)
    return props


def recorded_options(table_props: Mapping[str, str]) -> dict[str, str]:
    """The bucket entries a table's ``hoodie.properties`` holds (none unless it records
    ``hoodie.index.type=BUCKET``): the defaults of a write's options."""
    if table_props.get(o.INDEX_TYPE.key, "").upper() != BUCKET:
        return {}
    return {opt.key: table_props[opt.key] for opt in RECORDED_OPTIONS if opt.key in table_props}


def _shown(opt: o.Option, value: object) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def check_recorded(config: HoodieConfig, table_props: Mapping[str, str], path: str) -> None:
    """Refuse a write whose options contradict the bucket entries the table records: with
    another index, keys the bucket index placed (on merge-on-read, new keys live only in
    log files, where no other index looks) would be inserted again, and its new file groups
    would not be buckets'; with another number of buckets or other hash fields, existing
    keys hash to other buckets and would be inserted there again."""
    recorded = recorded_options(table_props)
    if not recorded:
        return
    entries = ", ".join(f"{k}={v}" for k, v in recorded.items())
    for opt in RECORDED_OPTIONS:
        if opt.key not in recorded or not config.has(opt):
            continue
        given, kept = config.get(opt), opt.convert(recorded[opt.key])
        if given == kept:
            continue
        if opt is o.INDEX_TYPE:
            raise ConfigError(
                f"{opt.key}={given}, but {path} is a bucket-indexed table (hoodie.properties: {entries}): another index "
                "would not find the keys the bucket index placed (on merge-on-read, keys that live only in log files) and "
                f"would write them again; write with {opt.key}=BUCKET or leave the option out"
            )
        raise ConfigError(
            f"{opt.key}={_shown(opt, given)}, but {path} was created with {opt.key}={_shown(opt, kept)} (hoodie.properties: "
            f"{entries}): existing keys would hash to other buckets and be written again; leave the option out or give "
            f"{_shown(opt, kept)}"
        )


#: how many of the newest completed writes :func:`check_bucket_count` reads for a base file
#: before it lists one partition instead: on merge-on-read, a long run of delta commits
#: that only append logs to groups without a base file would otherwise be read on every write
WALK_LIMIT = 10


class _Checked:
    """Per (table, bucket options), the newest completed write when a base file was last
    checked and that file's path, for the most recently checked tables of this process: a
    write that finds the same newest write, or is led to the same file, reads no footer."""

    def __init__(self, max_tables: int = 64) -> None:
        self.max_tables = max_tables
        self._entries: OrderedDict[tuple[str, BucketSpec], tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, BucketSpec]) -> tuple[str, str] | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: tuple[str, BucketSpec], newest: str, path: str) -> None:
        with self._lock:
            self._entries[key] = (newest, path)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_tables:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


CHECKED = _Checked()


def check_bucket_count(table: HoodieTable, spec: BucketSpec) -> None:
    """On a table that does not record its bucket entries: the smallest and largest record
    keys in the footer of one base file (the newest one a completed write names: a base
    file it wrote, or the base of the slice it appended logs to) must hash to that file's
    bucket under ``spec``, else the table was written with another number of buckets or
    other hash fields (or another index), and this write would place existing keys in
    other buckets. Reads at most :data:`WALK_LIMIT` commits (past them, one listing of the
    partition the newest write touched) and one footer, none when this process checked
    the same file already (:data:`CHECKED`); a table with no base file yet has nothing to
    check."""
    writes = table.timeline.completed_writes()
    if not writes:
        return
    key, newest = (table.base_path, spec), writes[-1].timestamp
    remembered = CHECKED.get(key)
    if remembered is not None and remembered[0] == newest:
        return  # no write completed since the file was checked
    found = _newest_base_file(table, writes[-WALK_LIMIT:])
    if found is None:
        return
    partition, file_id, path = found
    if (remembered is not None and remembered[1] == path) or _check_file(table.storage, path, partition, file_id, spec):
        CHECKED.put(key, newest, path)


def _newest_base_file(table: HoodieTable, writes: Sequence[Instant]) -> tuple[str, str, str] | None:
    """(partition, file id, path) of the newest base file ``writes`` (newest last) name,
    or, when they name none, of the newest committed base file in the partition the
    newest of them touched."""
    touched: str | None = None
    for instant in reversed(writes):
        source = f"commit {instant.timestamp}"
        for s in table.timeline.commit_metadata(instant).write_stats():
            touched = s.partitionPath if touched is None else touched
            if s.path.endswith(".parquet") and s.numWrites > 0:
                return s.partitionPath, s.fileId, under(table.base_path, s.path, source=source)
            if s.baseFile:  # a log appended to a slice with a base file (Hudi's HoodieDeltaWriteStat)
                return s.partitionPath, s.fileId, under(table.base_path, s.partitionPath, s.baseFile, source=source)
    return _listed_base_file(table, touched) if touched is not None else None


def _listed_base_file(table: HoodieTable, partition: str) -> tuple[str, str, str] | None:
    """The newest committed base file of ``partition``, by one listing of its folder
    through the file-system view (which counts a file of an archived write as committed),
    reading no commit: building its slices would read every commit on the timeline."""
    view = table.storage_view()
    bases = [(b, f.path) for f in view.partition_files(partition) if (b := parse_base_file_name(f.name)) is not None and view.is_committed(b.instant)]
    if not bases:
        return None
    newest, path = max(bases, key=lambda found: InstantTime(found[0].instant))
    return partition, newest.file_id, path


def _check_file(storage: Storage, path: str, partition: str, file_id: str, spec: BucketSpec) -> bool:
    """Whether the footer of ``path`` was read (and agrees: else :class:`ConfigError`)."""
    bucket = bucket_of_file_id(file_id)
    if bucket is None:
        raise not_a_bucket(file_id, partition)
    try:
        reader = BaseFileReader(storage, path)
    except FileNotFoundError:
        return False  # cleaned since: the tagging's own checks remain
    try:
        footer = reader.footer.index
    finally:
        reader.close()
    keys = [k for k in (footer.min_key, footer.max_key) if k is not None] if footer is not None else []
    for key, placed in zip(keys, bucket_ids(pa.array(keys, pa.string()), spec).tolist()):
        if placed != bucket:
            raise ConfigError(
                f"{o.BUCKET_INDEX_NUM_BUCKETS.key}={spec.num_buckets} ({o.BUCKET_INDEX_HASH_FIELD.key}={','.join(spec.hash_fields)}) "
                f"puts key {key!r} of file group {file_id} (partition {partition!r}) in bucket {placed}, but that group is bucket "
                f"{bucket}: the table was written with another number of buckets (or other hash fields), and this write would "
                "store its keys again in other buckets; write with the options the table was written with"
            )
    return True
