"""Making and exporting snapshots.

``create_snapshot`` = ``start_snapshot`` (check the selection, take the next version under a lock,
create the row) + ``build_snapshot`` (freeze the content, write the files, manifest and card, mark it
ready). The admin and the API start a snapshot and let the Celery task build it
(``annotations.snapshots.background``; progress on the row); the command builds in-process. All three
run this code, so the same state gives the same files and checksums.

Files go to ``VAR_DIR/snapshots/vN/`` (written in a temporary sibling folder, renamed when complete).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotations.models import Snapshot, SnapshotItem, SnapshotStatus
from annotations.snapshots import card, croissant, duplicates, freeze, integrity, manifest
from annotations.snapshots.errors import BuildInProgress, EmptySelection, SnapshotError
from annotations.snapshots.exporters import FORMATS, parse_formats, write_files
from annotations.snapshots.selectors import iter_export_items, iter_items, snapshot_dir, snapshots_root
from core import jobs

_LOCK_KEY = 0x5AA95  # pg_advisory_xact_lock key: one version allocation at a time
Progress = Callable[[str, int, int], None]


def _next_version() -> int:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
    return (Snapshot.objects.aggregate(m=Max("version"))["m"] or 0) + 1


def start_snapshot(
    *,
    user: Any,
    scenarios: Iterable[str] | None = None,
    tiers: Iterable[int] | None = None,
    languages: Iterable[str] | None = None,
    ehr_provenance: str = "undeclared",
    force: bool = False,
) -> Snapshot:
    """Check the filters, that something is selected, that no selected turn contradicts itself and
    (unless ``force``) that the content differs from the latest snapshot's (:class:`DuplicateSnapshot`),
    then create the ``building`` row with the next version. Takes a transaction-scoped advisory lock on
    PostgreSQL while allocating the version, so concurrent calls get distinct versions (elsewhere a
    unique-version clash is retried)."""
    filters = freeze.normalize_filters(scenarios=scenarios, tiers=tiers, languages=languages)
    if ehr_provenance not in card.PROVENANCE:
        raise SnapshotError(f"unknown EHR provenance {ehr_provenance!r} (use {', '.join(card.PROVENANCE)})")
    if not freeze.curated_sessions(filters=filters).exists():
        raise EmptySelection(f"no session has all its turns approved for these filters ({_describe(filters)})")
    integrity.refuse_inconsistent(session_ids=freeze.curated_sessions(filters=filters).values_list("pk", flat=True))
    if not force:
        duplicates.refuse_duplicate(filters={**filters, "ehr_provenance": ehr_provenance}, tmp_root=snapshots_root())
    filters["ehr_provenance"] = ehr_provenance
    for attempt in range(5):
        try:
            with transaction.atomic():
                version = _next_version()
                return Snapshot.objects.create(
                    version=version,
                    label=f"v{version}",
                    created_by=user if getattr(user, "pk", None) else None,
                    filters=filters,
                    progress_stage="queued",
                )
        except IntegrityError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def _describe(filters: dict[str, Any]) -> str:
    return "; ".join(f"{k}: {', '.join(map(str, v)) or 'all'}" for k, v in filters.items() if isinstance(v, list))


def _set_progress(snapshot: Snapshot, stage: str, done: int, total: int) -> None:
    Snapshot.objects.filter(pk=snapshot.pk).update(progress_stage=stage, progress_done=done, progress_total=total)


def build_snapshot(*, snapshot_id: int, progress: Progress | None = None) -> Snapshot:
    """Freeze (if not frozen yet), write the files, manifest and card, and mark the snapshot ready.

    The build first takes the snapshot's lease (:func:`core.jobs.claim`): a ``building`` row nobody holds, or
    whose holder's heartbeat is stale, or a ``failed`` one. A live holder → :class:`BuildInProgress`; nothing
    is written. While building, a heartbeat thread keeps the lease; if another process took it over (this one
    was thought dead) the build stops at its next step without writing (:class:`core.jobs.LeaseLost`).
    Any other failure marks it ``failed`` with the error and re-raises; a ready one is returned as it is.
    Interrupted or failed builds are resumed by the sweeps, ``make_snapshot --resume vN``, the admin or the API:
    frozen items are reused, and the temporary folder of a killed attempt is removed.
    """
    snapshot = Snapshot.objects.get(pk=snapshot_id)
    if snapshot.status == SnapshotStatus.READY:
        return snapshot
    owner = jobs.owner_token("snapshot")
    row = Snapshot.objects.filter(pk=snapshot.pk, status__in=[SnapshotStatus.BUILDING, SnapshotStatus.FAILED])
    if not jobs.claim(queryset=row, owner=owner, status=SnapshotStatus.BUILDING, error=""):
        snapshot.refresh_from_db()
        if snapshot.status == SnapshotStatus.READY:
            return snapshot
        beat = f"{snapshot.heartbeat_at:%H:%M:%S}" if snapshot.heartbeat_at else "none yet"
        raise BuildInProgress(f"snapshot {snapshot.label} is being built by {snapshot.worker} (heartbeat {beat})")
    snapshot.refresh_from_db()
    try:
        with jobs.Heartbeat(queryset=Snapshot.objects.filter(pk=snapshot.pk, worker=owner)):
            return _build(snapshot=snapshot, progress=progress, owner=owner)
    except jobs.LeaseLost:
        raise
    except Exception as exc:
        Snapshot.objects.filter(pk=snapshot.pk, worker=owner).update(
            status=SnapshotStatus.FAILED, error=f"{type(exc).__name__}: {exc}", progress_stage="failed", worker=""
        )
        raise


def resume_snapshot(*, snapshot: Snapshot) -> Snapshot:
    """A person's resume (admin, API): a failed build, or a ``building`` one whose heartbeat is stale, is
    queued again with its automatic-resume count reset. Raises :class:`SnapshotError` for a ready snapshot
    and :class:`BuildInProgress` for a live build. The caller dispatches the build task."""
    if snapshot.status == SnapshotStatus.READY:
        raise SnapshotError(f"snapshot {snapshot.label} is already ready")
    stale = Q(status=SnapshotStatus.FAILED) | Q(worker="") | Q(heartbeat_at__isnull=True)
    stale |= Q(heartbeat_at__lt=jobs.stale_cutoff())
    updated = Snapshot.objects.filter(stale, pk=snapshot.pk).exclude(status=SnapshotStatus.READY)
    if not updated.update(status=SnapshotStatus.BUILDING, worker="", heartbeat_at=None, resumes=0, error=""):
        raise BuildInProgress(f"snapshot {snapshot.label} is being built by {snapshot.worker}")
    Snapshot.objects.filter(pk=snapshot.pk).update(progress_stage="queued")
    snapshot.refresh_from_db()
    return snapshot


def _remove_stale_temp(snapshot: Snapshot) -> None:
    """Temporary folders of an earlier attempt at this version killed before its rename (we hold the lease)."""
    for stale in snapshots_root().glob(f".{snapshot.label}.*"):
        shutil.rmtree(stale, ignore_errors=True)


def _build(*, snapshot: Snapshot, progress: Progress | None, owner: str) -> Snapshot:
    mine = Snapshot.objects.filter(pk=snapshot.pk, worker=owner)

    def report(stage: str, done: int, total: int) -> None:
        if not jobs.holds(queryset=mine, owner=owner):
            raise jobs.LeaseLost(f"snapshot {snapshot.label} was taken over by another process")
        _set_progress(snapshot, stage, done, total)
        if progress:
            progress(stage, done, total)

    filters = snapshot.filters
    if not SnapshotItem.objects.filter(snapshot=snapshot).exists():
        total = freeze.curated_sessions(filters=filters).count()
        done = 0

        def frozen(n: int) -> None:
            nonlocal done
            done += n
            report("freezing", done, total)

        report("freezing", 0, total)
        with transaction.atomic():
            state = freeze.review_state(filters=filters)
            count = freeze.freeze_items(snapshot=snapshot, filters=filters, on_chunk=frozen)
            if count == 0:
                raise EmptySelection("no session has all its turns approved any more (changed since the start)")
            Snapshot.objects.filter(pk=snapshot.pk).update(review_state=state)
        snapshot.refresh_from_db()

    n = SnapshotItem.objects.filter(snapshot=snapshot).count()
    target = snapshot_dir(snapshot=snapshot)
    snapshots_root().mkdir(parents=True, exist_ok=True)
    _remove_stale_temp(snapshot)
    tmp = Path(tempfile.mkdtemp(prefix=f".{snapshot.label}.", dir=snapshots_root()))
    try:
        done = 0

        def written() -> None:
            nonlocal done
            done += 1
            if done % 50 == 0 or done == n:
                report("writing", done, n)

        report("writing", 0, n)
        files = export_snapshot(snapshot=snapshot, formats=list(FORMATS), out_dir=tmp, on_item=written)
        report("card", n, n)
        stats = card.collect(iter_items(snapshot=snapshot))
        snapshot.manifest = {
            "counts": {k: v for k, v in stats.items() if k != "turn_pks"},
            "files": files,
            **manifest.build_provenance(),
            "approvals": manifest.approvals(snapshot=snapshot),
        }
        snapshot.content_sha256 = content_sha256(files)
        snapshot.card_markdown = card.render(snapshot=snapshot, stats=stats)
        _write_side_files(folder=tmp, snapshot=snapshot)
        tmp.chmod(0o755)
        with transaction.atomic():
            # The lease is checked under a row lock so a takeover cannot slip between the check and "ready".
            if not Snapshot.objects.select_for_update().filter(pk=snapshot.pk, worker=owner).exists():
                raise jobs.LeaseLost(f"snapshot {snapshot.label} was taken over by another process")
            if target.exists():  # a stale folder of an earlier failed attempt at this version
                shutil.rmtree(target)
            tmp.rename(target)
            snapshot.status = SnapshotStatus.READY
            snapshot.finished = timezone.now()
            snapshot.progress_stage, snapshot.progress_done, snapshot.progress_total = "done", n, n
            snapshot.error, snapshot.worker = "", ""
            snapshot.save()
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return snapshot


def content_sha256(files: list[dict[str, Any]]) -> str:
    """One checksum for the data: sha256 of the ``SHA256SUMS`` text (``<sha256>  <name>`` lines by name)."""
    return hashlib.sha256(sha256sums(files).encode("utf-8")).hexdigest()


def sha256sums(files: list[dict[str, Any]]) -> str:
    return "".join(f"{f['sha256']}  {f['name']}\n" for f in sorted(files, key=lambda f: f["name"]))


def _write_side_files(*, folder: Path, snapshot: Snapshot) -> None:
    (folder / "card.md").write_text(snapshot.card_markdown, encoding="utf-8")
    manifest.write_manifest(folder=folder, snapshot=snapshot, files=snapshot.manifest["files"])
    (folder / "SHA256SUMS").write_text(sha256sums(snapshot.manifest["files"]), encoding="utf-8")
    croissant.write_croissant(folder=folder, snapshot=snapshot, files=snapshot.manifest["files"])
    for path in folder.iterdir():
        path.chmod(0o644)


def create_snapshot(
    *,
    user: Any,
    scenarios: Iterable[str] | None = None,
    tiers: Iterable[int] | None = None,
    languages: Iterable[str] | None = None,
    ehr_provenance: str = "undeclared",
    progress: Progress | None = None,
    force: bool = False,
) -> Snapshot:
    """Make a ready snapshot in-process (command, tests, API). Raises :class:`SnapshotError` on bad
    filters, an empty selection, an inconsistent record or (unless ``force``) a duplicate of the latest
    snapshot's content (nothing is created then)."""
    snapshot = start_snapshot(
        user=user,
        scenarios=scenarios,
        tiers=tiers,
        languages=languages,
        ehr_provenance=ehr_provenance,
        force=force,
    )
    return build_snapshot(snapshot_id=snapshot.pk, progress=progress)


def export_snapshot(
    *,
    snapshot: Snapshot,
    formats: Iterable[str] | str,
    out_dir: Path,
    on_item: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """Write the snapshot's files in ``formats`` to ``out_dir`` (an existing empty folder) from its
    frozen items; returns the file entries. Same snapshot, same bytes, whenever it runs."""
    formats = parse_formats(formats)
    languages = (snapshot.filters or {}).get("languages") or list(freeze.LANGUAGES)
    return write_files(
        items=iter_export_items(snapshot=snapshot),
        formats=formats,
        out_dir=Path(out_dir),
        languages=languages,
        on_item=on_item,
    )


def export_to(
    *, snapshot: Snapshot, formats: Iterable[str] | str, out: Path, on_item: Callable[[], None] | None = None
) -> list[dict[str, Any]]:
    """``export_set``: write the data files, ``manifest.json`` (of the exported files), ``card.md``,
    ``SHA256SUMS`` and ``croissant.json`` (:mod:`.croissant`) into a temporary sibling of ``out`` and rename
    it to ``out`` when complete, so a failure leaves nothing half-written. ``out`` must not exist or be an
    empty folder. The files are checked against the snapshot's manifest checksums (a mismatch is an error)."""
    formats = parse_formats(formats)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SnapshotError(f"{out}: already exists and is not an empty folder")
    if not out.parent.is_dir():
        raise SnapshotError(f"{out.parent}: no such directory")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        files = export_snapshot(snapshot=snapshot, formats=formats, out_dir=tmp, on_item=on_item)
        expected = {f["name"]: f["sha256"] for f in snapshot.manifest.get("files", [])}
        if bad := [f["name"] for f in files if expected.get(f["name"]) != f["sha256"]]:
            raise SnapshotError(f"re-exported {', '.join(bad)} differ from the manifest of {snapshot.label}")
        (tmp / "card.md").write_text(snapshot.card_markdown, encoding="utf-8")
        manifest.write_manifest(folder=tmp, snapshot=snapshot, files=files)
        (tmp / "SHA256SUMS").write_text(sha256sums(files), encoding="utf-8")
        croissant.write_croissant(folder=tmp, snapshot=snapshot, files=files)
        for path in tmp.iterdir():
            path.chmod(0o644)
        tmp.chmod(0o755)
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
    return files
