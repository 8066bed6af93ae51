"""Data: every turn approved before approvals were tracked per version gets one, at its current version.

Without it every existing curated session would drop out of the next snapshot. ``via`` is
``migration``; the approvers are the latest adjudicator if the turn was adjudicated, else the
reviewers whose submitted review approved it. ``content`` is the turn's content now (what a revert
restores), written with annotations.content.snapshot on the historical models.
"""

from django.db import migrations

from annotations.content import snapshot


def backfill(apps, schema_editor):
    Turn = apps.get_model("scenarios", "Turn")
    TurnApproval = apps.get_model("annotations", "TurnApproval")
    Adjudication = apps.get_model("annotations", "Adjudication")
    Review = apps.get_model("annotations", "Review")
    rows = []
    turns = Turn.objects.filter(status="approved").prefetch_related("rubric_items", "steps").order_by("pk")
    for turn in turns.iterator(chunk_size=200):
        adjudication = Adjudication.objects.filter(turn_id=turn.pk).order_by("-created", "-pk").first()
        if adjudication is not None:
            user = adjudication.adjudicator
            approvers = [user.username]
        else:
            user = None
            approvers = sorted(
                Review.objects.filter(turn_id=turn.pk, decision="approve", submitted_at__isnull=False).values_list(
                    "reviewer__username", flat=True
                )
            )
        rows.append(
            TurnApproval(
                turn_id=turn.pk,
                version=turn.version,
                via="migration",
                approved_by=user,
                approvers=approvers,
                content=snapshot(turn=turn),
            )
        )
    TurnApproval.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [("annotations", "0005_turn_approval_per_version")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
