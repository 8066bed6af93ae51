"""Data: make every stored turn's ``prepare_to_answer`` observations equal its gold answer (EN and ZH).

Review edits used to change the answer and leave the observation stale. The answer is what reviewers
saw and approved, so the observation follows it (the same rule as scenarios.gold_answer, whose pure
``apply_gold_answer`` is used on the historical models). Each repaired field is recorded as a
``system`` revision at the turn's current version (the reviewed content did not change, so the
version is not bumped). Reverse: nothing to undo (the revisions keep the old observations).
"""

from django.db import migrations

from scenarios.gold_answer import apply_gold_answer

REASON = "migration: prepare_to_answer observation aligned with the gold answer"


def repair(apps, schema_editor):
    Turn = apps.get_model("scenarios", "Turn")
    Revision = apps.get_model("annotations", "Revision")
    turns = Turn.objects.prefetch_related("steps").order_by("pk")
    revisions = []
    for turn in turns.iterator(chunk_size=200):
        steps = list(turn.steps.all())
        before_en = {s.idx: s.observation for s in steps}
        before_zh = ((turn.extra or {}).get("pab_answer_list_zh") or [None])[-1]
        before_zh = before_zh.get("observation") if isinstance(before_zh, dict) else None
        changed = apply_gold_answer(turn=turn, steps=steps, answer_en=turn.answer_en, answer_zh=turn.answer_zh)
        for name in changed:
            if name.startswith("steps."):
                step = next(s for s in steps if f"steps.{s.idx}.observation" == name)
                step.save(update_fields=["observation"])
                before, after = before_en[step.idx], step.observation
            else:  # answer_list_zh.observation
                turn.save(update_fields=["extra"])
                before, after = before_zh, turn.answer_zh
            revisions.append(
                Revision(
                    turn_id=turn.pk,
                    field=name,
                    before=before,
                    after=after,
                    reason=REASON,
                    kind="system",
                    version=turn.version,
                )
            )
    Revision.objects.bulk_create(revisions, batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("annotations", "0003_snapshots"),
        ("scenarios", "0005_generation_rejections"),
    ]

    operations = [migrations.RunPython(repair, migrations.RunPython.noop)]
