"""Many sorted keys looked up in a decompressed HFile data block with numpy: where its
entries start, and the values of the wanted keys, without parsing every entry in Python.

A data block is a run of KeyValues (``klen`` and ``vlen`` as big-endian int32, the key —
row length, row, family, qualifier, timestamp, type —, the value, then tags and the
memstore timestamp when the file has them). Entries are variable in length, so where
each starts is a chain from the first. :func:`entry_starts` finds it without parsing
each entry in Python: the positions that may start an entry (when the block's keys are
all of one length, as record keys often are, those holding the first entry's four bytes
of key length; else every position whose lengths are below 64 KiB: their two high bytes
are zero; and a key whose row and family lengths fit in it) each get the
position after their entry, computed from their own bytes; the positions no other leads
to are dropped until the rest form the chain from position 0 (else the chain is followed
through them, a list lookup a step). Every link of the chain is computed from the bytes
of a real entry, so the result is exactly the entries a sequential parse finds; when a
link leaves the possible starts (a key of another length: then every position is tried;
a length of 64 KiB or more) or the chain does not end at the block's end, there is no
answer (None) and the caller parses the block one entry at a time (and reports damage
as it does).

:func:`find_sorted` then compares the wanted rows with the block's rows as fixed-width
byte strings (numpy's ``S`` dtype, a binary search for all of them at once), and
:func:`gather` copies out only the values of the rows found, in one gather
(:func:`arrow_rows` makes the wanted rows from an Arrow array). ``S`` strings ignore trailing NUL bytes: a row found
must also have the wanted row's length, and wanted rows must hold no NUL byte (the
leftmost of the rows equal but for trailing NULs is then the one wanted, if any).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["arrow_rows", "entry_starts", "find_sorted", "gather", "row_array"]


def row_array(rows: list[bytes]) -> np.ndarray:
    """``rows`` as a numpy ``S`` array (of at least one byte a row)."""
    return np.array(rows, dtype=f"S{max(1, max((len(r) for r in rows), default=1))}")


def arrow_rows(keys: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The strings (or binaries) of ``keys`` (no nulls) as a numpy ``S`` array taken from
    Arrow's buffers without a Python object a key (keys of one length: a view of the
    buffer, no copy), and their lengths in bytes."""
    keys = keys.cast(pa.large_binary())
    n = len(keys)
    offsets = np.frombuffer(keys.buffers()[1], np.int64, n + 1, keys.offset * 8)
    lengths = np.diff(offsets)
    width = max(1, int(lengths.max(initial=0)))
    data = keys.buffers()[2]
    raw = np.frombuffer(data, np.uint8, int(offsets[-1])) if data is not None and offsets[-1] else np.zeros(1, np.uint8)
    first = int(offsets[0]) if n else 0
    if n and (lengths == width).all():
        same: np.ndarray = raw[first : first + n * width].view(f"S{width}")
        return same, lengths
    at = offsets[:-1, None] + np.arange(width)
    rows = np.take(raw, at, mode="clip")
    rows[np.arange(width) >= lengths[:, None]] = 0
    return rows.view(f"S{width}").ravel(), lengths


#: rounds of dropping false starts before following the chain one step at a time
_ROUNDS = 8


def _at(block: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The bytes at ``positions``, widened (the block itself is not: a copy of it costs
    more than every gather)."""
    widened: np.ndarray = block[positions].astype(np.int64)
    return widened


def _u16(block: np.ndarray, positions: np.ndarray) -> np.ndarray:
    value: np.ndarray = (_at(block, positions) << 8) | _at(block, positions + 1)
    return value


def _entry_ends(block: np.ndarray, starts: np.ndarray, with_tags: bool, with_mvcc: bool) -> tuple[np.ndarray, np.ndarray]:
    """Of ``starts`` (offsets of ``block`` at most ``len(block) - 10`` whose lengths are
    below 64 KiB): those whose key's row and family lengths fit in it, and the offset
    after the entry at each of them."""
    size = len(block)
    klen = _u16(block, starts + 2)
    rowlen = _u16(block, starts + 8)
    # a KeyValue key is its row length, row, family length, family, qualifier and 9
    # bytes of timestamp and type: positions whose lengths disagree start nothing
    fam_at = np.minimum(starts + 10 + rowlen, size - 1)
    keyed = (rowlen + 12 <= klen) & (_at(block, fam_at) <= klen - rowlen - 12)
    starts, klen = starts[keyed], klen[keyed]
    after = starts + 8 + klen + _u16(block, starts + 6)
    last = size - 1
    if with_tags:
        after = after + 2 + _u16(block, np.minimum(after, last - 1))
    if with_mvcc:
        first = _at(block, np.minimum(after, last))
        first = np.where(first > 127, first - 256, first)  # Hadoop VLong: a signed first byte
        after = after + np.where(first >= -112, 1, np.where(first >= -120, -111 - first, -119 - first))
    return starts, after


def _same_key_length(block: np.ndarray) -> np.ndarray:
    """The positions holding the first entry's four bytes of key length, followed by a
    value length below 64 KiB: where entries may start when all keys of the block are of
    one length (keys of one shape, as record keys often are). One pass over the block
    for the length's last byte, the other bytes checked at those positions only."""
    size = len(block)
    k = block[:4]
    at = np.flatnonzero(block[3 : size - 6] == k[3])
    kept: np.ndarray = at[(block[at] == k[0]) & (block[at + 1] == k[1]) & (block[at + 2] == k[2]) & (block[at + 4] == 0) & (block[at + 5] == 0)]
    return kept


def entry_starts(block: np.ndarray, with_tags: bool, with_mvcc: bool) -> np.ndarray | None:
    """The offset of every entry of the data block ``block`` (uint8), in order, or None
    when it cannot be found this way (see the module docstring)."""
    size = len(block)
    if size < 10:
        return None
    if block[0] == 0 and block[1] == 0:
        # Keys of one length: the positions holding the first key's length are nearly
        # all entries; used when they chain from the first to the block's end
        starts, after = _entry_ends(block, _same_key_length(block), with_tags, with_mvcc)
        entries = _chain(starts, after, size, follow=False)
        if entries is not None:
            return entries
    head = block[: size - 9]
    may_start = (head == 0) & (block[1 : size - 8] == 0) & (block[4 : size - 5] == 0) & (block[5 : size - 4] == 0)
    starts, after = _entry_ends(block, np.flatnonzero(may_start), with_tags, with_mvcc)
    return _chain(starts, after, size)


def _chain(starts: np.ndarray, after: np.ndarray, size: int, follow: bool = True) -> np.ndarray | None:
    """The entries chained from position 0 to ``size`` through ``starts`` (each leading
    to its ``after``), or None when they do not chain (without ``follow``, also when
    false starts are left after dropping those nothing leads to)."""
    if len(starts) == 0 or starts[0] != 0:
        return None
    if after[-1] == size and (after[:-1] == starts[1:]).all():
        return starts  # no false start among them
    # Positions no kept position leads to start nothing (a false start inside a key or
    # a value is seldom led to): dropped round by round, then the kept ones are the
    # chain if each leads to the next.
    reached = after <= size
    keep = np.ones(len(starts), dtype=bool)
    for _ in range(_ROUNDS):
        marks = np.zeros(size + 1, dtype=bool)
        marks[0] = True
        marks[after[keep & reached]] = True
        kept = keep & marks[starts]
        if (kept == keep).all():
            break
        keep = kept
    entries: np.ndarray = starts[keep]
    ends = after[keep]
    if ends[-1] == size and (ends[:-1] == entries[1:]).all():
        return entries
    if not follow:
        return None
    # else the chain from the first entry, one cheap step an entry (no parsing)
    n = len(starts)
    nxt = np.searchsorted(starts, after)
    link = np.where((nxt < n) & (starts[np.minimum(nxt, n - 1)] == after), nxt, np.where(after == size, n, -1)).tolist()
    chain: list[int] = []
    i = 0
    while 0 <= i < n:
        chain.append(i)
        i = link[i]
    return starts[np.array(chain, dtype=np.int64)] if i == n else None


def find_sorted(block: np.ndarray, entries: np.ndarray, wanted: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the ``wanted`` rows (a sorted ``S`` array without NUL bytes, ``lengths`` their
    lengths in bytes) found among the rows of the block's ``entries``: their positions in
    ``wanted``, and the start and end of the value of the first entry of each (a block
    may hold several entries of one row)."""
    if len(entries) == 0 or len(wanted) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    rowlen = _u16(block, entries + 8)
    width = max(int(rowlen.max()), wanted.dtype.itemsize, 1)
    # each entry's row as ``width`` bytes (int32 offsets and a clipped take: fewer and
    # smaller temporaries than a 64-bit gather), zeroed past its length unless all rows
    # are of that length
    span = np.arange(10, 10 + width, dtype=np.int32)
    first: np.ndarray = entries.astype(np.int32 if len(block) < 1 << 30 else np.int64)
    at = first[:, None] + span
    rows = np.take(block, at, mode="clip")
    if (rowlen != width).any():
        rows[span - 10 >= rowlen[:, None]] = 0
    rows = rows.view(f"S{width}").ravel()
    asked = wanted.astype(f"S{width}")
    pos = np.minimum(np.searchsorted(rows, asked, side="left"), len(rows) - 1)
    # equal as S strings and of the same length: equal bytes (the leftmost of rows that
    # differ only by trailing NULs is the shortest, so a row present is the one found)
    found = (rows[pos] == asked) & (rowlen[pos] == lengths)
    which = np.flatnonzero(found)
    e = entries[pos[which]]
    klen = _u16(block, e + 2)
    vlen = _u16(block, e + 6)
    start = e + 8 + klen
    return which, start, start + vlen


def gather(block: np.ndarray, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The bytes ``block[begin[i]:end[i]]`` of every ``i``, one after another (one
    gather, no slice a value)."""
    sizes = end - begin
    before = np.cumsum(sizes) - sizes  # where each value starts in the result
    picked: np.ndarray = block[np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(begin - before, sizes)]
    return picked
