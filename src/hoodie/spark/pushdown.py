"""Spark filter conditions as the query layer's row filters, for data skipping.

:func:`implied_filter` turns a resolved Catalyst condition (the ``Filter`` Spark's
analyzer made of ``df.where(...)``) into a :class:`~hoodie.query.skipping.RowFilter`
that every row the condition keeps also passes: ``And``/``Or``/``Not`` (negations pushed
to the leaves by De Morgan, which holds in SQL's three-valued logic), comparisons of a
column with a constant (``=``, ``<=>`` with a non-null constant, ``<``, ``<=``, ``>``,
``>=``, either side), ``BETWEEN``, ``IN`` lists of constants, ``IS NULL`` and ``IS NOT
NULL``. Any other part of the condition (functions of columns, subqueries, nested fields, other
types) becomes "may match", so the filter is weaker than the condition, never stronger:
it only picks the files to read, and Spark applies the whole condition to their rows.

A comparison is kept only where comparing the column's statistics with the constant in
Python gives Spark's answer:

* the column is a column of the table's scan (not a computed one of the same name),
  bare or under a cast that changes no value
  (integers widened, ``float``/small integers to ``double``, decimals widened), of type
  boolean, integral, floating, decimal, string (binary collation), date, timestamp or
  timestamp_ntz;
* on ``float``/``double`` columns only ``<``, ``<=``, ``=`` and ``IN`` with numbers: Spark
  orders NaN above every number (``NaN > 1`` holds) while column statistics leave NaN
  out, so ``>``, ``>=`` and ``!=`` could rule out a file whose NaN rows match;
* the constant folds to a non-null value (a NaN constant is not kept).

The Catalyst objects are reached through py4j (Spark 4's expression classes); nothing
here reads data.
"""
from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Collection
from typing import Any

from py4j.java_gateway import JavaObject
from py4j.protocol import Py4JError

from hoodie.query.skipping import RowFilter

__all__ = ["implied_filter"]

Predicate = tuple[str, str, Any]
# a condition in disjunctive normal form: conjunctions ORed; [()] is "may match anything"
Dnf = list[tuple[Predicate, ...]]
_ANYTHING: Dnf = [()]
# beyond this many conjunctions a condition is not worth expanding: it may match anything
MAX_CONJUNCTIONS = 64

_UNKNOWN = object()
_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_COMPARISONS = {"EqualTo": "=", "EqualNullSafe": "=", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">", "GreaterThanOrEqual": ">="}
# the comparison read with its sides swapped (10 < fare is fare > 10), and negated
_SWAPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATED = {"=": "!=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_INTEGRAL_DIGITS = {"byte": 3, "short": 5, "integer": 10, "long": 20}
_FLOATING = {"float", "double"}
_COMPARABLE = {"boolean", "string", "date", "timestamp", "timestamp_ntz", *_INTEGRAL_DIGITS, *_FLOATING}
# operators NaN rows of a floating column never satisfy (statistics leave NaN out)
_NAN_SAFE = {"=", "<", "<=", "in"}


def implied_filter(condition: JavaObject, columns: Collection[int]) -> RowFilter | None:
    """A row filter implied by the resolved Catalyst ``condition``; None when no part of
    it can rule out a file. Only attributes whose expression ids are in ``columns`` (the
    table scan's columns, as stored) are read as table columns: an attribute of the same
    name made by an alias or a computation is not the column the statistics describe."""
    dnf = _dnf(condition, False, frozenset(columns))
    if any(not conj for conj in dnf):
        return None
    return RowFilter(tuple(dnf))


def _dnf(e: JavaObject, negated: bool, columns: frozenset[int]) -> Dnf:
    kind = e.nodeName()
    if kind == "Not":
        return _dnf(e.child(), not negated, columns)
    if kind in ("And", "Or"):
        left, right = _dnf(e.left(), negated, columns), _dnf(e.right(), negated, columns)
        # NOT (a AND b) is (NOT a) OR (NOT b), and the other way round
        if (kind == "And") != negated:
            return _and(left, right)
        return _or(left, right)
    if kind in ("IsNull", "IsNotNull"):
        column = _column(e.child(), columns)
        if column is None:
            return _ANYTHING
        is_null = (kind == "IsNull") != negated
        return [((column[0], "is null" if is_null else "is not null", None),)]
    if kind in _COMPARISONS:
        return _comparison(e.left(), e.right(), _COMPARISONS[kind], kind == "EqualNullSafe", negated, columns)
    if kind == "Between":
        # v BETWEEN a AND b is v >= a AND v <= b; NOT of it is v < a OR v > b
        value, lower, upper = _between(e)
        low = _comparison(value, lower, ">=", False, negated, columns)
        high = _comparison(value, upper, "<=", False, negated, columns)
        return _or(low, high) if negated else _and(low, high)
    if kind == "In" and not negated:
        return _in(e, columns)
    return _ANYTHING


def _and(left: Dnf, right: Dnf) -> Dnf:
    out = [a + b for a, b in itertools.product(left, right)]
    return out if len(out) <= MAX_CONJUNCTIONS else _ANYTHING


def _or(left: Dnf, right: Dnf) -> Dnf:
    if any(not c for c in left) or any(not c for c in right):
        return _ANYTHING
    out = left + right
    return out if len(out) <= MAX_CONJUNCTIONS else _ANYTHING


def _comparison(left: JavaObject, right: JavaObject, op: str, null_safe: bool, negated: bool, columns: frozenset[int]) -> Dnf:
    column, constant = _column(left, columns), right
    if column is None:
        column, constant, op = _column(right, columns), left, _SWAPPED[op]
    if column is None or (null_safe and negated):
        return _ANYTHING  # NOT (a <=> v) also holds where a is null
    if negated:
        op = _NEGATED[op]
    name, kind = column
    value = _constant(constant, kind)
    if value is None or value is _UNKNOWN or (kind in _FLOATING and op not in _NAN_SAFE):
        return _ANYTHING
    return [((name, op, value),)]


def _between(e: JavaObject) -> tuple[JavaObject, JavaObject, JavaObject]:
    """The value and bounds of ``BETWEEN``, cast to their common type as in the comparisons
    Spark replaces it by (``With(v >= a AND v <= b)``, ``v`` evaluated once); as written
    when the replacement has another shape (then only integer bounds of an integer
    column compare, see :func:`_constant`)."""
    value, lower, upper = e.input(), e.lower(), e.upper()
    replacement = e.replacement()
    if replacement.nodeName() != "With" or replacement.defs().size() != 1:
        return value, lower, upper
    body = replacement.child()
    if body.nodeName() != "And":
        return value, lower, upper
    ge, le = body.left(), body.right()
    shape = (ge.nodeName(), ge.left().nodeName(), le.nodeName(), le.left().nodeName())
    if shape != ("GreaterThanOrEqual", "CommonExpressionRef", "LessThanOrEqual", "CommonExpressionRef"):
        return value, lower, upper
    return replacement.defs().apply(0).child(), ge.right(), le.right()


def _in(e: JavaObject, columns: frozenset[int]) -> Dnf:
    column = _column(e.value(), columns)
    if column is None:
        return _ANYTHING
    name, kind = column
    items = e.list()
    values = [_constant(items.apply(i), kind) for i in range(items.size())]
    # a null in the list matches nothing, so the others decide; anything else unknown
    # (a NaN, an expression of columns) may match any row
    kept = [v for v in values if v is not None]
    if not kept or any(v is _UNKNOWN for v in kept):
        return _ANYTHING
    return [((name, "in", kept),)]


def _column(e: JavaObject, columns: frozenset[int]) -> tuple[str, str] | None:
    """(name, type) of a column of ``columns``, bare or under a cast that changes no value."""
    kind = e.nodeName()
    if kind == "Cast":
        inner = _column(e.child(), columns)
        if inner is None or not _exact_cast(inner[1], e.dataType().typeName()):
            return None
        return inner[0], e.dataType().typeName()
    if kind != "AttributeReference" or e.exprId().id() not in columns:
        return None
    type_name = e.dataType().typeName()
    if type_name not in _COMPARABLE and not type_name.startswith("decimal("):
        return None
    return str(e.name()), type_name


def _exact_cast(source: str, target: str) -> bool:
    """Whether a cast from ``source`` to ``target`` keeps every value as it is (so the
    source's statistics compare with the target's constants)."""
    if source == target:
        return True
    if source in _INTEGRAL_DIGITS and target in _INTEGRAL_DIGITS:
        return _INTEGRAL_DIGITS[target] >= _INTEGRAL_DIGITS[source]
    if target == "double":
        return source in ("float", "byte", "short", "integer")
    if target.startswith("decimal("):
        precision, scale = _decimal(target)
        if source in _INTEGRAL_DIGITS:
            return precision - scale >= _INTEGRAL_DIGITS[source]
        if source.startswith("decimal("):
            p, s = _decimal(source)
            return scale >= s and precision - scale >= p - s
    return False


def _decimal(type_name: str) -> tuple[int, int]:
    precision, scale = type_name[len("decimal("):-1].split(",")
    return int(precision), int(scale)


def _constant(e: JavaObject, kind: str) -> Any:
    """The Python value of the constant expression ``e`` of the column type ``kind``, as
    the metadata table's statistics hold it: None for a null constant, ``_UNKNOWN`` when
    ``e`` is no constant or has no value statistics compare with."""
    constant_kind = e.dataType().typeName()
    # comparisons come with both sides of one type; BETWEEN keeps its bounds' own types
    # (an int bound of a long column), which compare exactly when both are integers
    if not e.foldable() or (constant_kind != kind and not (constant_kind in _INTEGRAL_DIGITS and kind in _INTEGRAL_DIGITS)):
        return _UNKNOWN
    try:
        raw = e.eval(None)
    except Py4JError:
        return _UNKNOWN  # foldable but evaluated by the optimizer only (current_date() ...)
    if raw is None:
        return None
    if kind == "string":
        return str(raw.toString())
    if kind.startswith("decimal("):
        return raw.toJavaBigDecimal()  # py4j hands a java.math.BigDecimal over as Decimal
    if kind == "date":
        return _EPOCH_DAY + dt.timedelta(days=int(raw))
    if kind == "timestamp":
        return _EPOCH + dt.timedelta(microseconds=int(raw))
    if kind == "timestamp_ntz":
        return (_EPOCH + dt.timedelta(microseconds=int(raw))).replace(tzinfo=None)
    if kind in _FLOATING:
        value = float(raw)
        return _UNKNOWN if math.isnan(value) else value
    if kind == "boolean":
        return bool(raw)
    return int(raw)
