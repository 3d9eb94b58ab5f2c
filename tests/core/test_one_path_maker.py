"""Paths are made in one place: outside ``hoodie/storage/`` no module joins paths by hand.

Every path under a table goes through :func:`hoodie.storage.paths.under` (or
:func:`~hoodie.storage.paths.relative`), which refuses anything that would leave the
table. This test walks the source for the other ways to join paths: ``os.path.join``,
``posixpath.join``, ``pathlib`` and ``/`` between two formatted values or added to a
string (``f"{a}/{b}"``, ``a + "/" + b``). The storage backends themselves only append
names they listed, and are exempt.
"""
from __future__ import annotations

import ast
from pathlib import Path

import hoodie

SOURCE = Path(hoodie.__file__).parent
# storage/: the backends append names they listed to the folder they listed; demo.py:
# picks the folder the demo's table lives in (a user's choice, not a value from data)
EXEMPT = {"storage", "demo.py"}
JOIN_FUNCTIONS = {("os", "path", "join"), ("posixpath", "join"), ("ntpath", "join")}


def _dotted(node: ast.AST) -> tuple[str, ...]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return tuple(reversed(parts))


def _slash_between_values(node: ast.JoinedStr) -> bool:
    """``f"{a}/{b}"``, ``f"{a}/b"`` or ``f"a/{b}"``: a '/' next to a formatted value."""
    values = node.values
    for left, right in zip(values, values[1:]):
        if isinstance(left, ast.FormattedValue) and isinstance(right, ast.Constant) and str(right.value).startswith("/"):
            return True
        # (a URI's scheme, "file://", is not a join)
        if isinstance(left, ast.Constant) and isinstance(right, ast.FormattedValue) and str(left.value).endswith("/") and not str(left.value).endswith("://"):
            return True
    return False


def _adds_slash(node: ast.BinOp) -> bool:
    return isinstance(node.op, ast.Add) and any(
        isinstance(side, ast.Constant) and isinstance(side.value, str) and (side.value.startswith("/") or side.value.endswith("/"))
        for side in (node.left, node.right)
    )


def hand_made_joins(source: str, name: str) -> list[str]:
    """Every hand-made path join in the module ``source`` (``name`` labels the hits)."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call) and _dotted(node.func) in JOIN_FUNCTIONS:
            found.append(f"{where}: {'.'.join(_dotted(node.func))}(...)")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module in ("os.path", "posixpath", "pathlib")
            and any(a.name in ("join", "Path", "PurePosixPath") for a in node.names)
        ):
            found.append(f"{where}: from {node.module} import ...")
        elif isinstance(node, ast.Import) and any(a.name == "pathlib" for a in node.names):
            found.append(f"{where}: import pathlib")
        elif isinstance(node, ast.JoinedStr) and _slash_between_values(node):
            found.append(f"{where}: f-string joining values with '/'")
        elif isinstance(node, ast.BinOp) and _adds_slash(node):
            found.append(f"{where}: '/' added to a string")
    return found


def test_no_module_outside_storage_joins_paths_by_hand() -> None:
    found = [
        hit
        for path in sorted(SOURCE.rglob("*.py"))
        if path.relative_to(SOURCE).parts[0] not in EXEMPT
        for hit in hand_made_joins(path.read_text(), str(path.relative_to(SOURCE)))
    ]
    assert found == [], "paths joined outside hoodie.storage.paths:\n" + "\n".join(found)


def test_the_walk_finds_each_kind_of_join() -> None:
    """The walk itself works: each way of joining paths it looks for is found."""
    sample = (
        "import os\nimport pathlib\nfrom os.path import join\n"
        "a = os.path.join('x', 'y')\nb = f'{a}/{a}'\nc = a + '/' + a\nd = f'{a}/x'\ne = f'file://{a}'\n"
    )
    kinds = sorted(hit.split(": ", 1)[1] for hit in hand_made_joins(sample, "sample"))
    assert kinds == sorted([
        "import pathlib",
        "from os.path import ...",
        "os.path.join(...)",
        "f-string joining values with '/'",
        "f-string joining values with '/'",
        "'/' added to a string",
    ])
