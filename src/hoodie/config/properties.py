"""Java ``.properties`` text: parse and render (the subset Hudi uses)."""
from __future__ import annotations

from datetime import datetime, timezone


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java Properties text: ``#``/``!`` comments, ``key=value`` or ``key:value``, escapes."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip()
        i += 1
        if not line or line[0] in "#!":
            continue
        while line.endswith("\\") and not line.endswith("\\\\") and i < len(lines):
            line = line[:-1] + lines[i].lstrip()
            i += 1
        key_chars: list[str] = []
        j = 0
        while j < len(line):
            c = line[j]
            if c == "\\" and j + 1 < len(line):
                key_chars.append(line[j : j + 2])
                j += 2
                continue
            if c in "=: \t":
                break
            key_chars.append(c)
            j += 1
        rest = line[j:].lstrip(" \t")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t")
        out[_unescape("".join(key_chars))] = _unescape(rest)
    return out


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    j = 0
    while j < len(s):
        c = s[j]
        if c == "\\" and j + 1 < len(s):
            n = s[j + 1]
            if n == "u" and j + 6 <= len(s):
                out.append(chr(int(s[j + 2 : j + 6], 16)))
                j += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(n, n))
            j += 2
            continue
        out.append(c)
        j += 1
    return "".join(out)


def _escape(s: str, is_key: bool) -> str:
    out: list[str] = []
    for k, c in enumerate(s):
        if c == "\\":
            out.append("\\\\")
        elif c in "=:#!" or (c == " " and (is_key or k == 0)):
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) > 126 or ord(c) < 32:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return "".join(out)


def render_properties(props: dict[str, str], last_key: str | None = None, now: datetime | None = None) -> bytes:
    """Render as Java ``Properties.store`` does (ASCII, escaped), ``last_key`` written last."""
    now = now or datetime.now(timezone.utc)
    lines = [f"#Updated at {now.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}", f"#{now.strftime('%a %b %d %H:%M:%S UTC %Y')}"]
    keys = [k for k in props if k != last_key]
    if last_key is not None and last_key in props:
        keys.append(last_key)
    for k in keys:
        lines.append(f"{_escape(k, True)}={_escape(props[k], False)}")
    return ("\n".join(lines) + "\n").encode("ascii")
