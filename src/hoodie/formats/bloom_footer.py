"""Bloom filters in their Parquet-footer form: probed and extended as Base64 text.

This module owns the footer entries of a Hudi base file that describe its record keys
(:class:`FooterIndex`, :func:`read_footer_index`, :func:`footer_metadata`) and
:class:`EncodedBloomFilter`, a filter used *in* its footer string. The filter's bytes and
hashing are :mod:`hoodie.formats.bloom`'s; nothing here changes what is written.

Why not decode: a default filter is ~430 KB of Base64, and every bloom-index lookup and
every copy-on-write merge used to decode it whole (holding the GIL), only to test or set
~30 bits per key. In standard Base64 every bit of the decoded bytes lives in exactly one
character: byte ``j`` is in group ``j // 3`` (characters ``4 * (j // 3)`` to ``+3``), whose
24 bits are the group's three bytes big-endian, and character ``c`` of a group holds bits
``23 - 6c`` down to ``18 - 6c``. So a probe reads only the characters its bits fall in,
and adding keys rewrites only those characters plus the two groups holding the dynamic
filter's key count. The result is byte-identical to decoding, adding and re-encoding.
"""
from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from hoodie.errors import FormatError
from hoodie.formats.bloom import (
    _DYNAMIC_HEADER,
    _HEADER,
    BLOOM_FILTER_KEY,
    BLOOM_TYPE_CODE_KEY,
    DYNAMIC_V0,
    MAX_KEY,
    MIN_KEY,
    OLD_BLOOM_FILTER_KEY,
    SIMPLE,
    BloomFilter,
    DynamicBloomFilter,
    KeyBatch,
    _iter_position_chunks,
    _positions_one,
    _read_header,
    continue_filter,
    deserialize_filter,
    optimal_num_bits,
    optimal_num_hashes,
    serialized_text,
)

__all__ = ["EncodedBloomFilter", "FooterIndex", "continue_encoded", "filter_for_rewrite", "footer_metadata", "read_footer_index"]

_ALPHABET = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=np.uint8)
_INVALID = np.uint8(255)
_DECODE = np.full(256, _INVALID, dtype=np.uint8)
_DECODE[_ALPHABET] = np.arange(64, dtype=np.uint8)
# Decoded byte offset of the dynamic header's currentNbRecord (after the 13-byte filter
# header and the int32 nr).
_CURRENT_OFFSET = _HEADER.size + 4


def _decode_bytes(text: bytes, start: int, end: int) -> bytes:
    """Decoded bytes ``[start, end)`` of the Base64 ``text``, decoding only their groups."""
    g0, g1 = start // 3, (end + 2) // 3
    try:
        chunk = base64.b64decode(text[4 * g0 : 4 * g1], validate=True)
    except (ValueError, binascii.Error) as exc:
        raise FormatError(f"bloom filter is not valid Base64 near byte {start}: {exc}") from exc
    return chunk[start - 3 * g0 : end - 3 * g0]


def _decoded_length(text: bytes) -> int:
    if len(text) % 4:
        raise FormatError(f"bloom filter Base64 length {len(text)} is not a multiple of 4")
    if not text:
        return 0
    pad = (text[-1] == 0x3D) + (text[-2] == 0x3D)  # "="
    if pad and text[-3] == 0x3D:
        raise FormatError("bloom filter Base64 has more than two padding characters")
    return len(text) // 4 * 3 - pad


def _char_tables() -> tuple[np.ndarray, np.ndarray]:
    """By (byte index within its group) * 8 + bit: the character within the group that
    holds the bit, and the bit's place in that character's 6-bit value."""
    within, shift = np.empty(24, np.int64), np.empty(24, np.uint8)
    for r in range(3):
        for b in range(8):
            group_bit = (2 - r) * 8 + b  # 23 = the group's first (most significant) bit
            c = (23 - group_bit) // 6
            within[r * 8 + b], shift[r * 8 + b] = c, group_bit - 18 + 6 * c
    return within, shift


_WITHIN, _SHIFT = _char_tables()


def _char_bits(byte_offset: int, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(character index, bit within its 6-bit value) of bit ``positions`` of the bit vector
    that starts at decoded byte ``byte_offset``."""
    group, r = np.divmod(byte_offset + (positions >> 3), 3)
    slot = r * 8 + (positions & 7)
    return 4 * group + _WITHIN[slot], _SHIFT[slot]


class EncodedBloomFilter:
    """A serialized ``SIMPLE`` or ``DYNAMIC_V0`` filter kept as its footer Base64 text.

    Construction parses and checks the headers (a few dozen characters); the bit vectors
    are only touched by :meth:`might_contain_many` and :meth:`with_keys`.
    """

    def __init__(self, text: bytes, type_code: str | None) -> None:
        self.text = text
        code = SIMPLE if type_code is None else type_code.upper()
        if code not in (SIMPLE, DYNAMIC_V0):
            raise FormatError(f"bloom filter type code not recognizable: {type_code!r}")
        self.type_code = code
        total = _decoded_length(text)
        head = _decode_bytes(text, 0, min(total, _HEADER.size + _DYNAMIC_HEADER.size))
        self.num_hashes, _, self.num_bits, offset = _read_header(head, 0)
        nbytes = (self.num_bits + 7) // 8
        if code == SIMPLE:
            self.num_entries = self.current_nb_record = 0
            self.row_offsets: tuple[int, ...] = (offset,)
        else:
            if len(head) < offset + _DYNAMIC_HEADER.size:
                raise FormatError(f"dynamic bloom filter header truncated at offset {offset}")
            self.num_entries, self.current_nb_record, rows = _DYNAMIC_HEADER.unpack_from(head, offset)
            if rows <= 0:
                raise FormatError(f"dynamic bloom filter has {rows} rows")
            offset += _DYNAMIC_HEADER.size
            starts = []
            for _ in range(rows):
                if offset + _HEADER.size > total:
                    raise FormatError(f"bloom filter truncated at offset {offset}")
                hashes, _, bits, _ = _read_header(_decode_bytes(text, offset, offset + _HEADER.size), 0)
                offset += _HEADER.size
                if (hashes, bits) != (self.num_hashes, self.num_bits):
                    raise FormatError(f"dynamic bloom filter row sized {bits} bits × {hashes} differs from its header")
                starts.append(offset)
                offset += nbytes
            self.row_offsets = tuple(starts)
        end = self.row_offsets[-1] + nbytes
        if end > total:
            raise FormatError(f"bloom filter truncated: needs {end} bytes, the footer holds {total}")
        if end != total:
            raise FormatError(f"{total - end} unexpected bytes after a {code} bloom filter; is the type code right?")

    @property
    def key_count(self) -> int:
        """Keys the filter says it holds (dynamic filters only; 0 for simple ones)."""
        return (len(self.row_offsets) - 1) * self.num_entries + self.current_nb_record

    @functools.cached_property
    def _chars(self) -> np.ndarray:
        return np.frombuffer(self.text, dtype=np.uint8)

    def might_contain_many(self, keys: KeyBatch) -> np.ndarray:
        """Per key, False if it was certainly never added (as the decoded filter says)."""
        parts = [self._hits(positions) for positions in _iter_position_chunks(keys, self.num_hashes, self.num_bits)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    def might_contain(self, key: str) -> bool:
        """False if ``key`` was certainly never added. One key is hashed in Python (~30
        µs), not through the vectorized hashing, whose ~500 numpy calls cost ~0.4 ms
        however few keys they hash."""
        positions = np.array([_positions_one(key, self.num_hashes, self.num_bits)], dtype=np.int64)
        return bool(self._hits(positions)[0])

    def _hits(self, positions: np.ndarray) -> np.ndarray:
        """Per row of bit ``positions``, whether every bit is set in some row of the filter."""
        hit = np.zeros(len(positions), dtype=bool)
        for start in self.row_offsets:
            chars, shifts = _char_bits(start, positions)
            values = _DECODE[self._chars[chars]]
            if (values == _INVALID).any():
                raise FormatError("bloom filter Base64 holds an invalid character")
            hit |= ((values >> shifts) & 1).all(axis=1).astype(bool)
        return hit

    def with_keys(self, keys: KeyBatch) -> EncodedBloomFilter | None:
        """This dynamic filter with ``keys`` added, as ``DynamicBloomFilter.add_many`` on
        the decoded filter would leave it; None when the keys do not all fit the active
        row (a new row would change the text's length: decode instead)."""
        n = len(keys)
        if self.type_code != DYNAMIC_V0 or self.current_nb_record + n > self.num_entries:
            return None
        if n == 0:
            return self
        out = self._chars.copy()
        start = self.row_offsets[-1]
        for positions in _iter_position_chunks(keys, self.num_hashes, self.num_bits):
            chars, shifts = _char_bits(start, positions.ravel())
            values = _DECODE[out[chars]]
            if (values == _INVALID).any():
                raise FormatError("bloom filter Base64 holds an invalid character")
            # OR every key's bits into a per-character mask first (repeated characters
            # combine there), then rewrite the touched characters: a character listed
            # twice gets the same new value twice, cheaper than finding the distinct ones.
            masks = np.zeros(len(out), dtype=np.uint8)
            np.bitwise_or.at(masks, chars, np.left_shift(np.uint8(1), shifts))
            out[chars] = _ALPHABET[values | masks[chars]]
        # currentNbRecord: rewrite the two groups that hold it
        g0, g1 = _CURRENT_OFFSET // 3, (_CURRENT_OFFSET + 4 + 2) // 3
        chunk = bytearray(base64.b64decode(out[4 * g0 : 4 * g1].tobytes()))
        at = _CURRENT_OFFSET - 3 * g0
        chunk[at : at + 4] = (self.current_nb_record + n).to_bytes(4, "big", signed=True)
        out[4 * g0 : 4 * g1] = np.frombuffer(base64.b64encode(bytes(chunk)), dtype=np.uint8)
        return EncodedBloomFilter(out.tobytes(), self.type_code)

    def decode(self) -> BloomFilter:
        """The filter as a :class:`~hoodie.formats.bloom.BloomFilter`."""
        return deserialize_filter(self.text, self.type_code)

    def __repr__(self) -> str:
        return f"EncodedBloomFilter({self.type_code}, num_bits={self.num_bits}, rows={len(self.row_offsets)}, keys={self.key_count})"


def continue_encoded(
    old: EncodedBloomFilter, keys: KeyBatch, live_keys: int, num_entries: int, fpp: float, filter_type: str, max_bloat: float = 1.25
) -> EncodedBloomFilter | None:
    """``old`` with ``keys`` added, fit to serve a rewritten file, or None to fall back to
    :func:`hoodie.formats.bloom.continue_filter` (same rules: a dynamic filter of the
    configured sizing, not bloated past ``max_bloat`` × the file's live keys)."""
    if old.type_code != DYNAMIC_V0 or filter_type.upper() != DYNAMIC_V0:
        return None
    bits = optimal_num_bits(num_entries, fpp)
    if (old.num_bits, old.num_hashes, old.num_entries) != (bits, optimal_num_hashes(bits, num_entries), num_entries):
        return None
    if old.key_count > max_bloat * max(live_keys, 1):
        return None
    return old.with_keys(keys)


def filter_for_rewrite(
    old: EncodedBloomFilter | None, added: KeyBatch, live_keys: int, num_entries: int, fpp: float, filter_type: str, max_entries: int
) -> BloomFilter | EncodedBloomFilter | None:
    """The filter for a file that rewrites the file whose filter is ``old`` (a merge or a
    compaction): ``old`` plus the ``added`` keys, which must be every key the new file has
    and the old one lacked; in its text when they fit, else decoded; None to build a
    fresh one (see :func:`~hoodie.formats.bloom.continue_filter` for when)."""
    if old is None:
        return None
    encoded = continue_encoded(old, added, live_keys, num_entries, fpp, filter_type)
    if encoded is not None:
        return encoded
    decoded = continue_filter(old.decode(), live_keys, num_entries, fpp, filter_type, max_entries)
    if decoded is not None and len(added):
        decoded.add_many(added)
    return decoded


@dataclass(frozen=True)
class FooterIndex:
    """What a Hudi base file footer says about its record keys."""

    bloom: EncodedBloomFilter | None
    min_key: str | None
    max_key: str | None

    @functools.cached_property
    def bloom_filter(self) -> BloomFilter | None:
        """The filter decoded (for callers that need the whole object)."""
        return None if self.bloom is None else self.bloom.decode()


def footer_metadata(f: BloomFilter | EncodedBloomFilter, min_key: str | None, max_key: str | None) -> dict[bytes, bytes]:
    """Footer key/values for a base file, as ``HoodieBloomFilterWriteSupport.finalizeMetadata``.

    The type code is written only for dynamic filters; min/max keys only when both are
    known (an empty file has neither). Entries come in the order Java's HashMap yields
    them (min, bloom, max, type code), which is how they appear in Java-written files.
    """
    out: dict[bytes, bytes] = {}
    has_range = min_key is not None and max_key is not None
    if has_range:
        out[MIN_KEY.encode()] = min_key.encode("utf-8")  # type: ignore[union-attr]
    if isinstance(f, EncodedBloomFilter):
        out[BLOOM_FILTER_KEY.encode()] = f.text
        dynamic = f.type_code == DYNAMIC_V0
    else:
        out[BLOOM_FILTER_KEY.encode()] = serialized_text(f)
        dynamic = isinstance(f, DynamicBloomFilter)
    if has_range:
        out[MAX_KEY.encode()] = max_key.encode("utf-8")  # type: ignore[union-attr]
    if dynamic:
        out[BLOOM_TYPE_CODE_KEY.encode()] = DYNAMIC_V0.encode()
    return out


def read_footer_index(metadata: Mapping[bytes, bytes] | None) -> FooterIndex | None:
    """Bloom filter and key range from parquet key/value metadata; None if it has none.

    Accepts ``pyarrow.parquet.read_metadata(path).metadata`` directly (bytes keys; None
    when the file has no key/value metadata). Falls back to the old
    ``com.uber.hoodie.bloomfilter`` key like Java does. The filter's headers are checked
    here; its bits are read only when probed.
    """
    if not metadata:
        return None

    def get(key: str) -> str | None:
        value = metadata.get(key.encode())
        return None if value is None else value.decode("utf-8")

    text = metadata.get(BLOOM_FILTER_KEY.encode())
    if text is None:
        text = metadata.get(OLD_BLOOM_FILTER_KEY.encode())
    min_key, max_key = get(MIN_KEY), get(MAX_KEY)
    if text is None and min_key is None and max_key is None:
        return None
    bloom = EncodedBloomFilter(bytes(text), get(BLOOM_TYPE_CODE_KEY)) if text is not None else None
    return FooterIndex(bloom=bloom, min_key=min_key, max_key=max_key)
