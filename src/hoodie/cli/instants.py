"""Instant times as users type them on the command line.

Accepted: Hudi instant times (``yyyyMMddHHmmss`` or ``yyyyMMddHHmmssSSS``), their
prefixes ``yyyyMMdd``, ``yyyyMMddHH`` and ``yyyyMMddHHmm``, ISO dates and times
(``2024-05-01``, ``2024-05-01 13:45:00``, ``2024-05-01T13:45:00.250``) and, for the start
of an incremental range, ``0`` (before every commit): the strict form of
:func:`hoodie.timeline.parse_instant_time`, the one parser of instant times. The result
is the instant string handed to :class:`hoodie.HoodieTable` and :func:`hoodie.read`. A
time-travel instant need not be on the timeline (as in Hudi), but one before the table's
first commit earns a note, since the answer is then empty.
"""
from __future__ import annotations

from hoodie.cli.errors import UsageError
from hoodie.timeline import InstantTimeSyntaxError, parse_instant_time


def parse_instant(text: str, option: str, allow_zero: bool = False) -> str:
    """The instant time ``text`` denotes; :class:`UsageError` naming ``option`` if none.

    Digits are kept as typed when they form a full instant (14 or 17 digits); shorter
    date prefixes are completed with zeros, i.e. the start of that day, hour or minute.
    """
    try:
        return parse_instant_time(text, strict=True, allow_zero=allow_zero)
    except InstantTimeSyntaxError as e:
        raise UsageError(f"invalid instant {text!r} for {option}: {e.reason}") from None
