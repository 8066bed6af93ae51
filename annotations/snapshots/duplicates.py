"""No silent duplicate: a snapshot whose content would equal the latest one's is refused unless forced.

The check writes the files the snapshot would hold (same code as the build: unsaved frozen items
through the exporters, into a temporary folder) and compares their content checksum with the latest
ready snapshot's; so "the same content" means exactly what ``content_sha256`` means.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from annotations.models import Snapshot, SnapshotStatus
from annotations.snapshots import freeze
from annotations.snapshots.errors import SnapshotError
from annotations.snapshots.exporters import FORMATS, write_files


class DuplicateSnapshot(SnapshotError):
    """The requested snapshot's content equals the latest snapshot's; nothing was created."""

    def __init__(self, message: str, *, latest: Snapshot, content_sha256: str) -> None:
        super().__init__(message)
        self.latest = latest
        self.content_sha256 = content_sha256


def prospective_content_sha256(*, filters: dict[str, Any], tmp_root: Path) -> str:
    """The ``content_sha256`` a snapshot with ``filters`` would get if built now."""
    from annotations.snapshots.services import content_sha256  # services imports this module

    tmp_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".duplicate-check.", dir=tmp_root))
    try:
        files = write_files(
            items=freeze.unsaved_items(filters=filters),
            formats=list(FORMATS),
            out_dir=tmp,
            languages=filters["languages"],
        )
        return content_sha256(files)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def refuse_duplicate(*, filters: dict[str, Any], tmp_root: Path) -> None:
    """Raise :class:`DuplicateSnapshot` if the content equals the latest ready snapshot's."""
    latest = Snapshot.objects.filter(status=SnapshotStatus.READY).order_by("-version").first()
    if latest is None or not latest.content_sha256:
        return
    checksum = prospective_content_sha256(filters=filters, tmp_root=tmp_root)
    if checksum == latest.content_sha256:
        raise DuplicateSnapshot(
            f"the curated set has not changed since {latest.label}: its content checksum would equal "
            f"{latest.label}'s ({checksum}); no snapshot was created",
            latest=latest,
            content_sha256=checksum,
        )
