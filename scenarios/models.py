"""Benchmark sessions: generation runs, sessions, turns, gold tool steps and rubric items.

A session is one admission seen at a *current date*, with 4 turns (PhysAssistBench protocol, see
``DESIGN.md``). Text is stored per language and per form in plain columns so review can diff and edit
each one. JSON columns hold what is only ever read whole (tool schemas, plans, FHIR observations).

Status columns are plain strings: this app sets ``draft`` / ``rejected_by_gate``; the review app adds
its own states later without a migration here (so no ``choices`` and no check constraint on them).
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from scenarios.rubric_checks import validate_rubric_check


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Backend(models.TextChoices):
    RULES = "rules"
    OPENAI = "openai"
    IMPORT = "import"


class RunStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class Scenario(models.TextChoices):
    # The one place scenarios are named: review screens, dashboard, results, admin forms and the API all
    # read these labels (annotations.templatetags.review_i18n.SCENARIOS is built from them).
    DIAGNOSTIC_WORKUP = "diagnostic_workup", _("Diagnostic work-up")
    MED_SAFETY = "med_safety", _("Medication safety")
    TREATMENT_RESPONSE = "treatment_response", _("Treatment response")
    DISCHARGE_PLANNING = "discharge_planning", _("Discharge planning")


class Source(models.TextChoices):
    GENERATED = "generated"
    IMPORTED = "imported"


class TaskType(models.TextChoices):
    # value = code stored; label = PhysAssistBench's wording (used verbatim in its JSONL)
    IL = "IL", "Information Lookup"
    DG = "DG", "Data Gathering"
    CR = "CR", "Clinical Reasoning"
    WU = "WU", "Write/Update"


class Subtype(models.TextChoices):
    NA = "NA", "nominal anaphora"
    PE = "PE", "predicate ellipsis"
    AE = "AE", "abstract/event anaphora"


class ToolSource(models.TextChoices):
    EHR = "ehr"
    PATIENT = "patient"
    MIXED = "mixed"
    WRITE = "write"


class WorkupMode(models.TextChoices):
    PARALLEL = "parallel"
    ADAPTIVE = "adaptive"


class SessionStatus:
    """Values this app sets; later apps add review states (plain strings, see module docstring)."""

    DRAFT = "draft"
    REJECTED_BY_GATE = "rejected_by_gate"


class TurnStatus:
    DRAFT = "draft"


class GenerationRun(models.Model):
    """One generation (or import) job: its parameters, progress counts, cost and errors."""

    backend = models.CharField(max_length=16, choices=Backend.choices)
    seed = models.BigIntegerField(null=True, blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    requested = models.PositiveIntegerField(default=0)
    made = models.PositiveIntegerField(default=0)
    rejected_by_gate = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    # NULL = unknown (e.g. a model missing from the price table), which is not the same as free.
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    errors = models.JSONField(default=list, blank=True)
    # Why attempts were rejected, one {index, attempt, gate, turn, message} per gate failure of every
    # rejected attempt (also those before an attempt that passed); see scenarios.generation.reasons.
    rejections = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Refreshed by the generate command while it waits and by every slot task (core.jobs); automatic resumes
    # of a stale run so far; why a run was stopped (stale, failed) in words.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    resumes = models.PositiveIntegerField(default=0)
    stop_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=_in("backend", Backend), name="genrun_backend_valid"),
            models.CheckConstraint(condition=_in("status", RunStatus), name="genrun_status_valid"),
            models.CheckConstraint(condition=Q(cost_usd__isnull=True) | Q(cost_usd__gte=0), name="genrun_cost_nonneg"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.backend}, {self.status})"


class Session(models.Model):
    run = models.ForeignKey(GenerationRun, null=True, blank=True, on_delete=models.PROTECT, related_name="sessions")
    # Position within the run: with ``run`` the idempotency key of a generation task.
    run_index = models.PositiveIntegerField(null=True, blank=True)
    record_id = models.CharField(max_length=200, unique=True, help_text="PhysAssistBench `id`")
    session_id = models.CharField(max_length=200, unique=True, help_text="id the tools take as session_id")
    subject_id = models.IntegerField(db_index=True)
    hadm_id = models.IntegerField(db_index=True)
    current_date = models.DateField(help_text="EHR cutoff: data after this date is invisible")
    env_info = models.TextField(blank=True)
    scenario = models.CharField(max_length=32, choices=Scenario.choices)
    clinical_task_domain = models.CharField(max_length=100, blank=True)
    tier = models.PositiveSmallIntegerField()
    tool_set = models.CharField(max_length=32, default="fhir")
    sequence_idx = models.IntegerField(default=0)
    tools = models.JSONField(default=list, blank=True, help_text="tool schemas given to the assistant (English)")
    tools_zh = models.JSONField(null=True, blank=True)
    session_plan = models.JSONField(default=dict, blank=True)
    dep_graph = models.JSONField(default=dict, blank=True)
    persona = models.JSONField(default=dict, blank=True)
    patient_memory = models.JSONField(default=dict, blank=True)
    patient_agent_annotations = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=32, default=SessionStatus.DRAFT, db_index=True)
    gate_report = models.JSONField(default=dict, blank=True)
    generated_at = models.DateTimeField(default=timezone.now)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.GENERATED)
    # Unknown top-level PhysAssistBench fields, kept verbatim and exported back.
    extra = models.JSONField(default=dict, blank=True)
    # How an imported record differed from our canonical rendering (see scenarios/pab/verbatim.py).
    import_meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["record_id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "run_index"], name="session_run_index_unique"),
            models.CheckConstraint(
                condition=Q(run__isnull=True, run_index__isnull=True) | Q(run__isnull=False, run_index__isnull=False),
                name="session_run_index_with_run",
            ),
            models.CheckConstraint(condition=Q(tier__gte=1, tier__lte=3), name="session_tier_1_3"),
            models.CheckConstraint(condition=_in("scenario", Scenario), name="session_scenario_valid"),
            models.CheckConstraint(condition=_in("source", Source), name="session_source_valid"),
        ]
        indexes = [models.Index(fields=["scenario", "tier"], name="session_scenario_tier")]

    def __str__(self) -> str:
        return self.record_id


class Turn(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveSmallIntegerField()
    task_type = models.CharField(max_length=2, choices=TaskType.choices)
    is_implicit = models.BooleanField(default=False)
    subtype = models.CharField(max_length=2, choices=Subtype.choices, null=True, blank=True)
    tool_source = models.CharField(max_length=8, choices=ToolSource.choices)
    workup_mode = models.CharField(max_length=8, choices=WorkupMode.choices, null=True, blank=True)
    # The implicit form is what the assistant is given (PAB `tasks`); on an explicit turn it repeats the explicit form.
    request_explicit_en = models.TextField(blank=True)
    request_implicit_en = models.TextField(blank=True)
    request_explicit_zh = models.TextField(blank=True)
    request_implicit_zh = models.TextField(blank=True)
    answer_en = models.TextField(blank=True)
    answer_zh = models.TextField(blank=True)
    status = models.CharField(max_length=32, default=TurnStatus.DRAFT, db_index=True)
    version = models.PositiveIntegerField(default=1, help_text="bumped on every edit (optimistic locking)")
    # Formulas the gold answer relies on, e.g. {"name": "cockcroft_gault", "inputs": {...}, "result": ...}.
    derivations = models.JSONField(default=list, blank=True)
    gate_report = models.JSONField(default=dict, blank=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["session", "index"]
        constraints = [
            models.UniqueConstraint(fields=["session", "index"], name="turn_session_index_unique"),
            models.CheckConstraint(condition=_in("task_type", TaskType), name="turn_task_type_valid"),
            models.CheckConstraint(
                condition=Q(subtype__isnull=True) | _in("subtype", Subtype), name="turn_subtype_valid"
            ),
            models.CheckConstraint(condition=_in("tool_source", ToolSource), name="turn_tool_source_valid"),
            models.CheckConstraint(
                condition=Q(workup_mode__isnull=True) | _in("workup_mode", WorkupMode), name="turn_workup_mode_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}/{self.index} {self.task_type}"


class GoldStep(models.Model):
    """One gold tool call and what it returned; a turn's last step is ``prepare_to_answer``."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="steps")
    idx = models.PositiveSmallIntegerField()
    tool = models.CharField(max_length=64, help_text="canonical dotted name, e.g. Observation.search")
    arguments = models.JSONField(default=dict, blank=True)
    observation = models.JSONField(null=True, blank=True, help_text="FHIR resource/Bundle, text or error")
    dependency_list = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["turn", "idx"]
        constraints = [models.UniqueConstraint(fields=["turn", "idx"], name="goldstep_turn_idx_unique")]

    def __str__(self) -> str:
        return f"{self.turn}#{self.idx} {self.tool}"


class CompiledState(models.TextChoices):
    """The reviewer's decision on a compiled suggestion (``""``: the compiler has none for the item)."""

    NONE = "", "none"
    SUGGESTED = "suggested"
    ACCEPTED = "accepted"
    EDITED = "edited"
    REMOVED = "removed"


class RubricItem(models.Model):
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="rubric_items")
    idx = models.PositiveSmallIntegerField()
    text_en = models.TextField()
    text_zh = models.TextField(blank=True)
    is_safety = models.BooleanField(default=False)
    # True when is_safety was guessed from the wording on import rather than stated by its author.
    safety_inferred = models.BooleanField(default=False)
    # Machine-checkable form (`check` in the brief; that name is taken by Model.check()).
    machine_check = models.JSONField(null=True, blank=True, help_text="see scenarios.rubric_checks")
    # What the rubric compiler derived from the wording (scenarios.rubric_compiler): a suggestion the rules
    # judge uses while machine_check is empty and the reviewer has not removed it. compiled_version is
    # set whenever the compiler ran on the item, also when it derived nothing (compiled_note says why).
    compiled_check = models.JSONField(null=True, blank=True)
    compiled_rule = models.CharField(max_length=64, blank=True)
    compiled_version = models.CharField(max_length=32, blank=True)
    compiled_confidence = models.FloatField(null=True, blank=True)
    compiled_note = models.TextField(blank=True)
    compiled_state = models.CharField(max_length=16, choices=CompiledState.choices, blank=True, default="")

    class Meta:
        ordering = ["turn", "idx"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "idx"], name="rubric_turn_idx_unique"),
            models.CheckConstraint(condition=_in("compiled_state", CompiledState), name="rubric_compiled_state_valid"),
            # No decision without a suggestion; a removed suggestion may be kept for the record.
            models.CheckConstraint(
                condition=Q(compiled_state="", compiled_check__isnull=True)
                | Q(compiled_state="removed")
                | Q(compiled_state__in=("suggested", "accepted", "edited"), compiled_check__isnull=False),
                name="rubric_compiled_state_has_check",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.turn}#{self.idx}"

    def save(self, *args, **kwargs) -> None:
        # A later rules judge trusts these shapes, so no save path may skip the check.
        validate_rubric_check(self.machine_check)
        validate_rubric_check(self.compiled_check)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        for name in ("machine_check", "compiled_check"):
            try:
                validate_rubric_check(getattr(self, name))
            except ValueError as exc:
                raise ValidationError({name: str(exc)}) from None

    @property
    def scoring_check(self) -> dict | None:
        """The check the rules judge scores: the stored one, else a compiled suggestion not removed."""
        if self.machine_check is not None:
            return self.machine_check
        return self.compiled_check if self.compiled_state not in ("", CompiledState.REMOVED) else None


class AuditBounds(models.TextChoices):
    # The tool layer's bounds modes (ehr.fhir.context.BOUNDS).
    STRICT = "strict"
    RELEASE = "release"


class GoldAudit(models.Model):
    """The latest gold audit of one turn (``manage.py audit_gold``, see :mod:`scenarios.audit`).

    ``calls``: one entry per gold step (re-executed or not, and how it compared); ``findings``: only
    what a reviewer must look at (a call that differs or leaks, an untraced number, a possible false
    premise), each with its English ``message`` and the parts the review screen words in its language.
    """

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="gold_audit")
    bounds = models.CharField(max_length=8, choices=AuditBounds.choices, default=AuditBounds.STRICT)
    ran_at = models.DateTimeField(default=timezone.now)
    calls = models.JSONField(default=list, blank=True)
    findings = models.JSONField(default=list, blank=True)
    n_calls = models.PositiveIntegerField(default=0, help_text="EHR calls re-executed")
    n_reproduced = models.PositiveIntegerField(default=0)
    n_differs = models.PositiveIntegerField(default=0)
    n_leaks = models.PositiveIntegerField(default=0)
    n_not_reexecuted = models.PositiveIntegerField(default=0, help_text="patient, write and control steps")
    n_untraced = models.PositiveIntegerField(default=0, help_text="numbers traced to no observation or derivation")
    n_premises = models.PositiveIntegerField(default=0, help_text="possible false premises of the request")

    class Meta:
        ordering = ["turn"]
        constraints = [models.CheckConstraint(condition=_in("bounds", AuditBounds), name="goldaudit_bounds_valid")]

    def __str__(self) -> str:
        n = len(self.findings)
        return f"audit of {self.turn_id} ({self.bounds}, {n} {'finding' if n == 1 else 'findings'})"

    @property
    def has_findings(self) -> bool:
        # a number traced to the knowledge table is information, not a finding to look at
        return any(f.get("kind") != "knowledge" for f in self.findings)
