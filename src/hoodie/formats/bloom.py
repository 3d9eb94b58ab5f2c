"""Hudi-compatible bloom filters and the parquet footer entries that carry them.

This module owns everything byte-exact about Hudi's record-key bloom filters (table
version 6 and later):

* :func:`hadoop_murmur_hash` — Hadoop's 32-bit MurmurHash2 variant (the 1–3 tail bytes
  are sign-extended Java ``byte`` values XORed in reverse order), the only hash Hudi ever
  writes (hash type 1);
* :class:`SimpleBloomFilter` — Hadoop ``BloomFilter`` / Hudi ``SimpleBloomFilter``
  (type code ``SIMPLE``);
* :class:`DynamicBloomFilter` — Hudi ``HoodieDynamicBoundedBloomFilter`` (type code
  ``DYNAMIC_V0``, the default), a list of simple rows that grows up to a bound;
* the Base64 string form stored in parquet footers (:func:`serialize_filter`,
  :func:`deserialize_filter`) and the footer key names; the footer entries themselves,
  and filters probed without decoding, are :mod:`hoodie.formats.bloom_footer`'s.

Serialization is Java ``DataOutput`` (big-endian)::

    SIMPLE      int32 -1 | int32 nbHash | int8 hashType | int32 vectorSize | ceil(vectorSize/8) bytes
    DYNAMIC_V0  the same 13-byte header | int32 nr | int32 currentNbRecord | int32 rows | rows × SIMPLE

Bit *i* of a row lives in byte ``i >> 3`` under mask ``1 << (i & 7)``; key *k* sets the bits
``|h_j % vectorSize|`` where ``h_0 = murmur(k, 0)`` and ``h_j = murmur(k, h_{j-1})``.

Speed: a default filter uses 30 hash rounds per key and a writer adds every record key of
a file, so :meth:`SimpleBloomFilter.add_many` / :meth:`DynamicBloomFilter.add_many` hash
whole batches at once with numpy (keys sorted longest first so each word step is one
slice operation; the seed-independent word mixing is computed once and reused by all
30 rounds). The per-key
:meth:`add` / :meth:`might_contain` use a pure-Python path for single keys.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pybase64

from hoodie.errors import ConfigError, FormatError, RecordError

__all__ = [
    "BLOOM_FILTER_KEY",
    "BLOOM_TYPE_CODE_KEY",
    "DEFAULT_FPP",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_NUM_ENTRIES",
    "DYNAMIC_V0",
    "DynamicBloomFilter",
    "MAX_KEY",
    "MIN_KEY",
    "MURMUR_HASH",
    "OLD_BLOOM_FILTER_KEY",
    "SIMPLE",
    "BloomFilter",
    "SimpleBloomFilter",
    "deserialize_filter",
    "hadoop_murmur_hash",
    "new_bloom_filter",
    "optimal_num_bits",
    "optimal_num_hashes",
    "continue_filter",
    "serialize_filter",
]

# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------

#: Footer key of the Base64 bloom filter (``HoodieBloomFilterWriteSupport``).
BLOOM_FILTER_KEY = "org.apache.hudi.bloomfilter"
#: Pre-Apache footer key; Java readers fall back to it when the new key is absent.
OLD_BLOOM_FILTER_KEY = "com.uber.hoodie.bloomfilter"
#: Footer key of the filter type; written only for dynamic filters (absent means SIMPLE).
BLOOM_TYPE_CODE_KEY = "hoodie_bloom_filter_type_code"
#: Footer keys of the smallest / largest record key in the file.
MIN_KEY = "hoodie_min_record_key"
MAX_KEY = "hoodie_max_record_key"

#: ``BloomFilterTypeCode`` names.
SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"

#: Hadoop ``Hash.MURMUR_HASH``; ``Hash.JENKINS_HASH`` (0) is never written by Hudi.
MURMUR_HASH = 1

#: Defaults of ``hoodie.index.bloom.num_entries``, ``hoodie.index.bloom.fpp`` and
#: ``hoodie.bloom.index.filter.dynamic.max.entries``.
DEFAULT_NUM_ENTRIES = 60000
DEFAULT_FPP = 1e-9
DEFAULT_MAX_ENTRIES = 100000

_VERSION = -1  # InternalFilter.VERSION; negative so old (version-less) streams are detectable
_HEADER = struct.Struct(">iibi")  # version, nbHash, hashType, vectorSize
_DYNAMIC_HEADER = struct.Struct(">iii")  # nr, currentNbRecord, rows
_INT = struct.Struct(">i")

_M = 0x5BD1E995
_MASK32 = 0xFFFFFFFF
_M_U32 = np.uint32(_M)
_U13 = np.uint32(13)
_U15 = np.uint32(15)
_U24 = np.uint32(24)

# Keys are hashed in chunks so that the (keys × nbHash) position matrix stays small
# (65536 × 30 × 8 bytes ≈ 16 MB) however many keys a caller passes.
_CHUNK = 1 << 16

KeyBatch: TypeAlias = Sequence[str] | pa.Array | pa.ChunkedArray


# --------------------------------------------------------------------------------------
# Hashing
# --------------------------------------------------------------------------------------


def hadoop_murmur_hash(data: bytes, seed: int) -> int:
    """Hadoop's MurmurHash2 (``org.apache.hadoop.util.hash.MurmurHash``) of *data*.

    Returns a signed 32-bit int, as Java does. *seed* is taken modulo 2**32, so both the
    signed value Java chains into the next round and its unsigned form work.

    Differs from Appleby's MurmurHash2 in the 1–3 byte tail: the tail bytes are XORed in
    reverse order (last byte lowest), and Java reads them as signed ``byte`` so bytes
    >= 0x80 leak sign bits into the XOR. Keys whose length is a multiple of 4 hash the
    same as canonical MurmurHash2.
    """
    return _to_int32(_murmur_from_mixed(_mixed_words(data), len(data), _tail(data), seed))


def _to_int32(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


def _mixed_words(data: bytes) -> list[int]:
    """Each 4-byte little-endian word after ``k *= m; k ^= k >>> 24; k *= m``.

    That part does not depend on the seed, and every round of a key re-hashes the same
    words with a new seed, so mixing them once per key saves most of the 30 rounds' work.
    """
    out = []
    for (k,) in struct.iter_unpack("<I", data[: len(data) & ~3]):
        k = (k * _M) & _MASK32
        k ^= k >> 24
        out.append((k * _M) & _MASK32)
    return out


def _tail(data: bytes) -> tuple[int, int]:
    """(xor value, multiplier) of the 1–3 trailing bytes; (0, 1) when there is no tail.

    Hadoop XORs ``data[len-3] << 16``, ``data[len-2] << 8`` and ``data[len-1]``: the *last*
    byte lands lowest, the reverse of Appleby's MurmurHash2 for 2- and 3-byte tails.
    """
    left = len(data) & 3
    if not left:
        return 0, 1
    xor = 0
    for j in range(1, left + 1):
        b = data[len(data) - j]
        signed = b - 256 if b >= 128 else b  # Java byte is signed: sign-extend
        xor ^= (signed << (8 * (j - 1))) & _MASK32
    return xor, _M


def _murmur_from_mixed(mixed: list[int], length: int, tail: tuple[int, int], seed: int) -> int:
    h = (seed ^ length) & _MASK32
    for k in mixed:
        h = ((h * _M) & _MASK32) ^ k
    h = ((h ^ tail[0]) * tail[1]) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h


def _positions_one(key: str, nb_hash: int, vector_size: int) -> list[int]:
    """Bit positions of one key (Hadoop ``HashFunction.hash``), pure Python."""
    data = _key_bytes(key)
    mixed = _mixed_words(data)
    tail = _tail(data)
    out = []
    seed = 0
    for _ in range(nb_hash):
        seed = _murmur_from_mixed(mixed, len(data), tail, seed)
        # Java: Math.abs(initval % maxValue) with truncating %, i.e. |initval| % maxValue.
        out.append(abs(_to_int32(seed)) % vector_size)
    return out


def _key_bytes(key: str) -> bytes:
    if key is None:
        raise RecordError("bloom filter key must not be null")
    if not isinstance(key, str):
        raise RecordError(f"bloom filter keys must be strings, got {type(key).__name__}")
    data = key.encode("utf-8")
    if not data:
        # Hadoop HashFunction rejects empty keys ("key length must be > 0").
        raise RecordError("bloom filter key must not be empty")
    return data


def _encode_keys(keys: KeyBatch) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of many keys as (data uint8 array padded by 3 zero bytes, int64 offsets).

    Going through Arrow makes the UTF-8 encoding a single C loop instead of one
    ``str.encode`` per key.
    """
    if isinstance(keys, pa.ChunkedArray):
        arr = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    elif isinstance(keys, pa.Array):
        arr = keys
    else:
        try:
            arr = pa.array(keys, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise RecordError(f"bloom filter keys must be strings: {exc}") from exc
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not pa.types.is_large_string(arr.type):
        if not (pa.types.is_string(arr.type) or pa.types.is_string_view(arr.type)):
            raise RecordError(f"bloom filter keys must be strings, got Arrow type {arr.type}")
        arr = arr.cast(pa.large_string())
    if arr.null_count:
        raise RecordError("bloom filter key must not be null")
    n = len(arr)
    if n == 0:
        return np.zeros(3, np.uint8), np.zeros(1, np.int64)
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    raw = np.frombuffer(buffers[2], dtype=np.uint8)[start:end] if buffers[2] is not None else np.empty(0, np.uint8)
    # Three zero bytes let the tail gather read data[start + 4W + 2] unconditionally.
    data = np.concatenate([raw, np.zeros(3, np.uint8)])
    offsets = offsets - start
    if int(np.min(np.diff(offsets))) <= 0:
        raise RecordError("bloom filter key must not be empty")
    return data, offsets


def _positions_many(data: np.ndarray, offsets: np.ndarray, nb_hash: int, vector_size: int) -> np.ndarray:
    """Bit positions (int64, shape ``(n, nb_hash)``) of the keys encoded in data/offsets.

    Keys are processed longest first, so the keys that still have a j-th 4-byte word are
    always a prefix: each word step of a round is one numpy operation on a slice, however
    many different key lengths there are, and no key is padded.
    """
    n = len(offsets) - 1
    out = np.empty((n, nb_hash), dtype=np.int64)
    if n == 0:
        return out
    nwords_unsorted = np.diff(offsets) >> 2
    order = np.argsort(-nwords_unsorted, kind="stable")
    starts = offsets[:-1][order]
    lengths = np.diff(offsets)[order]
    nwords = nwords_unsorted[order]
    max_words = int(nwords[0])
    # active[j] = number of keys with more than j words (a prefix of the sorted keys).
    active = np.searchsorted(-nwords, -np.arange(max_words), side="left")

    # Seed-independent word mixing (k *= m; k ^= k >>> 24; k *= m), done once for all rounds.
    byte_offsets = np.arange(4, dtype=np.int64)
    mixed: list[np.ndarray] = []
    for j in range(max_words):
        c = int(active[j])
        idx = starts[:c, None] + (4 * j + byte_offsets)
        k = np.ascontiguousarray(data[idx]).view("<u4").reshape(c).astype(np.uint32, copy=False)
        k *= _M_U32
        k ^= k >> _U24
        k *= _M_U32
        mixed.append(k)

    # Tail: sign-extended bytes (Java byte); the last byte is XORed in unshifted, the one
    # before it << 8, the one before that << 16 (see _tail). Independent of the seed too.
    tail_start = starts + 4 * nwords
    left = lengths - 4 * nwords
    tail_xor = np.zeros(n, np.uint32)
    for j in range(3):
        b = data[tail_start + j].view(np.int8).astype(np.int32).astype(np.uint32)
        shift = (np.maximum(left - 1 - j, 0) * 8).astype(np.uint32)
        tail_xor ^= np.where(left > j, b << shift, np.uint32(0))
    tail_mul = np.where(left > 0, _M_U32, np.uint32(1)).astype(np.uint32)
    length_u32 = lengths.astype(np.uint32)

    seed = np.zeros(n, np.uint32)
    h = np.empty(n, np.uint32)
    tmp = np.empty(n, np.uint32)
    res = np.empty((n, nb_hash), np.int64)
    for r in range(nb_hash):
        np.bitwise_xor(seed, length_u32, out=h)
        for k in mixed:
            hv = h[: len(k)]
            hv *= _M_U32
            hv ^= k
        h ^= tail_xor
        h *= tail_mul
        np.right_shift(h, _U13, out=tmp)
        h ^= tmp
        h *= _M_U32
        np.right_shift(h, _U15, out=tmp)
        h ^= tmp
        seed, h = h, seed
        res[:, r] = seed.view(np.int32)
    # |int32(h)| % vectorSize, equal to Java's Math.abs(h % vectorSize).
    np.abs(res, out=res)
    res %= vector_size
    out[order] = res
    return out


def _iter_position_chunks(keys: KeyBatch, nb_hash: int, vector_size: int, chunk: int = _CHUNK) -> Iterable[np.ndarray]:
    """Positions of *keys* in input order, chunk by chunk (bounded memory)."""
    data, offsets = _encode_keys(keys)
    n = len(offsets) - 1
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        yield _positions_many(data, offsets[lo : hi + 1], nb_hash, vector_size)


# Hashing alone goes fastest in chunks of a few thousand keys: each round's arrays stay in
# the CPU cache, and ~500 numpy calls a chunk are spread over enough keys (measured for
# 100,000 keys: ~0.05 s in chunks of 4096-8192, ~0.07 s in chunks of 65536, ~0.1 s in
# chunks of 1000). Filters setting bits per chunk prefer the larger _CHUNK (fewer dense
# passes over their bit vectors).
_HASH_CHUNK = 1 << 13


def key_positions(keys: KeyBatch, nb_hash: int, vector_size: int) -> np.ndarray:
    """The bit positions (int64, shape ``(len(keys), nb_hash)``) of every key in a filter of
    ``nb_hash`` hashes over ``vector_size`` bits, for :meth:`DynamicBloomFilter.add_positions`.

    Hashing many keys in one call costs about half as much a key as hashing them a
    thousand at a time (each chunk is ~500 numpy calls), so a writer creating many small
    files hashes all their keys at once and hands each filter its rows.
    """
    parts = list(_iter_position_chunks(keys, nb_hash, vector_size, _HASH_CHUNK))
    if not parts:
        return np.zeros((0, nb_hash), np.int64)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _check_positions(positions: np.ndarray, nb_hash: int, vector_size: int) -> None:
    if positions.ndim != 2 or positions.shape[1] != nb_hash:
        raise ValueError(f"positions of shape {positions.shape} are not {nb_hash} per key")
    if positions.size and (int(positions.min()) < 0 or int(positions.max()) >= vector_size):
        raise ValueError(f"positions outside a {vector_size}-bit filter")


# --------------------------------------------------------------------------------------
# Sizing
# --------------------------------------------------------------------------------------


def optimal_num_bits(num_entries: int, fpp: float) -> int:
    """``BloomFilterUtils.getBitSize``: ``ceil(n * (-ln p) / (ln 2)^2)``, same float order as Java."""
    return int(math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2)))))


def optimal_num_hashes(num_bits: int, num_entries: int) -> int:
    """``BloomFilterUtils.getNumHashes``: ``ceil(ln 2 * bits / n)``."""
    return int(math.ceil(math.log(2) * num_bits / num_entries))


def _check_sizing(num_entries: int, fpp: float) -> None:
    if num_entries <= 0:
        raise ConfigError(f"bloom filter num_entries must be > 0, got {num_entries}")
    if not 0.0 < fpp < 1.0:
        raise ConfigError(f"bloom filter fpp must be in (0, 1), got {fpp}")


# --------------------------------------------------------------------------------------
# Filters
# --------------------------------------------------------------------------------------


class SimpleBloomFilter:
    """A single bit vector: Hadoop ``BloomFilter`` as wrapped by Hudi's ``SimpleBloomFilter``.

    Bits are kept packed exactly as serialized (LSB-first bytes), so a filter costs
    ``ceil(num_bits / 8)`` bytes (324 KB at the defaults) and serializing is a copy.
    """

    type_code = SIMPLE

    __slots__ = ("num_bits", "num_hashes", "hash_type", "_bits")

    def __init__(self, num_bits: int, num_hashes: int) -> None:
        if num_bits <= 0:
            raise ConfigError(f"bloom filter size must be > 0 bits, got {num_bits}")
        if num_hashes <= 0:
            raise ConfigError(f"bloom filter needs at least one hash, got {num_hashes}")
        self.num_bits = num_bits
        self.num_hashes = num_hashes
        self.hash_type = MURMUR_HASH
        self._bits = np.zeros((num_bits + 7) // 8, dtype=np.uint8)

    @classmethod
    def for_entries(cls, num_entries: int, fpp: float) -> SimpleBloomFilter:
        """A filter sized like Java's ``SimpleBloomFilter(numEntries, errorRate, MURMUR)``."""
        _check_sizing(num_entries, fpp)
        bits = optimal_num_bits(num_entries, fpp)
        return cls(bits, optimal_num_hashes(bits, num_entries))

    # -- keys ---------------------------------------------------------------------------

    def add(self, key: str) -> None:
        """Add one record key (UTF-8 bytes of *key*)."""
        self._set(_positions_one(key, self.num_hashes, self.num_bits))

    def add_many(self, keys: KeyBatch) -> None:
        """Add many keys at once (vectorised); same result as calling :meth:`add` in order."""
        for pos in _iter_position_chunks(keys, self.num_hashes, self.num_bits):
            self._set_many(pos)

    def add_positions(self, positions: np.ndarray) -> None:
        """Add keys given as their :func:`key_positions` for this filter's sizing."""
        _check_positions(positions, self.num_hashes, self.num_bits)
        self._set_many(positions)

    def might_contain(self, key: str) -> bool:
        """False if *key* was certainly never added; True if it may have been."""
        return self._test(_positions_one(key, self.num_hashes, self.num_bits))

    def might_contain_many(self, keys: KeyBatch) -> np.ndarray:
        """:meth:`might_contain` of each key, as a numpy bool array in input order."""
        parts = [self._test_many(pos) for pos in _iter_position_chunks(keys, self.num_hashes, self.num_bits)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    # -- bits ---------------------------------------------------------------------------

    def _set(self, positions: Iterable[int]) -> None:
        bits = self._bits
        for p in positions:
            bits[p >> 3] |= 1 << (p & 7)

    def _set_many(self, positions: np.ndarray) -> None:
        flat = positions.ravel()
        # Scattered positions are set in place (~10 ns each), below a dense scratch
        # vector + packbits (~1.4 ms per 2.6 Mbit row) until well over 100,000 positions.
        if len(flat) * 16 >= self.num_bits:
            scratch = np.zeros(len(self._bits) * 8, dtype=bool)
            scratch[flat] = True
            self._bits |= np.packbits(scratch, bitorder="little")
        else:
            byte, mask = flat >> 3, np.left_shift(np.uint8(1), (flat & 7).astype(np.uint8))
            # A fancy-indexed OR keeps one write per byte, so positions sharing a byte
            # (a few percent) may lose their bit: those are set again with ``ufunc.at``,
            # which combines repeats (and alone costs ~1.5x the whole of this).
            self._bits[byte] |= mask
            lost = (self._bits[byte] & mask) == 0
            if lost.any():
                np.bitwise_or.at(self._bits, byte[lost], mask[lost])

    def _test(self, positions: Iterable[int]) -> bool:
        bits = self._bits
        return all(bits[p >> 3] >> (p & 7) & 1 for p in positions)

    def _test_many(self, positions: np.ndarray) -> np.ndarray:
        hit = (self._bits[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1
        return hit.all(axis=1)

    @property
    def bit_bytes(self) -> bytes:
        """The packed bit vector exactly as serialized (LSB-first, ``ceil(num_bits/8)`` bytes)."""
        return self._bits.tobytes()

    def cardinality(self) -> int:
        """Number of bits set."""
        return int(np.unpackbits(self._bits).sum())

    # -- serialization ------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Java ``InternalBloomFilter.write`` bytes."""
        return b"".join(self._byte_parts())

    def _byte_parts(self) -> list[bytes | memoryview]:
        # the bit vector as a view: joined once, not copied first
        return [_HEADER.pack(_VERSION, self.num_hashes, self.hash_type, self.num_bits), memoryview(self._bits.data)]

    @classmethod
    def from_bytes(cls, data: bytes, offset: int = 0) -> tuple[SimpleBloomFilter, int]:
        """Parse one filter at *offset*; returns it and the offset just past it."""
        num_hashes, hash_type, num_bits, offset = _read_header(data, offset)
        nbytes = (num_bits + 7) // 8
        if offset + nbytes > len(data):
            raise FormatError(
                f"bloom filter truncated: needs {nbytes} bytes of bits at offset {offset}, "
                f"only {len(data) - offset} left"
            )
        f = cls.__new__(cls)
        f.num_bits = num_bits
        f.num_hashes = num_hashes
        f.hash_type = hash_type
        f._bits = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=offset).copy()
        if num_bits & 7:
            # Java's readFields only looks at the first vectorSize bits; drop padding bits
            # so that re-serializing gives what Java would write.
            f._bits[-1] &= (1 << (num_bits & 7)) - 1
        return f, offset + nbytes

    # -- misc ---------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SimpleBloomFilter):
            return NotImplemented
        return (
            self.num_bits == other.num_bits
            and self.num_hashes == other.num_hashes
            and self.hash_type == other.hash_type
            and np.array_equal(self._bits, other._bits)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"SimpleBloomFilter(num_bits={self.num_bits}, num_hashes={self.num_hashes})"


def _read_header(data: bytes, offset: int) -> tuple[int, int, int, int]:
    """Parse the ``InternalFilter`` header; returns (nbHash, hashType, vectorSize, new offset)."""
    if offset + 4 > len(data):
        raise FormatError(f"bloom filter truncated at offset {offset}")
    (version,) = _INT.unpack_from(data, offset)
    if version > 0:
        # Pre-versioning Hadoop format: the first int is nbHash and the hash is Jenkins.
        # Hudi never wrote it; supporting it would need Hadoop's JenkinsHash as well.
        raise FormatError(
            f"bloom filter at offset {offset} uses the unversioned Hadoop format (Jenkins hash), "
            "which Hudi never writes and hoodie does not read"
        )
    if version != _VERSION:
        raise FormatError(f"unsupported bloom filter version {version} at offset {offset}")
    if offset + _HEADER.size > len(data):
        raise FormatError(f"bloom filter header truncated at offset {offset}")
    _, num_hashes, hash_type, num_bits = _HEADER.unpack_from(data, offset)
    if hash_type != MURMUR_HASH:
        raise FormatError(f"unsupported bloom filter hash type {hash_type} (only 1 = murmur is supported)")
    if num_bits <= 0 or num_hashes <= 0:
        raise FormatError(f"invalid bloom filter header: vectorSize={num_bits}, nbHash={num_hashes}")
    return num_hashes, hash_type, num_bits, offset + _HEADER.size


class DynamicBloomFilter:
    """Hudi ``HoodieDynamicBoundedBloomFilter`` (type code ``DYNAMIC_V0``).

    Rows are :class:`SimpleBloomFilter` vectors of one shared size. Keys fill the last row
    up to ``num_entries`` keys; then a new row is added while
    ``rows * num_entries < max_entries``; past that bound keys are spread round-robin over
    the existing rows (the first overflow key goes to row 0, the next one to row 0 again,
    then rows 1, 2, ... — Java's ``InternalDynamicBloomFilter`` quirk, kept so that the
    bytes match). A key may be present if any row says so.
    """

    type_code = DYNAMIC_V0

    __slots__ = (
        "num_bits",
        "num_hashes",
        "num_entries",
        "max_entries",
        "current_nb_record",
        "rows",
        "_reached_max",
        "_cur_matrix_index",
    )

    def __init__(self, num_entries: int, fpp: float, max_entries: int) -> None:
        _check_sizing(num_entries, fpp)
        self.num_bits = optimal_num_bits(num_entries, fpp)
        self.num_hashes = optimal_num_hashes(self.num_bits, num_entries)
        self.num_entries = num_entries  # Java "nr": keys per row
        self.max_entries = max_entries  # Java "maxNr"
        self.current_nb_record = 0  # keys added to the active row (serialized)
        self.rows: list[SimpleBloomFilter] = [SimpleBloomFilter(self.num_bits, self.num_hashes)]
        # Not serialized by Java: a deserialized filter starts again with both unset.
        self._reached_max = False
        self._cur_matrix_index = 0

    # -- row selection ------------------------------------------------------------------

    def _assign_rows(self, n: int) -> list[tuple[int, np.ndarray | slice]]:
        """Advance the row-selection state by *n* keys.

        Returns (row index, key selector) pairs; the selector picks, among the *n* keys,
        those that go to that row. Mirrors ``InternalDynamicBloomFilter.add`` /
        ``getActiveStandardBF`` exactly, including the serialized ``currentNbRecord``.
        """
        plan: list[tuple[int, np.ndarray | slice]] = []
        i = 0
        while i < n:
            if self._reached_max:
                count = n - i
                targets = (self._cur_matrix_index + np.arange(count)) % len(self.rows)
                self._cur_matrix_index += count
                self.current_nb_record += count
                for r in range(len(self.rows)):
                    sel = np.flatnonzero(targets == r) + i
                    if len(sel):
                        plan.append((r, sel))
                break
            if self.current_nb_record >= self.num_entries:
                if len(self.rows) * self.num_entries < self.max_entries:
                    self.rows.append(SimpleBloomFilter(self.num_bits, self.num_hashes))
                    self.current_nb_record = 0
                else:
                    # First overflow key goes to row 0 without advancing the round-robin index.
                    self._reached_max = True
                    plan.append((0, slice(i, i + 1)))
                    self.current_nb_record += 1
                    i += 1
                    continue
            take = min(self.num_entries - self.current_nb_record, n - i)
            plan.append((len(self.rows) - 1, slice(i, i + take)))
            self.current_nb_record += take
            i += take
        return plan

    # -- keys ---------------------------------------------------------------------------

    def add(self, key: str) -> None:
        """Add one record key."""
        positions = _positions_one(key, self.num_hashes, self.num_bits)
        ((row, _),) = self._assign_rows(1)
        self.rows[row]._set(positions)

    def add_many(self, keys: KeyBatch) -> None:
        """Add many keys at once (vectorised); same result as calling :meth:`add` in order."""
        for pos in _iter_position_chunks(keys, self.num_hashes, self.num_bits):
            self._add_positions(pos)

    def add_positions(self, positions: np.ndarray) -> None:
        """Add keys given as their :func:`key_positions` for this filter's sizing, in order."""
        _check_positions(positions, self.num_hashes, self.num_bits)
        self._add_positions(positions)

    def _add_positions(self, positions: np.ndarray) -> None:
        for row, sel in self._assign_rows(len(positions)):
            self.rows[row]._set_many(positions[sel])

    def might_contain(self, key: str) -> bool:
        """False if *key* was certainly never added; True if it may have been."""
        positions = _positions_one(key, self.num_hashes, self.num_bits)
        return any(row._test(positions) for row in self.rows)

    def might_contain_many(self, keys: KeyBatch) -> np.ndarray:
        """:meth:`might_contain` of each key, as a numpy bool array in input order."""
        parts = []
        for pos in _iter_position_chunks(keys, self.num_hashes, self.num_bits):
            hit = self.rows[0]._test_many(pos)
            for row in self.rows[1:]:
                hit |= row._test_many(pos)
            parts.append(hit)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    # -- serialization ------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Java ``InternalDynamicBloomFilter.write`` bytes."""
        head = _HEADER.pack(_VERSION, self.num_hashes, MURMUR_HASH, self.num_bits)
        head += _DYNAMIC_HEADER.pack(self.num_entries, self.current_nb_record, len(self.rows))
        return b"".join([head, *(part for row in self.rows for part in row._byte_parts())])

    @classmethod
    def from_bytes(cls, data: bytes, offset: int = 0) -> tuple[DynamicBloomFilter, int]:
        """Parse one dynamic filter at *offset*; returns it and the offset just past it.

        Like Java, the bound ``max_entries`` is not part of the bytes: the result has
        ``max_entries = 0``, so keys added after loading never open a new row.
        """
        num_hashes, _, num_bits, offset = _read_header(data, offset)
        if offset + _DYNAMIC_HEADER.size > len(data):
            raise FormatError(f"dynamic bloom filter header truncated at offset {offset}")
        nr, current, nrows = _DYNAMIC_HEADER.unpack_from(data, offset)
        offset += _DYNAMIC_HEADER.size
        if nrows <= 0:
            raise FormatError(f"dynamic bloom filter has {nrows} rows")
        rows = []
        for _ in range(nrows):
            row, offset = SimpleBloomFilter.from_bytes(data, offset)
            rows.append(row)
        f = cls.__new__(cls)
        f.num_bits = num_bits
        f.num_hashes = num_hashes
        f.num_entries = nr
        f.max_entries = 0
        f.current_nb_record = current
        f.rows = rows
        f._reached_max = False
        f._cur_matrix_index = 0
        return f, offset

    # -- misc ---------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DynamicBloomFilter):
            return NotImplemented
        return (
            self.num_bits == other.num_bits
            and self.num_hashes == other.num_hashes
            and self.num_entries == other.num_entries
            and self.current_nb_record == other.current_nb_record
            and self.rows == other.rows
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (
            f"DynamicBloomFilter(num_bits={self.num_bits}, num_hashes={self.num_hashes}, "
            f"num_entries={self.num_entries}, rows={len(self.rows)}, "
            f"current_nb_record={self.current_nb_record})"
        )


BloomFilter = SimpleBloomFilter | DynamicBloomFilter


# --------------------------------------------------------------------------------------
# Factory and string form
# --------------------------------------------------------------------------------------


def new_bloom_filter(
    num_entries: int = DEFAULT_NUM_ENTRIES,
    fpp: float = DEFAULT_FPP,
    filter_type: str = DYNAMIC_V0,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> BloomFilter:
    """``BloomFilterFactory.createBloomFilter`` with Hudi's config defaults.

    *filter_type* is ``hoodie.bloom.index.filter.type`` (``SIMPLE`` or ``DYNAMIC_V0``,
    case-insensitive like Java).
    """
    code = filter_type.upper()
    if code == SIMPLE:
        return SimpleBloomFilter.for_entries(num_entries, fpp)
    if code == DYNAMIC_V0:
        return DynamicBloomFilter(num_entries, fpp, max_entries)
    raise ConfigError(f"bloom filter type code not recognizable: {filter_type!r} (use SIMPLE or DYNAMIC_V0)")


def continue_filter(
    old: BloomFilter | None,
    live_keys: int,
    num_entries: int = DEFAULT_NUM_ENTRIES,
    fpp: float = DEFAULT_FPP,
    filter_type: str = DYNAMIC_V0,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    max_bloat: float = 1.25,
) -> DynamicBloomFilter | None:
    """``old`` ready to take more keys for a rewritten file, or None to build afresh.

    A copy-on-write merge keeps most keys of the file it rewrites; their bits are already
    in that file's filter, so only new keys need hashing. Keys removed since stay in the
    filter (false positives, which the index verifies away); once the filter holds more
    than ``max_bloat`` times the file's live keys it is rebuilt. Only a dynamic filter of
    the configured sizing qualifies, so the result equals a fresh filter in shape.
    """
    if not isinstance(old, DynamicBloomFilter) or filter_type.upper() != DYNAMIC_V0:
        return None
    bits = optimal_num_bits(num_entries, fpp)
    if (old.num_bits, old.num_hashes, old.num_entries) != (bits, optimal_num_hashes(bits, num_entries), num_entries):
        return None
    if old._reached_max or (len(old.rows) - 1) * old.num_entries + old.current_nb_record > max_bloat * max(live_keys, 1):
        return None
    old.max_entries = max_entries  # not serialized; restore the bound so rows can grow again
    return old


def serialize_filter(f: BloomFilter) -> str:
    """Footer string: standard padded Base64 of :meth:`to_bytes` (Java ``serializeToString``)."""
    return serialized_text(f).decode("ascii")


def serialized_text(f: BloomFilter) -> bytes:
    """:func:`serialize_filter` as the ASCII bytes a footer stores (a default filter's ~430
    KB are not copied into a ``str`` and back). pybase64's SIMD codec takes ~15 µs for
    them, the standard library's ~0.5 ms with the GIL held: a write creating a hundred
    files spent a tenth of its GIL time there."""
    return pybase64.b64encode(f.to_bytes())


def deserialize_filter(text: str | bytes, type_code: str | None) -> BloomFilter:
    """Parse a footer string; *type_code* None means ``SIMPLE`` (the footer omits it then)."""
    code = SIMPLE if type_code is None else type_code.upper()
    try:
        data = pybase64.b64decode(text, validate=True)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"bloom filter is not valid Base64: {exc}") from exc
    parsed: BloomFilter
    if code == SIMPLE:
        parsed, end = SimpleBloomFilter.from_bytes(data)
    elif code == DYNAMIC_V0:
        parsed, end = DynamicBloomFilter.from_bytes(data)
    else:
        raise FormatError(f"bloom filter type code not recognizable: {type_code!r}")
    if end != len(data):
        # Java would ignore the rest, but leftovers almost always mean a wrong type code
        # (a dynamic filter parsed as simple), which would silently give wrong answers.
        raise FormatError(
            f"{len(data) - end} unexpected bytes after a {code} bloom filter; is the type code right?"
        )
    return parsed
