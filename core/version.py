"""The code version recorded in manifests (runs, snapshot exports): ``git describe`` of the checkout."""

import subprocess

from django.conf import settings


def code_version() -> str:
    """``git describe --always --dirty --tags`` of the project, or ``unknown`` outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
