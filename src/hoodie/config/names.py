"""Which known option name an unknown key was meant to be: the suggestion of an unknown
option's error (:func:`hoodie.config.options.check_unknown`). Pure: it is given the names."""
from __future__ import annotations

import difflib
import math
import re
from functools import lru_cache


def _segments(key: str) -> list[str]:
    return [s for s in key.lower().split(".")[1:] if s]


@lru_cache(maxsize=4)
def _segment_weights(names: tuple[str, ...]) -> dict[str, float]:
    """How much a name segment says: ``write`` or ``type`` appear in many option names and
    say little; ``concurrency`` or ``recordkey`` say a lot."""
    counts: dict[str, int] = {}
    for name in names:
        for seg in set(_segments(name)):
            counts[seg] = counts.get(seg, 0) + 1
    return {seg: 1.0 + math.log(len(names) / n) for seg, n in counts.items()}


_UNKNOWN_SEGMENT_WEIGHT = 6.0  # a segment no option has: more telling than any known one
_SAME_SEGMENT = 0.75  # difflib ratio from which two segments count as the same word mistyped
_CLOSE_ENOUGH = 0.6  # share of the two names' weight their matching segments must carry
# Outside hoodie.*, where Spark's own options live (header, basePath, spark.sql.files.
# maxPartitionBytes), only a near-copy of a whole option name counts as a typo of it.
_SAME_NAME = 0.85


def closest_name(key: str, names: tuple[str, ...]) -> str | None:
    """The name among ``names`` (the options and their aliases) closest to ``key``, or
    ``None`` when none is close.

    For a ``hoodie.*`` key, by its dot-separated segments: a suggestion must share the
    segments that carry meaning (matching only ``hoodie.write`` suggests nothing), each the
    same word or a small typo of it. For any other key, only an option whose whole name
    it nearly spells (``as.of.instnt``, ``hoodi.table.name``, ``ignoreMisingFiles``):
    sharing words with an option is no sign of a typo there.
    """
    if not key.lower().startswith("hoodie."):
        spelled = _spelling(key)
        ratio, nearest = max((difflib.SequenceMatcher(None, spelled, _spelling(name)).ratio(), name) for name in names)
        return nearest if ratio >= _SAME_NAME else None
    weights = _segment_weights(names)
    typed = _segments(key)
    if not typed:
        return None

    def weight(seg: str) -> float:
        return weights.get(seg, _UNKNOWN_SEGMENT_WEIGHT)

    best, best_score = None, 0.0
    for name in names:
        segs = _segments(name)
        if not segs:
            continue
        matched = 0.0
        for seg in typed:
            ratio, other = max((difflib.SequenceMatcher(None, seg, s).ratio(), s) for s in segs)
            if ratio >= _SAME_SEGMENT:
                matched += ratio * min(weight(seg), weight(other))
        score = matched / max(sum(map(weight, typed)), sum(map(weight, segs)))
        if score > best_score:
            best, best_score = name, score
    return best if best_score >= _CLOSE_ENOUGH else None


def _spelling(name: str) -> str:
    """A name as typed, whatever its case and separators (``as_of_instant``)."""
    return re.sub(r"[._\-\s]+", ".", name.strip().lower())
