"""Snapshot admin: read-only list and pages, a "Create snapshot" form, live progress, file downloads.

Registered from ``annotations/admin.py`` (one import). Creating runs ``request_snapshot``: the row is
made at once and the Celery task ``build_snapshot_task`` builds it; the change page polls the
progress with htmx until the snapshot is ready or failed.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from annotations.models import Snapshot, SnapshotStatus
from annotations.roles import is_admin
from annotations.snapshots import background, card, recovery
from annotations.snapshots.duplicates import DuplicateSnapshot
from annotations.snapshots.errors import SnapshotError
from annotations.snapshots.recovery import resumable_ids
from annotations.snapshots.selectors import SIDE_FILES, file_names
from core.admin_mixins import ViewOnlyMixin
from scenarios.models import Scenario


class CreateSnapshotForm(forms.Form):
    scenarios = forms.MultipleChoiceField(
        choices=Scenario.choices, required=False, widget=forms.CheckboxSelectMultiple, help_text="none = all"
    )
    tiers = forms.TypedMultipleChoiceField(
        choices=[(1, "L1"), (2, "L2"), (3, "L3")],
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="none = all",
    )
    language = forms.ChoiceField(choices=[("both", "English and Chinese"), ("en", "English"), ("zh", "Chinese")])
    force = forms.BooleanField(
        required=False,
        label="Even if unchanged",
        help_text="make a new version even when its content equals the latest snapshot's (refused otherwise)",
    )
    ehr_provenance = forms.ChoiceField(
        choices=[(p, p) for p in card.PROVENANCE],
        initial="undeclared",
        label="EHR provenance",
        help_text="what the EHR store behind generated sessions holds (data-use note of the card)",
    )


@admin.register(Snapshot)
class SnapshotAdmin(ViewOnlyMixin, admin.ModelAdmin):  # immutable: made and deleted by its own actions
    list_display = ("label", "status", "created", "created_by", "sessions", "short_sha")
    list_filter = ("status",)
    change_list_template = "admin/annotations/snapshot/change_list.html"
    change_form_template = "admin/annotations/snapshot/change_form.html"
    fields = (
        "label",
        "status",
        "error",
        "created_by",
        "created",
        "finished",
        "filters",
        "review_state",
        "content_sha256",
    )
    readonly_fields = fields

    @admin.display(description="sessions")
    def sessions(self, obj: Snapshot) -> int | str:
        return (obj.manifest or {}).get("counts", {}).get("sessions", "—")

    @admin.display(description="content sha256")
    def short_sha(self, obj: Snapshot) -> str:
        return obj.content_sha256[:12]

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name

        def wrap(view):
            wrapper = self.admin_site.admin_view(view)
            wrapper.model_admin = self  # as Django's own admin URLs do
            return wrapper

        return [
            path("create/", wrap(self.create_view), name="{}_{}_create".format(*info)),
            path("<path:object_id>/progress/", wrap(self.progress_view), name="{}_{}_progress".format(*info)),
            path("<path:object_id>/resume/", wrap(self.resume_view), name="{}_{}_resume".format(*info)),
            *super().get_urls(),
        ]

    def _files(self, snapshot: Snapshot) -> list[dict]:
        names = [*file_names(snapshot=snapshot), *SIDE_FILES]
        by_name = {f["name"]: f for f in (snapshot.manifest or {}).get("files", [])}
        return [
            {
                **by_name.get(name, {"name": name}),
                "url": reverse("snapshots:download", kwargs={"label": snapshot.label, "name": name}),
            }
            for name in names
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        snapshot = get_object_or_404(Snapshot, pk=object_id)
        extra = {
            "snapshot": snapshot,
            "files": self._files(snapshot) if snapshot.status == SnapshotStatus.READY else [],
            "progress_url": reverse("admin:annotations_snapshot_progress", args=[snapshot.pk]),
            "resumable": is_admin(request.user) and snapshot.pk in resumable_ids(),
        }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})

    def progress_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The progress box (htmx partial); it stops polling once the snapshot is ready or failed."""
        snapshot = get_object_or_404(Snapshot, pk=object_id)
        if not self.has_view_permission(request, snapshot):
            raise PermissionDenied
        context = {
            "snapshot": snapshot,
            "progress_url": reverse("admin:annotations_snapshot_progress", args=[snapshot.pk]),
        }
        response = TemplateResponse(request, "admin/annotations/snapshot/_progress.html", context)
        if snapshot.status != SnapshotStatus.BUILDING and request.headers.get("HX-Request"):
            # Finished while the page was open: reload it to show the files and the card.
            response["HX-Refresh"] = "true"
        return response

    def resume_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """POST: queue a failed or stalled build again (admins); see ``annotations.snapshots.recovery``."""
        if not is_admin(request.user):
            raise PermissionDenied
        snapshot = get_object_or_404(Snapshot, pk=object_id)
        if request.method != "POST":
            return redirect("admin:annotations_snapshot_change", snapshot.pk)
        try:
            recovery.resume(snapshot=snapshot)
        except SnapshotError as exc:
            self.message_user(request, str(exc), messages.ERROR)
        except Exception as exc:  # built in-process (no broker) and failed again: the row says why
            self.message_user(request, f"Snapshot build failed: {exc}", messages.ERROR)
        else:
            self.message_user(request, f"Snapshot {snapshot.label} resumed.", messages.SUCCESS)
        return redirect("admin:annotations_snapshot_change", snapshot.pk)

    def create_view(self, request: HttpRequest) -> HttpResponse:
        if not is_admin(request.user):
            raise PermissionDenied
        form = CreateSnapshotForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                snapshot = background.request_snapshot(
                    user=request.user,
                    scenarios=data["scenarios"],
                    tiers=data["tiers"],
                    languages=["en", "zh"] if data["language"] == "both" else [data["language"]],
                    ehr_provenance=data["ehr_provenance"],
                    force=data["force"],
                )
            except DuplicateSnapshot as exc:
                form.add_error(None, f"{exc} (tick “Even if unchanged” to make one anyway)")
            except SnapshotError as exc:
                form.add_error(None, str(exc))
            except Exception as exc:  # the in-process build failed; the snapshot row says why
                self.message_user(request, f"Snapshot build failed: {exc}", messages.ERROR)
                latest = Snapshot.objects.order_by("-version").first()
                return redirect("admin:annotations_snapshot_change", latest.pk) if latest else redirect(request.path)
            else:
                self.message_user(request, f"Snapshot {snapshot.label} started.", messages.SUCCESS)
                return redirect("admin:annotations_snapshot_change", snapshot.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Create snapshot",
            "form": form,
        }
        return TemplateResponse(request, "admin/annotations/snapshot/create.html", context)
