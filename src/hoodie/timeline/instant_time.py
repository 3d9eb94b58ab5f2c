"""The ranges instants are selected by, and the one parser of the instant times users give
(read options and the command line). Instant times order as
:class:`hoodie.layout.InstantTime` orders them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from hoodie.layout import INSTANT_FORMAT, InstantTime, is_ascii_digits

__all__ = ["InstantRange", "InstantTimeSyntaxError", "parse_instant_time"]


@dataclass(frozen=True)
class InstantRange:
    """Instant times after ``after`` (exclusive) up to ``upto`` (inclusive), either bound
    open when None: Hudi's ``(begin, end]`` of an incremental pull, ``upto`` alone for a
    view as of an instant. ``from_`` instead of ``after`` makes the lower bound inclusive."""

    after: str | None = None
    upto: str | None = None
    from_: str | None = None
    before: str | None = None  # exclusive upper bound, instead of ``upto``

    def __contains__(self, instant: str) -> bool:
        key = InstantTime(instant).key
        return (
            (self.after is None or key > InstantTime(self.after).key)
            and (self.from_ is None or key >= InstantTime(self.from_).key)
            and (self.upto is None or key <= InstantTime(self.upto).key)
            and (self.before is None or key < InstantTime(self.before).key)
        )


# --- parsing what users give ------------------------------------------------------------------

EXPECTED = "expected yyyyMMddHHmmss[SSS] or yyyy-MM-dd[ HH:mm[:ss[.SSS]]]"
_ISO = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<frac>[0-9]{1,3}))?)?)?"
)


class InstantTimeSyntaxError(ValueError):
    """Text that denotes no instant time; ``reason`` says what was expected."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"not an instant time: {text!r} ({reason})")
        self.text = text
        self.reason = reason


def parse_instant_time(text: str, *, strict: bool = False, allow_zero: bool = False) -> str:
    """The instant time ``text`` denotes (surrounding blanks ignored).

    Accepted everywhere: an ISO date or date and time (``2024-05-01``, ``2024-05-01
    13:45``, ``2024-05-01T13:45:00.250``), read on the table's timeline clock without
    time-zone conversion (Hudi's instants carry no zone), completed to
    ``yyyyMMddHHmmssSSS``. Digits:

    * not ``strict`` (read options, as Hudi takes them): any ASCII digits as they are
      (``0`` and ``000`` are the usual "from the beginning" of an incremental pull);
    * ``strict`` (the command line): a full instant (14 or 17 digits) with a valid date,
      as typed; the prefixes ``yyyyMMdd``, ``yyyyMMddHH`` and ``yyyyMMddHHmm``, completed
      with zeros (the start of that day, hour or minute); zeros alone only with
      ``allow_zero``.

    Anything else (fullwidth and other non-ASCII digits too) raises
    :class:`InstantTimeSyntaxError`."""
    t = text.strip()
    if is_ascii_digits(t):
        if not strict or (allow_zero and set(t) == {"0"}):
            return t
        if len(t) in (14, 17):
            _check_date(t[:14], text)
            return t
        if len(t) in (8, 10, 12):
            _check_date(t.ljust(14, "0"), text)
            return t.ljust(17, "0")
        raise InstantTimeSyntaxError(text, EXPECTED)
    m = _ISO.fullmatch(t)
    if m is None:
        raise InstantTimeSyntaxError(text, EXPECTED)
    digits = "".join(m[g] or "00" for g in ("y", "mo", "d", "h", "mi", "s"))
    _check_date(digits, text)
    return digits + (m["frac"] or "").ljust(3, "0")


def _check_date(fourteen: str, text: str) -> None:
    try:
        datetime.strptime(fourteen, INSTANT_FORMAT)
    except ValueError:
        raise InstantTimeSyntaxError(text, "not a valid date and time") from None
