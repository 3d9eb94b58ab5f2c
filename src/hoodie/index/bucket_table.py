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
hash to its file group's bucket.
"""
from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.formats.parquet import BaseFileReader
from hoodie.index.bucket import BUCKET, BucketSpec, bucket_ids, bucket_of_file_id, not_a_bucket
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.table.table import HoodieTable

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


def check_bucket_count(table: HoodieTable, spec: BucketSpec) -> None:
    """On a table that does not record its bucket entries: the smallest and largest record
    keys in the footer of one base file (the newest completed write's first, whose file is
    the latest of its group) must hash to that file's bucket under ``spec``, else the table
    was written with another number of buckets or other hash fields (or another index), and
    this write would place existing keys in other buckets. Reads at most one footer; a
    table with no base file yet has nothing to check."""
    for instant in reversed(table.timeline.completed_writes()):
        stats = [s for s in table.timeline.commit_metadata(instant).write_stats() if s.path.endswith(".parquet") and s.numWrites > 0]
        if stats:
            path = under(table.base_path, stats[0].path, source=f"commit {instant.timestamp}")
            _check_file(table.storage, path, stats[0].partitionPath, stats[0].fileId, spec)
            return


def _check_file(storage: Storage, path: str, partition: str, file_id: str, spec: BucketSpec) -> None:
    bucket = bucket_of_file_id(file_id)
    if bucket is None:
        raise not_a_bucket(file_id, partition)
    try:
        reader = BaseFileReader(storage, path)
    except FileNotFoundError:
        return  # cleaned since: the tagging's own checks remain
    try:
        footer = reader.footer.index
    finally:
        reader.close()
    keys = [k for k in (footer.min_key, footer.max_key) if k is not None] if footer is not None else []
    if not keys:
        return
    for key, placed in zip(keys, bucket_ids(pa.array(keys, pa.string()), spec).tolist()):
        if placed != bucket:
            raise ConfigError(
                f"{o.BUCKET_INDEX_NUM_BUCKETS.key}={spec.num_buckets} ({o.BUCKET_INDEX_HASH_FIELD.key}={','.join(spec.hash_fields)}) "
                f"puts key {key!r} of file group {file_id} (partition {partition!r}) in bucket {placed}, but that group is bucket "
                f"{bucket}: the table was written with another number of buckets (or other hash fields), and this write would "
                "store its keys again in other buckets; write with the options the table was written with"
            )
