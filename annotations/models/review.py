"""Physician review: assignments, leases, blind reviews, revisions, comments and adjudications.

The turn's *content* (what review may change) is a JSON snapshot described in
:mod:`annotations.content`. Reviews keep their proposed snapshot apart from the turn until
adjudication; only :mod:`annotations.services` writes to ``scenarios.Turn``.

Turn status is a plain string on ``scenarios.Turn.status``; this app moves it through
``draft → in_review → needs_adjudication → approved | rejected`` (see :class:`TurnState`).
"""

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from scenarios.models import Session, Turn


class TurnState:
    """Turn status values managed by this app (plain strings, no choices on ``scenarios.Turn``)."""

    DRAFT = "draft"
    IN_REVIEW = "in_review"
    NEEDS_ADJUDICATION = "needs_adjudication"
    APPROVED = "approved"
    REJECTED = "rejected"
    # An approved turn edited since: back to approved only when someone other than the editor confirms
    # (or reverts) the edit (annotations.services.confirmation).
    NEEDS_CONFIRMATION = "needs_confirmation"
    ALL = (DRAFT, IN_REVIEW, NEEDS_ADJUDICATION, APPROVED, REJECTED, NEEDS_CONFIRMATION)
    # What the screens call each status (translated to the UI language when shown).
    LABELS = {
        DRAFT: _("Draft"),
        IN_REVIEW: _("In review"),
        NEEDS_ADJUDICATION: _("Needs adjudication"),
        APPROVED: _("Approved"),
        REJECTED: _("Rejected"),
        NEEDS_CONFIRMATION: _("Needs confirmation"),
    }


def status_label(value: str) -> str:
    """A turn status as the screens call it, in the active UI language; unknown codes as they are."""
    return str(TurnState.LABELS.get(value, value))


# Labels are translated for the UI only; the stored values never change with the language.
class Decision(models.TextChoices):
    APPROVE = "approve", _("Approve")
    REJECT = "reject", _("Reject")
    PENDING = "pending", _("Pending")


class RejectReason(models.TextChoices):
    FALSE_PREMISE = "false_premise", _("false premise")
    UNSAFE = "unsafe", _("unsafe")
    NOT_GROUNDED = "not_grounded", _("not grounded in the record")
    WRONG_TOOL_ARGUMENTS = "wrong_tool_arguments", _("wrong tool/arguments")
    TRANSLATION_ERROR = "translation_error", _("translation error")
    UNNATURAL_WORDING = "unnatural_wording", _("unnatural wording")
    OTHER = "other", _("other")


class RevisionKind(models.TextChoices):
    REVIEW_EDIT = "review_edit", _("Review Edit")
    ADJUDICATION = "adjudication", _("Adjudication")
    MERGE = "merge", _("Merge")
    SYSTEM = "system", _("System")
    # A save made against a stale version: kept (not applied) so that it can be merged later.
    CONFLICT = "conflict", _("Conflict")
    # An unconfirmed edit of an approved turn undone: the content goes back to the approved version's.
    REVERT = "revert", _("Revert")


class Chosen(models.TextChoices):
    REVIEW_A = "a", _("review A")
    REVIEW_B = "b", _("review B")
    MERGED = "merged", _("merged")
    EDITED = "edited", _("edited")


def choice_in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Assignment(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "created", "pk"]
        constraints = [models.UniqueConstraint(fields=["session", "reviewer"], name="assignment_session_reviewer")]

    def __str__(self) -> str:
        return f"{self.session_id} → {self.reviewer_id}"


class Review(models.Model):
    """One reviewer's blind judgement of one turn: decision, reason and proposed content snapshot."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews")
    decision = models.CharField(max_length=8, choices=Decision.choices, default=Decision.PENDING)
    reject_reason = models.CharField(max_length=24, choices=RejectReason.choices, blank=True)
    reason = models.TextField(blank=True)
    # The turn content the reviewer started from and the content they propose (annotations.content shape).
    base_content = models.JSONField(default=dict, blank=True)
    proposed = models.JSONField(default=dict, blank=True)
    base_version = models.PositiveIntegerField()
    gate_warnings = models.JSONField(default=list, blank=True)
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    is_demo = models.BooleanField(default=False, help_text="made by `manage.py demo`, not by a physician")

    class Meta:
        ordering = ["turn", "submitted_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "reviewer"], name="review_turn_reviewer"),
            models.CheckConstraint(condition=choice_in("decision", Decision), name="review_decision_valid"),
            models.CheckConstraint(
                condition=Q(reject_reason="") | choice_in("reject_reason", RejectReason),
                name="review_reject_reason_valid",
            ),
            models.CheckConstraint(
                condition=~Q(decision="reject") | ~Q(reject_reason=""), name="review_reject_needs_reason"
            ),
        ]

    def __str__(self) -> str:
        return f"review of {self.turn_id} by {self.reviewer_id}: {self.decision}"

    @property
    def submitted(self) -> bool:
        return self.submitted_at is not None

    @property
    def has_edits(self) -> bool:
        return bool(self.proposed) and self.proposed != self.base_content


class Revision(models.Model):
    """One field of a turn's content changed (or, kind ``conflict``, a change that could not be applied)."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="revisions")
    field = models.CharField(max_length=100, help_text="flattened content key, e.g. answer_zh or rubric.2.text_en")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created = models.DateTimeField(default=timezone.now)
    reason = models.TextField(blank=True)
    kind = models.CharField(max_length=16, choices=RevisionKind.choices)
    base_version = models.PositiveIntegerField(null=True, blank=True, help_text="version the author started from")
    version = models.PositiveIntegerField(null=True, blank=True, help_text="turn version this change produced")
    resolved_at = models.DateTimeField(null=True, blank=True, help_text="conflicts: when merged or dismissed")

    class Meta:
        ordering = ["turn", "created", "pk"]
        indexes = [models.Index(fields=["turn", "field"], name="revision_turn_field")]
        constraints = [models.CheckConstraint(condition=choice_in("kind", RevisionKind), name="revision_kind_valid")]

    def __str__(self) -> str:
        return f"{self.turn_id}.{self.field} ({self.kind})"


class ApprovalVia(models.TextChoices):
    REVIEWS = "reviews", _("reviews")
    ADJUDICATION = "adjudication", _("adjudication")
    CONFIRMATION = "confirmation", _("confirmation")
    REVERT = "revert", _("revert")
    MIGRATION = "migration", _("approved before versions were tracked")


class TurnApproval(models.Model):
    """Who approved which version of a turn. A turn is curated only while its current ``version`` has an
    approval (annotations.snapshots.freeze); ``content`` is what was approved (what a revert restores)."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="approvals")
    version = models.PositiveIntegerField()
    via = models.CharField(max_length=16, choices=ApprovalVia.choices)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Usernames that approved this version (both reviewers, the adjudicator, the confirmer), sorted.
    approvers = models.JSONField(default=list, blank=True)
    content = models.JSONField(default=dict, blank=True, help_text="annotations.content snapshot approved")
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["turn", "version"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "version"], name="approval_turn_version"),
            models.CheckConstraint(condition=choice_in("via", ApprovalVia), name="approval_via_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.turn_id} v{self.version} approved ({self.via}) by {', '.join(self.approvers) or '?'}"


class Lease(models.Model):
    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="lease")
    holder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leases")
    acquired_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"lease {self.turn_id} by {self.holder_id} until {self.expires_at:%H:%M:%S}"

    def live(self, *, now: dt.datetime | None = None) -> bool:
        return self.expires_at > (now or timezone.now())


class Comment(models.Model):
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["turn", "created", "pk"]

    def __str__(self) -> str:
        return f"comment on {self.turn_id} by {self.author_id}"


class Adjudication(models.Model):
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="adjudications")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    chosen = models.CharField(max_length=8, choices=Chosen.choices)
    review_a = models.ForeignKey(Review, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    review_b = models.ForeignKey(Review, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reject_reason = models.CharField(max_length=24, choices=RejectReason.choices, blank=True)
    reason = models.TextField(blank=True)
    content = models.JSONField(default=dict, blank=True, help_text="the final content snapshot")
    version = models.PositiveIntegerField(help_text="turn version after adjudication")
    created = models.DateTimeField(default=timezone.now)
    is_demo = models.BooleanField(default=False, help_text="made by `manage.py demo`, not by a physician")

    class Meta:
        ordering = ["turn", "created", "pk"]
        constraints = [
            models.CheckConstraint(condition=choice_in("chosen", Chosen), name="adjudication_chosen_valid"),
            models.CheckConstraint(condition=Q(decision__in=["approve", "reject"]), name="adjudication_decision"),
        ]

    def __str__(self) -> str:
        return f"adjudication of {self.turn_id}: {self.chosen} → {self.decision}"


class Guideline(models.Model):
    """Review guidelines shown beside every turn; markdown, edited by admins in the Django admin.

    One row per UI language (``en``, ``zh-hans``); the reviewer sees the row for their UI language,
    falling back to English.
    """

    language = models.CharField(max_length=10, unique=True, default="en")
    title = models.CharField(max_length=200, default="Review guidelines")
    body_markdown = models.TextField(blank=True)
    updated = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["language"]

    def __str__(self) -> str:
        return f"{self.title} ({self.language})"


# --- curated snapshots (annotations/snapshots/) -------------------------------------------------------
