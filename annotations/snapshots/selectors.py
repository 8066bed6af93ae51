"""Reads over snapshots: lookup by label, frozen items in export order, file paths."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import F, QuerySet
from django.db.models.functions import Collate
from psycopg.adapt import Loader

from annotations.models import Snapshot, SnapshotItem, SnapshotStatus
from annotations.snapshots.errors import SnapshotError, UnknownSnapshot

ITEM_CHUNK = 200  # frozen sessions fetched per query while exporting
# Files of a snapshot folder besides the data files listed in the manifest.
SIDE_FILES = ("card.md", "manifest.json", "SHA256SUMS", "croissant.json")
_LABEL = re.compile(r"^v?(\d+)$")


def snapshots_root() -> Path:
    return Path(settings.VAR_DIR) / "snapshots"


def snapshot_dir(*, snapshot: Snapshot) -> Path:
    return snapshots_root() / snapshot.label


def get_snapshot(*, ref: str, ready_only: bool = True) -> Snapshot:
    """``latest`` (newest ready), ``vN`` or ``N``; raises :class:`UnknownSnapshot` naming what is known."""
    qs = Snapshot.objects.filter(status=SnapshotStatus.READY) if ready_only else Snapshot.objects.all()
    ref = ref.strip()
    if ref == "latest":
        snap = qs.order_by("-version").first()
        if snap is None:
            raise UnknownSnapshot("there is no ready snapshot yet (make one with `manage.py make_snapshot`)")
        return snap
    match = _LABEL.match(ref)
    if not match:
        raise UnknownSnapshot(f"snapshot {ref!r}: expected 'latest', 'vN' or N")
    snap = qs.filter(version=int(match.group(1))).first()
    if snap is None:
        known = ", ".join(qs.order_by("version").values_list("label", flat=True)) or "none"
        raise UnknownSnapshot(f"snapshot {ref!r} does not exist or is not ready (ready: {known})")
    return snap


def items_in_order(*, snapshot: Snapshot) -> QuerySet[SnapshotItem]:
    """Frozen sessions in byte order of ``record_id`` (the PAB export's order on every database)."""
    key = Collate(F("record_id"), "C") if connection.vendor == "postgresql" else F("record_id")
    return SnapshotItem.objects.filter(snapshot=snapshot).order_by(key)


def iter_items(*, snapshot: Snapshot) -> Iterator[SnapshotItem]:
    """Streams the frozen sessions (chunked server-side iterator: memory stays bounded)."""
    fields = ("record_id", "scenario", "tier", "source", "n_turns", "record_json", "flat_json", "review", "sha256")
    return items_in_order(snapshot=snapshot).only(*fields).iterator(chunk_size=ITEM_CHUNK)


@dataclass(slots=True)
class ExportItem:
    """What the exporters read of a frozen session; the two JSON texts as UTF-8 bytes when they come
    straight from PostgreSQL (no decode to ``str`` and encode back for 100 KB lines)."""

    record_id: str
    scenario: str
    source: str
    record_json: bytes | str
    flat_json: bytes | str
    review: dict[str, Any]


class _TextAsBytes(Loader):
    def load(self, data: Any) -> bytes:
        return bytes(data)


def iter_export_items(*, snapshot: Snapshot) -> Iterator[ExportItem]:
    """The frozen sessions in export order, for the exporters: a server-side cursor fetching
    :data:`ITEM_CHUNK` rows at a time (bounded memory), ``text`` columns loaded as bytes on PostgreSQL."""
    fields = ("record_id", "scenario", "source", "record_json", "flat_json", "review")
    qs = items_in_order(snapshot=snapshot).values_list(*fields)
    if connection.vendor != "postgresql":
        for row in qs.iterator(chunk_size=ITEM_CHUNK):
            yield ExportItem(*row)
        return
    sql, params = qs.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.cursor.adapters.register_loader("text", _TextAsBytes)  # record_json, flat_json (TextField)
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(ITEM_CHUNK):
            for record_id, scenario, source, record_json, flat_json, review in rows:
                if isinstance(review, str | bytes):  # Django loads jsonb as text and parses it in the field
                    review = json.loads(review)
                yield ExportItem(record_id, scenario, source, record_json, flat_json, review)


def file_names(*, snapshot: Snapshot) -> list[str]:
    return [f["name"] for f in (snapshot.manifest or {}).get("files", [])]


def snapshot_file_path(*, snapshot: Snapshot, name: str) -> Path:
    """The path of one file of a ready snapshot; only names of its manifest (and the card, manifest and
    checksum list) are accepted, so a request can never reach outside the snapshot folder."""
    if snapshot.status != SnapshotStatus.READY:
        raise SnapshotError(f"snapshot {snapshot.label} is {snapshot.status}, not ready")
    if name not in file_names(snapshot=snapshot) and name not in SIDE_FILES:
        raise SnapshotError(f"snapshot {snapshot.label} has no file {name!r}")
    path = snapshot_dir(snapshot=snapshot) / name
    if not path.is_file():
        raise SnapshotError(f"file {name!r} of snapshot {snapshot.label} is missing on disk ({path})")
    return path
