"""Admin: who reviews which session (inline on sessions, an action for automatic distribution),
assignments, and the review guidelines (markdown, shown beside every turn).

Assignments made here go through :mod:`annotations.services` so the session's draft turns enter review.
"""

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from annotations import admin_snapshots, services  # noqa: F401 (admin_snapshots registers the Snapshot admin)
from annotations.guidelines import render_markdown
from annotations.models import Assignment, Guideline
from annotations.roles import REVIEWER
from annotations.services.assignment import reviewer_pool
from scenarios.admin import SessionAdmin as BaseSessionAdmin
from scenarios.models import Session, SessionStatus

AUTO_PER_SESSION = 2


def _reviewer_choices():
    return get_user_model().objects.filter(is_active=True, groups__name=REVIEWER).distinct().order_by("username")


class AssignmentInline(admin.TabularInline):
    model = Assignment
    fk_name = "session"
    extra = 1
    fields = ("reviewer", "assigned_by", "created")
    readonly_fields = ("assigned_by", "created")

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "reviewer":
            kwargs["queryset"] = _reviewer_choices()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


admin.site.unregister(Session)


@admin.register(Session)
class SessionAdmin(BaseSessionAdmin):
    inlines = [AssignmentInline, *BaseSessionAdmin.inlines]
    actions = ["assign_reviewers_automatically"]

    def save_formset(self, request, form, formset, change):
        if formset.model is not Assignment:
            return super().save_formset(request, form, formset, change)
        rows = formset.save(commit=False)
        for row in formset.deleted_objects:
            row.delete()
        for row in rows:
            if row.pk is None:  # new: through the service, so the session's draft turns enter review
                services.assign(session=form.instance, reviewer=row.reviewer, by=request.user)
            else:
                row.save()
        return None

    @admin.action(description=_("Assign reviewers automatically (2 per session)"))
    def assign_reviewers_automatically(self, request, queryset):
        sessions = list(
            queryset.exclude(status=SessionStatus.REJECTED_BY_GATE).order_by("scenario", "tier", "record_id")
        )
        skipped = queryset.count() - len(sessions)
        try:
            pool = reviewer_pool()
            created = services.distribute(
                sessions=sessions, reviewers=pool, per_session=AUTO_PER_SESSION, by=request.user
            )
        except ValueError as exc:
            self.message_user(request, f"No reviewers assigned: {exc}", level=messages.ERROR)
            return
        self.message_user(
            request,
            ngettext("%(n)d assignment created.", "%(n)d assignments created.", len(created)) % {"n": len(created)}
            + " "
            + _("Sessions covered: %(s)d; reviewers in the pool: %(r)d.")
            % {"s": len({a.session_id for a in created}), "r": len(pool)},
            level=messages.SUCCESS,
        )
        if skipped:
            self.message_user(
                request,
                ngettext(
                    "%(n)d session rejected by the quality gates was skipped.",
                    "%(n)d sessions rejected by the quality gates were skipped.",
                    skipped,
                )
                % {"n": skipped},
                level=messages.WARNING,
            )


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("session", "reviewer", "assigned_by", "created")
    list_filter = ("session__scenario", "session__tier", "reviewer")
    search_fields = ("session__record_id", "reviewer__username")
    raw_id_fields = ("session",)
    readonly_fields = ("assigned_by", "created")
    list_select_related = ("session", "reviewer", "assigned_by")

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "reviewer":
            kwargs["queryset"] = _reviewer_choices()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        saved = services.assign(session=obj.session, reviewer=obj.reviewer, by=request.user)
        obj.pk, obj.assigned_by, obj.created = saved.pk, saved.assigned_by, saved.created
        return None


@admin.register(Guideline)
class GuidelineAdmin(admin.ModelAdmin):
    list_display = ("language", "title", "updated", "updated_by")
    fields = ("language", "title", "body_markdown", "preview", "updated", "updated_by")
    readonly_fields = ("preview", "updated", "updated_by")

    @admin.display(description=_("preview (as reviewers see it; saved text)"))
    def preview(self, obj: Guideline):
        return render_markdown(obj.body_markdown) if obj.pk else "—"

    def save_model(self, request, obj, form, change):
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)
