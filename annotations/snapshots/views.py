"""Download of a snapshot's files (staff only), streamed from disk."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404
from django.views.decorators.http import require_GET

from annotations.snapshots import selectors
from annotations.snapshots.errors import SnapshotError

CONTENT_TYPES = {
    ".jsonl": "application/jsonl; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".parquet": "application/vnd.apache.parquet",
    "": "text/plain; charset=utf-8",  # SHA256SUMS
}


@require_GET
@login_required
def download(request, label: str, name: str):
    if not request.user.is_staff:
        raise PermissionDenied
    try:
        snapshot = selectors.get_snapshot(ref=label)
        path = selectors.snapshot_file_path(snapshot=snapshot, name=name)
    except SnapshotError as exc:
        raise Http404(str(exc)) from None
    content_type = "text/markdown; charset=utf-8" if name.endswith(".md") else None
    if name.endswith((".jsonl", ".json")):
        content_type = (
            "application/json; charset=utf-8" if name.endswith(".json") else "application/jsonl; charset=utf-8"
        )
    return FileResponse(
        path.open("rb"), as_attachment=True, filename=f"{snapshot.label}_{name}", content_type=content_type
    )
