"""Edit leases over HTMX: opening the editor takes the lease, a heartbeat renews it, closing releases it.

Leases are advisory (optimistic locking is what keeps every edit): when someone else holds a live
lease the editor still opens, with a banner naming the holder and the expiry, and the heartbeat
keeps trying to take the lease over once it lapses.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from annotations import services
from annotations.views.common import turn_for
from annotations.views.panel import lease_context


@login_required
@require_POST
def lease(request: HttpRequest, pk: int) -> HttpResponse:
    """Acquire or renew (heartbeat) the caller's lease; 200 with the lease banner either way."""
    turn = turn_for(request, pk, light=True)
    try:
        held = services.acquire_lease(turn=turn, user=request.user)
    except services.LeaseHeld:
        context = lease_context(turn=turn, user=request.user)
    except services.InvalidState as gone:  # deleted since turn_for read it
        raise Http404(str(gone)) from gone
    else:
        context = lease_context(turn=turn, user=request.user, lease=held)
    # The heartbeat: the banner posts here again every 30 s while the editor is open.
    return render(request, "annotations/_lease.html", {"turn": turn, "lease_trigger": "every 30s", **context})


@login_required
@require_POST
def release_lease(request: HttpRequest, pk: int) -> HttpResponse:
    turn = turn_for(request, pk, light=True)
    try:
        services.release(turn=turn, user=request.user)
    except services.InvalidState as gone:
        raise Http404(str(gone)) from gone
    return render(request, "annotations/_lease.html", {"turn": turn, "lease": None, "lease_state": "none"})
