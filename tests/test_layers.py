"""The layer contract of docs/architecture.md (pyproject.toml ``[tool.importlinter]``): kept by the code, and
broken by a deliberate upward import in a copy of the project (so the check is known to bite)."""

import shutil
import subprocess
import sys
from pathlib import Path

from django.conf import settings

PACKAGES = ("core", "ehr", "scenarios", "annotations", "evaluation", "physreview")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root)}
    )


def test_the_code_keeps_the_layers():
    result = _lint_imports(Path(settings.BASE_DIR))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    base = Path(settings.BASE_DIR)
    for package in PACKAGES:
        shutil.copytree(base / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    shutil.copy(base / "pyproject.toml", tmp_path / "pyproject.toml")
    # The EHR layer reaching up into evaluation: the kind of break issue 34 removed.
    with (tmp_path / "ehr" / "selectors.py").open("a") as f:
        f.write("\nfrom evaluation import metrics  # noqa: E402,F401  (deliberate break)\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1
    assert "ehr is not allowed to import evaluation" in result.stdout
    assert "ehr.selectors -> evaluation.metrics" in result.stdout
