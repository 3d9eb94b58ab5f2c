"""The bucket index (``hoodie.index.type=BUCKET``, engine SIMPLE): a key's file group is a
pure function of the key, so tagging reads no file.

Each partition has at most ``hoodie.bucket.index.num.buckets`` file groups, one per
bucket; a file group's id starts with its bucket number (``%08d`` in place of the first
eight characters of a UUID). A key's bucket is Apache Hudi 0.15's
``BucketIdentifier.getBucketId``: the Java ``List<String>.hashCode()`` of its hash
values, ``& Integer.MAX_VALUE``, ``% numBuckets``. The hash values come from the record
key: the key itself when it holds no ``:``, else the values of the ``field:value`` parts
whose field is a hash field (``__null__`` is null, ``__empty__`` the empty string), in
the key's order (``KeyGenUtils.extractRecordKeysByFields``). Java's ``String.hashCode``
runs over UTF-16 code units with 32-bit overflow; here over whole arrays with numpy.

A key's location is the file group of its bucket in its partition when that group exists
(an update to it, whether or not the key is stored there, as Hudi tags it); records of a
bucket without a group go to a new group the write creates for that bucket (the
:func:`new_bucket_placeholder` file id until the plan names it,
:func:`bucket_file_id`).
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import ConfigError, TableError

BUCKET = "BUCKET"
SIMPLE_ENGINE = "SIMPLE"
_MASK = 0xFFFFFFFF
_BUCKET_DIGITS = 8


@dataclass(frozen=True)
class BucketSpec:
    """How keys map to buckets: ``hoodie.bucket.index.num.buckets`` and the hash fields
    (``hoodie.bucket.index.hash.field``, by default the record key fields)."""

    num_buckets: int
    hash_fields: tuple[str, ...]


def java_string_hashes(values: Sequence[str] | pa.Array) -> np.ndarray:
    """Java's ``String.hashCode`` of each value, as uint32 (the int's bits): the sum of
    its UTF-16 code units times 31 to the power of the units after them, mod 2**32."""
    arr = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    arr = arr.cast(pa.large_string()) if arr.type != pa.large_string() else arr
    if pc.all(pc.string_is_ascii(arr)).as_py() is not False:
        # ASCII: the UTF-8 bytes are the UTF-16 code units
        offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
        data = arr.buffers()[2]
        units = np.frombuffer(data, dtype=np.uint8)[offsets[0] : offsets[-1]] if data is not None else np.zeros(0, np.uint8)
        lengths = np.diff(offsets)
    else:
        texts = arr.to_pylist()
        encoded = [t.encode("utf-16-le") for t in texts]
        lengths = np.fromiter((len(e) // 2 for e in encoded), dtype=np.int64, count=n)
        units = np.frombuffer(b"".join(encoded), dtype="<u2")
    return _polynomial_hashes(units, lengths)


def _polynomial_hashes(units: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Horner's rule over all strings at once, longest first: at step ``j`` the strings
    longer than ``j`` (a prefix of that order) take their ``j``-th unit, so the work is
    the number of units, whatever the spread of lengths."""
    n = len(lengths)
    order = np.argsort(-lengths, kind="stable")
    starts = (np.cumsum(lengths) - lengths)[order]
    longer_than = np.searchsorted(-lengths[order], -np.arange(int(lengths.max(initial=0))), side="left")
    h = np.zeros(n, dtype=np.uint32)
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps as Java's int does
        for j, count in enumerate(longer_than.tolist()):
            h[:count] = h[:count] * np.uint32(31) + units[starts[:count] + j]
    out = np.empty(n, dtype=np.uint32)
    out[order] = h
    return out


def _java_split_commas(key: str) -> list[str]:
    """``key.split(",")`` as Java splits: trailing empty parts dropped (unless nothing
    matched, when the key itself is the only part)."""
    parts = key.split(",")
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def hash_values(record_key: str, hash_fields: Sequence[str]) -> list[str | None]:
    """The values of ``record_key`` a bucket is hashed from (Apache Hudi 0.15's
    ``BucketIdentifier.getHashKeys``), for one key: :func:`bucket_ids` reads the parts of
    a whole array of keys at once, as this reads them."""
    if ":" not in record_key:
        return [record_key]
    fields = set(hash_fields)
    out: list[str | None] = []
    for part in _java_split_commas(record_key):
        kv = part.split(":", 1)
        if len(kv) == 1:
            out.append(kv[0])
        elif not fields or kv[0] in fields:
            out.append(None if kv[1] == "__null__" else "" if kv[1] == "__empty__" else kv[1])
    return out


def bucket_ids(keys: pa.Array | pa.ChunkedArray, spec: BucketSpec) -> np.ndarray:
    """The bucket of every record key (int32), bit for bit Apache Hudi's."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    n = len(keys)
    list_hash = np.empty(n, dtype=np.uint32)
    complex_key = pc.fill_null(pc.match_substring(keys, ":"), False).to_numpy(zero_copy_only=False)
    simple = np.flatnonzero(~complex_key)
    if len(simple):
        # a one-element list: 31 * 1 + the string's hash
        with np.errstate(over="ignore"):
            list_hash[simple] = np.uint32(31) + java_string_hashes(keys.take(pa.array(simple)))
    rest = np.flatnonzero(complex_key)
    if len(rest):
        list_hash[rest] = _complex_key_list_hashes(keys if len(rest) == n else keys.take(pa.array(rest)), spec.hash_fields)
    return ((list_hash & np.uint32(0x7FFFFFFF)) % np.uint32(spec.num_buckets)).astype(np.int32)


def _complex_key_list_hashes(keys: pa.Array, hash_fields: Sequence[str]) -> np.ndarray:
    """``List<String>.hashCode()`` of :func:`hash_values` of each key, over the whole array:
    the parts of every key at once (a key's trailing empty parts dropped, as Java's
    ``split`` drops them), then ``31^m + sum(hash_j * 31^(m-1-j))`` mod 2**32 per key of
    ``m`` values (a null value hashes to 0)."""
    n = len(keys)
    parts = pc.split_pattern(keys, ",")
    flat = pc.list_flatten(parts)
    owner = pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False).astype(np.int64)
    first = np.cumsum(counts) - counts  # every key has a part at least
    position = np.arange(len(flat), dtype=np.int64) - first[owner]
    # Java's split: trailing empty parts dropped, unless the key holds no ","
    nonempty = pc.binary_length(flat).to_numpy(zero_copy_only=False) > 0
    last = np.maximum.reduceat(np.where(nonempty, position, -1), first)
    kept = np.where(counts == 1, 1, last + 1)
    keep = position < kept[owner]
    # each part's field and value: "field:value" at its first ":", else the part itself as a value
    kv = pc.split_pattern(flat, ":", max_splits=1)
    kv_flat = pc.list_flatten(kv)
    kv_counts = pc.list_value_length(kv).to_numpy(zero_copy_only=False).astype(np.int64)
    kv_starts = np.cumsum(kv_counts) - kv_counts
    has_field = kv_counts == 2
    values = kv_flat.take(pa.array(kv_starts + kv_counts - 1))
    if hash_fields:
        named = pc.is_in(kv_flat.take(pa.array(kv_starts)), value_set=pa.array(list(hash_fields), kv_flat.type)).to_numpy(zero_copy_only=False)
        keep &= ~has_field | named
    taken = np.flatnonzero(keep)
    values = values.take(pa.array(taken))
    hashes = java_string_hashes(values).astype(np.uint64)
    # __null__ is null (hash 0), __empty__ the empty string (hash 0 too)
    placeholder = pc.is_in(values, value_set=pa.array(["__null__", "__empty__"], values.type)).to_numpy(zero_copy_only=False)
    hashes[placeholder & has_field[taken]] = 0
    # Horner's rule unrolled: value j of m contributes hash_j * 31^(m-1-j); the sums wrap at
    # 2**64, a multiple of 2**32, so the low 32 bits stay exact
    of_key = owner[taken]
    m = np.bincount(of_key, minlength=n).astype(np.int64)
    starts = np.cumsum(m) - m
    exponent = m[of_key] - 1 - (np.arange(len(taken), dtype=np.int64) - starts[of_key])
    powers = np.ones(int(m.max(initial=0)) + 1, dtype=np.uint64)
    for e in range(1, len(powers)):
        powers[e] = (powers[e - 1] * np.uint64(31)) & np.uint64(_MASK)
    with np.errstate(over="ignore"):
        terms = (hashes * powers[exponent]) & np.uint64(_MASK)
        sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(terms, dtype=np.uint64)])
        total = powers[m] + sums[starts + m] - sums[starts]
    return (total & np.uint64(_MASK)).astype(np.uint32)


def bucket_file_id(bucket: int) -> str:
    """A new file group id for ``bucket``: a UUID whose first eight characters are the
    bucket number, then ``-0`` (Hudi's ``newBucketFileIdPrefix`` and ``createNewFileId``)."""
    return f"{bucket:0{_BUCKET_DIGITS}d}{str(uuid.uuid4())[_BUCKET_DIGITS:]}-0"


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket a file group id starts with, None when it starts with no bucket number."""
    head = file_id[:_BUCKET_DIGITS]
    return int(head) if len(head) == _BUCKET_DIGITS and head.isascii() and head.isdigit() else None


def new_bucket_placeholder(bucket: int) -> str:
    """The file id records of a bucket without a file group carry until the plan creates
    its group (:func:`placeholder_bucket`); never written anywhere."""
    return f"{bucket:0{_BUCKET_DIGITS}d}"


def placeholder_bucket(file_id: str) -> int | None:
    """The bucket of a :func:`new_bucket_placeholder`, None for a real file id."""
    return bucket_of_file_id(file_id) if len(file_id) == _BUCKET_DIGITS else None


def shared_buckets(mine: Iterable[tuple[str, str]], theirs: Iterable[tuple[str, str]]) -> list[tuple[str, int | None, tuple[str, ...]]]:
    """The buckets two writes both wrote to, from their file groups (partition, file id):
    (partition, bucket, the file ids of both writes there, sorted), sorted. Apache Hudi's
    ``BucketIndexConcurrentFileWritesConflictResolutionStrategy``: writes conflict on one
    bucket of one partition, through one file group or two (two writers each creating
    a bucket's first group would otherwise both commit, and the bucket would hold two). An
    id naming no bucket is compared whole (bucket None)."""

    def by_bucket(groups: Iterable[tuple[str, str]]) -> dict[tuple[str, int | str], set[str]]:
        out: dict[tuple[str, int | str], set[str]] = {}
        for partition, file_id in groups:
            b = bucket_of_file_id(file_id)
            out.setdefault((partition, file_id if b is None else b), set()).add(file_id)
        return out

    ours, others = by_bucket(mine), by_bucket(theirs)
    both = sorted(ours.keys() & others.keys(), key=lambda k: (k[0], str(k[1]).zfill(_BUCKET_DIGITS)))
    return [(p, b if isinstance(b, int) else None, tuple(sorted(ours[(p, b)] | others[(p, b)]))) for p, b in both]


def not_a_bucket(file_id: str, partition: str) -> ConfigError:
    """The error of a bucket write meeting a file group whose id names no bucket."""
    return ConfigError(
        f"hoodie.index.type=BUCKET, but file group {file_id} of partition {partition!r} is not a bucket's (its id does not "
        "start with an 8-digit bucket number): the table was written with another index type"
    )


def bucket_groups(file_ids: Sequence[str], spec: BucketSpec, partition: str) -> tuple[np.ndarray, np.ndarray]:
    """The buckets of a partition's file groups, sorted, and each one's position in
    ``file_ids``. A group whose id names no bucket, a bucket beyond
    ``hoodie.bucket.index.num.buckets`` (the table was written with more) and two groups
    of one bucket are errors naming them: placing keys there would duplicate them."""
    buckets = np.empty(len(file_ids), dtype=np.int64)
    for i, file_id in enumerate(file_ids):
        b = bucket_of_file_id(file_id)
        if b is None:
            raise not_a_bucket(file_id, partition)
        if b >= spec.num_buckets:
            raise ConfigError(
                f"file group {file_id} of partition {partition!r} is bucket {b}, but hoodie.bucket.index.num.buckets={spec.num_buckets}: "
                "the number of buckets of a table cannot change"
            )
        buckets[i] = b
    order = np.argsort(buckets, kind="stable")
    ordered = buckets[order]
    twice = np.flatnonzero(ordered[1:] == ordered[:-1])
    if len(twice):
        b = int(ordered[twice[0]])
        both = sorted(file_ids[int(i)] for i in np.flatnonzero(buckets == b))
        raise TableError(f"partition {partition!r} holds several file groups of bucket {b}: {', '.join(both)}")
    return ordered, order


def locate_buckets(buckets: np.ndarray, file_ids: Sequence[str], spec: BucketSpec, partition: str) -> np.ndarray:
    """For each bucket id of ``buckets`` (keys of one partition), the position in
    ``file_ids`` (that partition's file groups) of its bucket's group, or -1."""
    ordered, order = bucket_groups(file_ids, spec, partition)
    if len(ordered) == 0:
        return np.full(len(buckets), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(ordered, buckets), len(ordered) - 1)
    return np.where(ordered[at] == buckets, order[at], -1)
