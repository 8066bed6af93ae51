"""Evaluation runs as records: a manifest per run and the full trace of every evaluated turn.

A ``TurnResult`` is written once, when its turn is finished (trace, judge verdicts, score); a
resumed run skips the keys it already has, so no model call is repeated for a finished turn.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class EvalStatus(models.TextChoices):
    RUNNING = "running"
    FINISHED = "finished"  # every expected turn is stored and none ended with an infrastructure error
    PARTIAL = "partial"  # the play ended, but turns are pending (unplayed, or an infrastructure error)
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class EvalRun(models.Model):
    """``manifest``: model, endpoint host (never a key), parameters, dataset (snapshot id/checksum),
    tool-schema hash, judge and its prompt hash, code version. ``summary`` is ``summary.json``."""

    model = models.CharField(max_length=200)
    judge = models.CharField(max_length=200, default="rules")
    manifest = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=EvalStatus.choices, default=EvalStatus.RUNNING)
    rejudge_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    summary = models.JSONField(default=dict, blank=True)
    output_dir = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Turns the run's jobs have in all (sessions x languages x variants x trials x turns); set when played.
    expected_turns = models.PositiveIntegerField(null=True, blank=True)
    # Seconds spent playing, summed over the first play and every resume (not the gaps between them).
    active_s = models.FloatField(default=0.0)
    # Who is playing the run ("host:pid:token") and until when the claim holds without a heartbeat:
    # a second ``runeval --resume`` of a run being played is refused (see services.RunLease).
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    # Was the run's judge (name + prompt hash) certified when the run was created? None: the run predates
    # certification. The manifest's "judge_certification" holds the record it was decided on.
    judge_certified = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        verbose_name = _("evaluation run")
        verbose_name_plural = _("evaluation runs")
        constraints = [
            models.CheckConstraint(condition=Q(status__in=EvalStatus.values), name="evalrun_status_valid"),
        ]

    def __str__(self) -> str:
        return f"eval run {self.pk} ({self.model}, {self.status})"


class TurnResult(models.Model):
    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="turn_results")
    session_id = models.CharField(max_length=200)
    turn_index = models.PositiveSmallIntegerField()
    language = models.CharField(max_length=2)
    variant = models.CharField(max_length=8)
    trial = models.PositiveSmallIntegerField(default=0)
    # Copied from the dataset so metrics and slices need nothing else.
    scenario = models.CharField(max_length=32)
    tier = models.PositiveSmallIntegerField()
    task_type = models.CharField(max_length=2)
    subtype = models.CharField(max_length=2, null=True, blank=True)
    tool_source = models.CharField(max_length=8)
    # Items passed / judged; unscored items (no machine form for the rules judge) are counted apart.
    passed = models.PositiveSmallIntegerField(default=0)
    scored = models.PositiveSmallIntegerField(default=0)
    unscored = models.PositiveSmallIntegerField(default=0)
    score = models.FloatField(null=True, blank=True, help_text="passed/scored; NULL when nothing was scored")
    # Model failure vs infrastructure failure (endpoint down, retries exhausted): the latter is kept apart.
    infra_error = models.CharField(max_length=200, blank=True)
    trace = models.JSONField(default=dict)
    verdicts = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run", "session_id", "language", "variant", "trial", "turn_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "session_id", "turn_index", "language", "variant", "trial"], name="turnresult_unique"
            ),
            models.CheckConstraint(condition=Q(language__in=("en", "zh")), name="turnresult_language_valid"),
            models.CheckConstraint(condition=Q(variant__in=("implicit", "explicit")), name="turnresult_variant_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.session_id}/{self.turn_index} {self.language} {self.variant} #{self.trial}"


class CalibrationSample(models.Model):
    """Rubric items of stored answers drawn for physicians to grade (``calibration.services.draw_sample``).

    ``params`` (runs, per-stratum count, seed) identify the draw: drawing again with the same name and
    parameters returns this sample unchanged."""

    name = models.CharField(max_length=100, unique=True)
    params = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"calibration sample {self.name}"


class CalibrationItem(models.Model):
    """One rubric item (``item`` = its idx) of one stored answer, in grading order (``position``)."""

    sample = models.ForeignKey(CalibrationSample, on_delete=models.CASCADE, related_name="items")
    turn_result = models.ForeignKey(TurnResult, on_delete=models.CASCADE, related_name="calibration_items")
    item = models.PositiveSmallIntegerField()
    # "<task type>/<language>/<judge verdict>" the item was drawn from.
    stratum = models.CharField(max_length=64)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["sample", "position"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "turn_result", "item"], name="calibrationitem_unique"),
        ]


class GradeLabel(models.TextChoices):
    PASS = "pass", _("Pass")
    FAIL = "fail", _("Fail")
    UNSURE = "unsure", _("Can't tell")


class PhysicianGrade(models.Model):
    """A physician's own verdict on one rubric item of one stored answer (one per grader and item)."""

    turn_result = models.ForeignKey(TurnResult, on_delete=models.CASCADE, related_name="physician_grades")
    item = models.PositiveSmallIntegerField()
    grader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="physician_grades")
    label = models.CharField(max_length=8, choices=GradeLabel.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["turn_result", "item", "grader"]
        constraints = [
            models.UniqueConstraint(fields=["turn_result", "item", "grader"], name="physiciangrade_unique"),
            models.CheckConstraint(condition=Q(label__in=GradeLabel.values), name="physiciangrade_label_valid"),
        ]

    @property
    def passed(self) -> bool | None:
        """True/False for pass/fail; None for "can't tell" (left out of agreement)."""
        return {GradeLabel.PASS: True, GradeLabel.FAIL: False}.get(self.label)


class JudgeCertification(models.Model):
    """One computation of a judge's TPR/TNR against physician grades (``calibration.certification``).

    Physician grade is the truth, "met" (pass) is positive. ``certified``: the exact 95% lower bounds of
    TPR and TNR both reach ``threshold``. ``pairs`` keeps the ``[cluster, judge passed, physician passed]``
    rows it was computed from (bootstrap of the corrected pass rates); ``data_hash`` identifies them.
    The newest row per (judge, prompt_hash) is the judge's current certification."""

    judge = models.CharField(max_length=200)
    prompt_hash = models.CharField(max_length=128, blank=True)
    threshold = models.FloatField()
    certified = models.BooleanField()
    n = models.PositiveIntegerField()
    n_positive = models.PositiveIntegerField()
    n_negative = models.PositiveIntegerField()
    tpr = models.FloatField(null=True)
    tpr_low = models.FloatField(null=True)
    tpr_high = models.FloatField(null=True)
    tnr = models.FloatField(null=True)
    tnr_low = models.FloatField(null=True)
    tnr_high = models.FloatField(null=True)
    kappa = models.FloatField(null=True)
    physician_kappa = models.FloatField(null=True)
    data_count = models.PositiveIntegerField()
    data_hash = models.CharField(max_length=64)
    pairs = models.JSONField(default=list, blank=True)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["judge", "prompt_hash", "-computed_at", "-pk"]
        verbose_name = _("judge certification")
        verbose_name_plural = _("judge certifications")
        indexes = [models.Index(fields=["judge", "prompt_hash", "-computed_at"], name="judgecert_identity")]

    def __str__(self) -> str:
        return f"{self.judge} {self.prompt_hash[:12]} {'certified' if self.certified else 'not certified'}"


class FaultKind(models.TextChoices):
    """Whose fault a turn's outcome is, as a physician attributes it on the drill-down (tau2-bench's user-simulator
    errors and unpassable tasks are the cases a pass rate alone hides)."""

    MODEL = "model", _("Model fault")
    SIMULATOR = "simulator", _("Patient-simulator fault")
    TASK = "task", _("Task fault")


class TaskPart(models.TextChoices):
    """What is wrong with a task (a task fault's part)."""

    REQUEST = "request", _("Request wrong or ambiguous")
    GOLD_ANSWER = "gold_answer", _("Gold answer wrong")
    GOLD_CALL = "gold_call", _("Gold call wrong")
    RUBRIC_ITEM = "rubric_item", _("Rubric item wrong")


class FaultAttribution(models.Model):
    """One physician's attribution of one turn result (blind: each sees only their own). A task fault reopens the
    curated turn for review (evaluation.faults)."""

    turn_result = models.ForeignKey(TurnResult, on_delete=models.CASCADE, related_name="fault_attributions")
    physician = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12, choices=FaultKind.choices)
    task_part = models.CharField(max_length=16, choices=TaskPart.choices, blank=True)
    note = models.TextField(blank=True)
    reopened = models.BooleanField(default=False, help_text="the task fault sent the curated turn back to review")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["turn_result", "physician"]
        constraints = [
            models.UniqueConstraint(fields=["turn_result", "physician"], name="faultattribution_unique"),
            models.CheckConstraint(condition=Q(kind__in=FaultKind.values), name="faultattribution_kind_valid"),
            models.CheckConstraint(
                condition=Q(kind="task", task_part__in=TaskPart.values) | (~Q(kind="task") & Q(task_part="")),
                name="faultattribution_task_part",
            ),
        ]
