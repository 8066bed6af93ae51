"""The curated set's immutable snapshots and their frozen items (built by :mod:`annotations.snapshots`)."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotations.models.review import choice_in


class SnapshotStatus(models.TextChoices):
    BUILDING = "building"
    READY = "ready"
    FAILED = "failed"


class ImmutableSnapshot(Exception):
    """A ready snapshot (or one of its frozen items) was about to be changed or deleted."""


class SnapshotQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if self.filter(status=SnapshotStatus.READY).exists():
            raise ImmutableSnapshot("ready snapshots cannot be changed")
        return super().update(**kwargs)

    def delete(self):
        if self.filter(status=SnapshotStatus.READY).exists():
            raise ImmutableSnapshot("ready snapshots cannot be deleted")
        return super().delete()


class Snapshot(models.Model):
    """One immutable, versioned freeze of the curated set (see :mod:`annotations.snapshots.services`).

    Written while ``building`` (content frozen into :class:`SnapshotItem` rows, files, manifest, card);
    once ``ready`` neither the row nor its items may change or be deleted.
    """

    version = models.PositiveIntegerField(unique=True)
    label = models.CharField(max_length=16, unique=True, help_text="vN")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(default=timezone.now)
    finished = models.DateTimeField(null=True, blank=True)
    # {"scenarios": [...], "tiers": [...], "languages": [...], "ehr_provenance": ...}
    filters = models.JSONField(default=dict, blank=True)
    # Turn counts per status and the latest review/revision/adjudication ids at freeze time.
    review_state = models.JSONField(default=dict, blank=True)
    # {"counts": {...}, "files": [{"name", "format", "bytes", "sha256", "rows"}]}
    manifest = models.JSONField(default=dict, blank=True)
    card_markdown = models.TextField(blank=True)
    content_sha256 = models.CharField(max_length=64, blank=True, help_text="over the data files' checksums")
    status = models.CharField(max_length=16, choices=SnapshotStatus.choices, default=SnapshotStatus.BUILDING)
    error = models.TextField(blank=True)
    progress_stage = models.CharField(max_length=32, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # Who builds it now (core.jobs token, empty when nobody) and their latest heartbeat; automatic resumes
    # of a stale build so far (reset by a person's resume).
    worker = models.CharField(max_length=120, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    resumes = models.PositiveIntegerField(default=0)

    objects = SnapshotQuerySet.as_manager()

    class Meta:
        ordering = ["-version"]
        constraints = [
            models.CheckConstraint(condition=choice_in("status", SnapshotStatus), name="snapshot_status_valid"),
            models.CheckConstraint(condition=Q(version__gte=1), name="snapshot_version_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.label} ({self.status})"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None and Snapshot.objects.filter(pk=self.pk, status=SnapshotStatus.READY).exists():
            raise ImmutableSnapshot(f"snapshot {self.label} is ready and cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self.status == SnapshotStatus.READY or Snapshot.objects.filter(pk=self.pk, status="ready").exists():
            raise ImmutableSnapshot(f"snapshot {self.label} is ready and cannot be deleted")
        return super().delete(*args, **kwargs)


class SnapshotItemQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if self.filter(snapshot__status=SnapshotStatus.READY).exists():
            raise ImmutableSnapshot("items of a ready snapshot cannot be changed")
        return super().update(**kwargs)

    def delete(self):
        if self.filter(snapshot__status=SnapshotStatus.READY).exists():
            raise ImmutableSnapshot("items of a ready snapshot cannot be deleted")
        return super().delete()


class SnapshotItem(models.Model):
    """The frozen content of one session: its PhysAssistBench line, exactly as exported.

    ``record_json`` is the text :func:`scenarios.pab.dumps_record` wrote at freeze time (a text column,
    not jsonb, so the bytes survive); ``flat_json`` is its projection on what the flat rows read
    (:class:`annotations.snapshots.rows.FlatSource`: no FHIR observations, tool schemas or plans), so an
    export does not parse the whole record again; ``review`` keeps the per-turn review facts (version,
    reviewers, adjudicator). No foreign key to the session:
    deleting or editing it later leaves the snapshot as it was.
    """

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="items")
    record_id = models.CharField(max_length=200)
    session_pk = models.BigIntegerField(help_text="scenarios.Session id at freeze time (no FK on purpose)")
    scenario = models.CharField(max_length=32)
    tier = models.PositiveSmallIntegerField()
    source = models.CharField(max_length=16)
    n_turns = models.PositiveSmallIntegerField()
    record_json = models.TextField()
    flat_json = models.TextField(help_text="the flat rows' part of record_json (derived at freeze time)")
    # {"turns": [{"index", "turn_pk", "version", "reviewers": [...], "adjudicator": str|None}], "generation": {...}}
    review = models.JSONField(default=dict, blank=True)
    sha256 = models.CharField(max_length=64)

    objects = SnapshotItemQuerySet.as_manager()

    class Meta:
        ordering = ["snapshot", "record_id"]
        constraints = [models.UniqueConstraint(fields=["snapshot", "record_id"], name="snapshotitem_unique")]

    def __str__(self) -> str:
        return f"{self.snapshot_id}:{self.record_id}"

    def save(self, *args, **kwargs) -> None:
        if Snapshot.objects.filter(pk=self.snapshot_id, status=SnapshotStatus.READY).exists():
            raise ImmutableSnapshot("items of a ready snapshot cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if Snapshot.objects.filter(pk=self.snapshot_id, status=SnapshotStatus.READY).exists():
            raise ImmutableSnapshot("items of a ready snapshot cannot be deleted")
        return super().delete(*args, **kwargs)
