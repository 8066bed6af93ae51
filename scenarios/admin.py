"""Admin: runs, sessions with their turns inline, turns with gold steps and rubric items inline.

Editing and review happen in the review app; the admin is for looking things up and small fixes.
"""

from django.contrib import admin
from django.utils.text import Truncator

from scenarios.models import GenerationRun, GoldStep, RubricItem, Session, Turn


def _short(text: str, n: int = 80) -> str:
    return Truncator(text).chars(n)


class TurnInline(admin.TabularInline):
    model = Turn
    extra = 0
    show_change_link = True
    fields = ("index", "task_type", "is_implicit", "subtype", "tool_source", "status", "request")
    readonly_fields = fields
    can_delete = False

    @admin.display(description="implicit request (EN)")
    def request(self, obj: Turn) -> str:
        return _short(obj.request_implicit_en)

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("record_id", "scenario", "tier", "subject_id", "hadm_id", "current_date", "status", "source")
    list_filter = ("scenario", "tier", "status", "source")
    search_fields = ("record_id", "session_id", "=subject_id", "=hadm_id")
    readonly_fields = ("created_at", "updated_at")
    raw_id_fields = ("run",)
    inlines = [TurnInline]


class GoldStepInline(admin.TabularInline):
    model = GoldStep
    extra = 0
    fields = ("idx", "tool", "arguments", "dependency_list", "observation_preview")
    readonly_fields = ("observation_preview",)

    @admin.display(description="observation")
    def observation_preview(self, obj: GoldStep) -> str:
        return _short(str(obj.observation), 160)


class RubricItemInline(admin.TabularInline):
    model = RubricItem
    extra = 0
    fields = ("idx", "text_en", "text_zh", "is_safety", "safety_inferred", "machine_check")


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ("__str__", "task_type", "subtype", "tool_source", "status", "version")
    list_filter = ("task_type", "subtype", "tool_source", "status")
    search_fields = ("session__record_id", "request_explicit_en", "request_implicit_en")
    raw_id_fields = ("session",)
    inlines = [GoldStepInline, RubricItemInline]


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "backend",
        "status",
        "seed",
        "requested",
        "made",
        "rejected_by_gate",
        "cost_usd",
        "created_at",
    )
    list_filter = ("backend", "status")
