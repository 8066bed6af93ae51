"""Output folders of commands: checked before any work is done (a clear error, nothing half-written)."""

from __future__ import annotations

import tempfile
from pathlib import Path


def probe_writable_dir(path: Path) -> None:
    """Make ``path`` (and its parents) and write a temporary file in it; raises the ``OSError`` that says why not.
    Callers turn it into their own message naming their option."""
    path.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=path):
        pass
