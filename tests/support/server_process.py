"""``hoodie timeline-server`` as a child process for tests: started on 127.0.0.1 and a free
port, its port read from the line it prints first."""
from __future__ import annotations

import os
import re
import subprocess
import sys


def start_server(*args: str) -> tuple[subprocess.Popen[str], int]:
    """The running server process (its other output is left in its stdout) and its port."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hoodie.cli", "timeline-server", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)", first)
    assert match, first + proc.stdout.read()
    return proc, int(match.group(1))
