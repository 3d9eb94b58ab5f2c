"""Instant times as users type them on the command line.

Accepted: Hudi instant times (``yyyyMMddHHmmss`` or ``yyyyMMddHHmmssSSS``), their
prefixes ``yyyyMMdd``, ``yyyyMMddHH`` and ``yyyyMMddHHmm``, ISO dates and times
(``2024-05-01``, ``2024-05-01 13:45:00``, ``2024-05-01T13:45:00.250``) and, for the start
of an incremental range, ``0`` (before every commit). Dates and times are read on the
table's timeline clock, without time-zone conversion (Hudi's instants carry no zone).
The result is the instant string handed to :class:`hoodie.HoodieTable` and
:func:`hoodie.read`. A time-travel instant need not be on the timeline (as in Hudi), but
one before the table's first commit earns a note, since the answer is then empty.
"""
from __future__ import annotations

import re
from datetime import datetime

from hoodie.cli.errors import UsageError

_ISO = re.compile(
    r"^(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})"
    r"(?:[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.(?P<frac>\d{1,3}))?)?)?$",
    re.ASCII,  # instants are ASCII digits: \d alone takes any Unicode digit
)
_EXPECTED = "expected yyyyMMddHHmmss[SSS] or yyyy-MM-dd[ HH:mm[:ss[.SSS]]]"


def parse_instant(text: str, option: str, allow_zero: bool = False) -> str:
    """The instant time ``text`` denotes; :class:`UsageError` naming ``option`` if none.

    Digits are kept as typed when they form a full instant (14 or 17 digits); shorter
    date prefixes are completed with zeros, i.e. the start of that day, hour or minute.
    """
    t = text.strip()
    if allow_zero and t and set(t) == {"0"}:
        return t
    if t.isascii() and t.isdigit():  # isdigit() alone takes any Unicode digit
        if len(t) in (14, 17):
            _check_date(t[:14], text, option)
            return t
        if len(t) in (8, 10, 12):
            _check_date(t.ljust(14, "0"), text, option)
            return t.ljust(17, "0")
        raise UsageError(f"invalid instant {text!r} for {option}: {_EXPECTED}")
    m = _ISO.match(t)
    if m is None:
        raise UsageError(f"invalid instant {text!r} for {option}: {_EXPECTED}")
    digits = "".join(m[g] or "00" for g in ("y", "mo", "d", "h", "mi", "s"))
    _check_date(digits, text, option)
    return digits + (m["frac"] or "").ljust(3, "0")


def instant_order(instant: str) -> str:
    """Sort key of an instant: a second-precision (14-digit) instant stands for the end of
    its second, as Hudi compares them."""
    return instant + "999" if len(instant) == 14 else instant


def _check_date(fourteen: str, text: str, option: str) -> None:
    try:
        datetime.strptime(fourteen, "%Y%m%d%H%M%S")
    except ValueError:
        raise UsageError(f"invalid instant {text!r} for {option}: not a valid date and time") from None
