"""Start Django in a fresh interpreter with a chosen environment: how settings errors are tested.

Settings are read once per process, so a bad value can only be observed in a new one. Test-only
variables of the outer run stay out (tests/e2e sets DJANGO_ALLOW_ASYNC_UNSAFE, which the deploy check flags).
"""

import os
import subprocess
import sys

from django.conf import settings

_EXCLUDED = {"DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
BASE_ENV = {k: v for k, v in os.environ.items() if k not in _EXCLUDED}


def run_python(args: list[str], *, env: dict[str, str], var_dir, timeout: int = 120) -> subprocess.CompletedProcess:
    """``python ARGS`` in the project folder with ``env`` over the outer environment."""
    return subprocess.run(
        [sys.executable, *args],
        env={**BASE_ENV, "PHYSREVIEW_VAR_DIR": str(var_dir), **env},
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def print_settings(expression: str, *, env: dict[str, str], var_dir) -> subprocess.CompletedProcess:
    """Set Django up and print ``expression`` evaluated over the settings module as ``s``."""
    code = f"import django; django.setup(); from django.conf import settings as s; print({expression})"
    return run_python(["-c", code], env=env, var_dir=var_dir)
