"""The one place where paths under a table are made.

Every storage path hoodie builds from something it did not make itself — a partition value
in a record, a partition or file name read from commit metadata or a service plan, a
marker name, a folder named in ``hoodie.properties`` — goes through :func:`under`, which
refuses anything that would leave the table's base path. Nothing else joins paths (a test
walks the source to keep it so); storage backends only append names they listed.

A relative path is ``/``-separated names. A name is refused when it is empty (``a//b``, a
leading or trailing ``/``, hence every absolute path), ``.`` or ``..``, holds a NUL or
another control character, or is longer than a file system allows (255 bytes of UTF-8).
A partition path may not start with ``.hoodie``, the table's own metadata folder
(:func:`partition_path_problem`).

This module knows nothing of Hudi beyond that rule; it must not touch storage.
"""
from __future__ import annotations

import re

from hoodie.errors import UnsafePathError

# NAME_MAX of ext4, xfs, btrfs, APFS and NTFS (in bytes of the encoded name)
MAX_NAME_BYTES = 255
META_FOLDER = ".hoodie"  # (layout.HOODIE_FOLDER; storage sits below layout)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# An ASCII path no rule refuses, in one match (commit metadata names every file it wrote,
# and each is checked when it is decoded); anything else takes the detailed checks.
_NAME = rf"(?!\.\.?(?:/|\Z))[^/\x00-\x1f\x7f]{{1,{MAX_NAME_BYTES}}}"
_PLAIN_RELATIVE = re.compile(rf"(?:{_NAME}/)*{_NAME}")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one name of a path under a table, or None."""
    if name == "":
        return "it has an empty path segment (a leading, trailing or doubled '/')"
    if name in (".", ".."):
        return f"it has a {name!r} path segment"
    control = _CONTROL.search(name)
    if control is not None:
        return f"it holds the control character {control.group()!r}"
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        return f"its path segment {_short(name)!r} is {size} bytes long (a file system allows {MAX_NAME_BYTES})"
    return None


def relative_path_problem(relative: str) -> str | None:
    """Why ``relative`` ("" is the base path itself) cannot name a path under a table."""
    if relative == "" or (relative.isascii() and _PLAIN_RELATIVE.fullmatch(relative)):
        return None
    if relative.startswith("/"):
        return "it is an absolute path"
    for name in relative.split("/"):
        problem = name_problem(name)
        if problem is not None:
            return problem
    return None


def partition_path_problem(partition: str) -> str | None:
    """Why ``partition`` cannot be a partition path of a table ("" is the table root)."""
    problem = relative_path_problem(partition)
    if problem is not None:
        return problem
    if partition.split("/")[0].casefold() == META_FOLDER:
        return f"its first folder is {partition.split('/')[0]!r}, the table's metadata folder"
    return None


def check_partition_path(partition: str, source: str) -> str:
    """``partition`` if it can be a partition path, else :class:`UnsafePathError` naming
    ``source`` (e.g. "commit 20240101000000000") and the path."""
    problem = partition_path_problem(partition)
    if problem is not None:
        raise UnsafePathError(f"{source} names the partition {partition!r}, which is not a path inside the table: {problem}")
    return partition


def check_name(name: str, source: str, what: str = "file") -> str:
    """``name`` if it is one name (no ``/``) that can sit under a table, else
    :class:`UnsafePathError` naming ``source`` and the name."""
    if "/" not in name and name.isascii() and _PLAIN_RELATIVE.fullmatch(name):
        return name
    problem = "it holds a '/'" if "/" in name else name_problem(name)
    if problem is not None:
        raise UnsafePathError(f"{source} names the {what} {name!r}, which is not a name inside the table: {problem}")
    return name


def check_relative(path: str, source: str) -> str:
    """``path`` if it is a relative path inside a table, else :class:`UnsafePathError`."""
    problem = relative_path_problem(path)
    if problem is not None:
        raise UnsafePathError(f"{source} names the path {path!r}, which is not a path inside the table: {problem}")
    return path


def recorded_relative(path: str, base_path: str, source: str) -> str:
    """The path relative to ``base_path`` of a full path that table metadata recorded.

    Plans and metadata written by Java record ``file:/t/p/f`` or ``s3a://b/t/p/f`` where
    the table is opened as ``/t`` or ``s3://b/t``: the scheme is not compared, the rest
    must lie under the base path, and what follows it must be a path inside the table.
    Callers rebuild the storage path with :func:`under`, so the recorded form never
    reaches storage.
    """
    recorded, base = _without_scheme(path), _without_scheme(base_path).rstrip("/")
    if not base or not recorded.startswith(base + "/"):
        raise UnsafePathError(f"{source} names the path {path!r}, which is not under the table's base path {base_path!r}")
    rel = recorded[len(base) + 1 :]
    problem = relative_path_problem(rel)
    if problem is not None:
        raise UnsafePathError(f"{source} names the path {path!r}, which is not a path inside the table: {problem}")
    return rel


def recorded_file_in(recorded: str, folder: str, base_path: str, source: str) -> str:
    """The storage path, rebuilt under ``base_path``, of a file that table metadata records
    by full path as one of ``folder`` (a path relative to the base); anything else is an
    :class:`UnsafePathError` (see :func:`recorded_relative`)."""
    rel = recorded_relative(recorded, base_path, source)
    if rel.rpartition("/")[0] != folder:
        raise UnsafePathError(f"{source} lists {recorded!r} as a file of {folder!r}, but it is not one")
    return under(base_path, rel)


def _without_scheme(path: str) -> str:
    if "://" in path:
        path = path.split("://", 1)[1]
    elif path.startswith("file:"):
        path = path[len("file:") :]
    return path.lstrip("/")


def relative(*parts: str, source: str = "") -> str:
    """``parts`` joined by ``/`` (empty parts skipped), each refused if it would leave the
    table (see the module docstring); ``source`` says where the parts came from."""
    kept = [p for p in parts if p != ""]
    for part in kept:
        problem = relative_path_problem(part)
        if problem is not None:
            where = f"{source} names" if source else "refusing"
            raise UnsafePathError(f"{where} the path {part!r}, which is not a path inside the table: {problem}")
    return "/".join(kept)


def under(base_path: str, *parts: str, source: str = "") -> str:
    """The storage path of ``parts`` under ``base_path`` (a table or a folder of one).

    ``base_path`` is trusted (it is what the user opened); every part is checked by
    :func:`relative`, so the result is always ``base_path`` or below it.
    """
    rel = relative(*parts, source=source)
    if not rel:
        return base_path
    return f"{base_path.rstrip('/')}/{rel}"


def relative_to(path: str, base: str) -> str:
    """``path`` relative to ``base`` (both storage paths); "" when equal."""
    base = base.rstrip("/")
    if path == base:
        return ""
    if not path.startswith(base + "/"):
        raise ValueError(f"path {path!r} is not under {base!r}")
    return path[len(base) + 1 :]


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…"
