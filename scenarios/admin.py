"""Admin: runs, sessions with their turns inline, turns with gold steps and rubric items inline.

Editing and review happen in the review app; turns, gold steps and rubric items are view-only here
(an admin save would bypass versioning and revisions).
"""

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from core.admin_mixins import ViewOnlyMixin
from scenarios import recovery
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


class _ViewOnlyInline(ViewOnlyMixin, admin.TabularInline):
    """Gold steps and rubric items are turn content: changed only through the review services."""

    extra = 0
    can_delete = False


class GoldStepInline(_ViewOnlyInline):
    model = GoldStep
    fields = ("idx", "tool", "arguments", "dependency_list", "observation_preview")
    readonly_fields = ("observation_preview",)

    @admin.display(description="observation")
    def observation_preview(self, obj: GoldStep) -> str:
        return _short(str(obj.observation), 160)


class RubricItemInline(_ViewOnlyInline):
    model = RubricItem
    fields = ("idx", "text_en", "text_zh", "is_safety", "safety_inferred", "machine_check")


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    """View-only: an edit here would change the turn without a version bump or a revision, under the
    reviewers' feet. Content changes go through the review screen (annotations.services.edits)."""

    list_display = ("__str__", "task_type", "subtype", "tool_source", "status", "version")
    list_filter = ("task_type", "subtype", "tool_source", "status")
    search_fields = ("session__record_id", "request_explicit_en", "request_implicit_en")
    raw_id_fields = ("session",)
    inlines = [GoldStepInline, RubricItemInline]
    readonly_fields = ("edit_on_review_screen",)

    @admin.display(description=_("Edit"))
    def edit_on_review_screen(self, obj: Turn) -> str:
        url = reverse("annotations:turn", args=[obj.pk])
        note = _("Turn content is read-only here: edit it on the review screen, which keeps versions and history.")
        return format_html('{} <a href="{}">{}</a>', note, url, _("Open the review screen"))

    def get_fields(self, request, obj=None):
        return ["edit_on_review_screen", *(f.name for f in Turn._meta.concrete_fields if f.name != "id")]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


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
        "heartbeat_at",
    )
    list_filter = ("backend", "status")
    actions = ["resume_runs"]

    @admin.action(description="Resume selected runs (failed, interrupted or stalled)", permissions=["change"])
    def resume_runs(self, request, queryset):
        """Queue the missing slots of each failed, interrupted or stale run again (``scenarios.recovery``);
        finished runs and runs that are alive (fresh heartbeat) are left alone."""
        stale = set(recovery.stale_runs().values_list("pk", flat=True))
        for run in queryset:
            if run.status in {"failed", "interrupted"} or run.pk in stale:
                slots = recovery.resume(run=run)
                self.message_user(
                    request,
                    f"run {run.pk}: resumed, {len(slots)} {'slot' if len(slots) == 1 else 'slots'} queued",
                    messages.SUCCESS,
                )
            else:
                self.message_user(request, f"run {run.pk} is {run.status} and alive: left alone", messages.WARNING)
