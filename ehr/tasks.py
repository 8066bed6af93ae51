"""Celery tasks of the ``ehr`` app: thin wrappers over services."""

from pathlib import Path

from celery import shared_task

from ehr.importer import import_mimic_directory


class MimicImportFailed(Exception):
    """A table could not be imported (message: ``FILE:LINE: ...`` and which tables were committed)."""


@shared_task(name="ehr.import_mimic_dir", acks_late=True)
def import_mimic_dir(root: str, subjects: list[int] | None = None, tables: list[str] | None = None) -> dict:
    """Import a MIMIC-IV directory; returns rows loaded per table.

    Each table's import replaces its content, so running the task again after a lost worker gives
    the same result: acknowledging late is safe. Bad input raises (task state FAILURE).
    """
    report = import_mimic_directory(
        root=Path(root),
        subjects={int(s) for s in subjects} if subjects is not None else None,
        tables=tables,
        skip_bad_rows=False,
        rejects_dir=None,
        progress=False,
    )
    if failed := report.failed:
        raise MimicImportFailed(f"{failed.error} ({report.outcome_line()})")
    return report.rows_by_table()
