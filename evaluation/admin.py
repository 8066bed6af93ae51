"""Admin: evaluation runs (manifest, summary) and their per-turn results, read-only (runs are records)."""

from django.contrib import admin

from core.admin_mixins import ViewOnlyMixin
from evaluation.models import EvalRun, JudgeCertification, TurnResult


class _ReadOnly(ViewOnlyMixin, admin.ModelAdmin):
    pass


@admin.register(EvalRun)
class EvalRunAdmin(_ReadOnly):
    list_display = (
        "id",
        "model",
        "judge",
        "judge_certified",
        "status",
        "dataset",
        "mrs_en",
        "mrs_zh",
        "started_at",
        "finished_at",
    )
    list_filter = ("status", "judge", "judge_certified")
    search_fields = ("model",)
    readonly_fields = [f.name for f in EvalRun._meta.fields]

    @admin.display(description="dataset")
    def dataset(self, obj: EvalRun) -> str:
        return str((obj.manifest.get("dataset") or {}).get("label", ""))

    def _mrs(self, obj: EvalRun, language: str) -> str:
        value = ((obj.summary.get("metrics") or {}).get(language) or {}).get("mRS", {}).get("all")
        return "—" if value is None else f"{100 * value:.1f}"

    @admin.display(description="mRS EN")
    def mrs_en(self, obj: EvalRun) -> str:
        return self._mrs(obj, "en")

    @admin.display(description="mRS ZH")
    def mrs_zh(self, obj: EvalRun) -> str:
        return self._mrs(obj, "zh")


@admin.register(TurnResult)
class TurnResultAdmin(_ReadOnly):
    list_display = ("run", "session_id", "turn_index", "language", "variant", "trial", "score", "infra_error")
    list_filter = ("language", "variant", "task_type", "tool_source", "tier")
    search_fields = ("session_id",)
    raw_id_fields = ("run",)
    readonly_fields = [f.name for f in TurnResult._meta.fields]


@admin.register(JudgeCertification)
class JudgeCertificationAdmin(_ReadOnly):
    """Written by ``manage.py certify_judges`` only: a certification is a record of what the grades showed."""

    list_display = ("judge", "prompt_hash", "certified", "threshold", "tpr_low", "tnr_low", "n", "computed_at")
    list_filter = ("certified", "judge")
    readonly_fields = [f.name for f in JudgeCertification._meta.fields]
