"""Confirming (or reverting) an edit of an approved turn: the buttons of the confirmation queue."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotations.services import InvalidState, PermissionDenied, confirm_edit, revert_edit
from annotations.views.common import posted_version, turn_for


@login_required
@require_POST
def confirm(request: HttpRequest, pk: int) -> HttpResponse:
    """``action=confirm`` approves the edited version; ``action=revert`` restores the approved one."""
    turn = turn_for(request, pk, light=True)
    version = posted_version(request)
    try:
        if request.POST.get("action") == "revert":
            revert_edit(turn=turn, user=request.user, base_version=version, reason=request.POST.get("reason", ""))
            messages.success(request, _("The edit was reverted: the approved version is back."))
        else:
            confirm_edit(turn=turn, user=request.user, base_version=version)
            messages.success(request, _("The edit was confirmed: this version is approved."))
    except (InvalidState, PermissionDenied) as exc:
        messages.error(request, str(exc))
    return redirect("annotations:queue")
