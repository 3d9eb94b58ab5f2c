"""Parsers of option values, for the declarations of :mod:`hoodie.config.options`. Each
takes the text a user gave and returns the value, or raises ``ValueError`` saying what is
expected (``expected an integer from 1``), never Python's own wording; ``Option.convert``
adds the option and the value to make the :class:`~hoodie.errors.ConfigError`."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def boolean(v: str) -> bool:
    s = str(v).strip().lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise ValueError("expected true or false")


def upper(v: str) -> str:
    return str(v).strip().upper()


def lower(v: str) -> str:
    return str(v).strip().lower()


def int_in(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An integer parser refusing values below ``low`` (or above ``high``); its errors say
    what is expected, never Python's ``invalid literal for int()``."""
    expected = "an integer" + (f" from {low}" if low is not None else "") + (f" to {high}" if high is not None else "")

    def parse(v: str) -> int:
        try:
            n = int(str(v).strip())
        except ValueError:
            raise ValueError(f"expected {expected}") from None
        if (low is not None and n < low) or (high is not None and n > high):
            raise ValueError(f"expected {expected}")
        return n

    return parse


def number_in(low: float, high: float | None = None, *, open_low: bool = False, open_high: bool = False) -> Callable[[str], float]:
    """A parser of finite numbers from ``low`` (excluded if ``open_low``) up to ``high``."""
    lower = f"greater than {low:g}" if open_low else f"from {low:g}"
    upper = "" if high is None else (f" and less than {high:g}" if open_high else f" to {high:g}")
    expected = f"a number {lower}{upper}"

    def parse(v: str) -> float:
        try:
            x = float(str(v).strip())
        except ValueError:
            raise ValueError(f"expected {expected}") from None
        below = x <= low if open_low else x < low
        above = high is not None and (x >= high if open_high else x > high)
        if not math.isfinite(x) or below or above:
            raise ValueError(f"expected {expected}")
        return x

    return parse


def only_value(parse: Callable[[str], T], supported: T, why: str) -> Callable[[str], T]:
    """A Hudi option hoodie knows but supports at one value only (its default): any other
    is refused, saying why, rather than read past and answered with other data."""

    def check(v: str) -> T:
        value = parse(v)
        if value != supported:
            shown = str(supported).lower() if isinstance(supported, bool) else repr(supported) if supported != "" else "an empty value"
            raise ValueError(f"expected {shown}, the only value hoodie supports: {why}")
        return value

    return check


def field_list(v: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in str(v).split(",") if p.strip())
