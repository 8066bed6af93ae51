"""merge() resolves only the conflicts it applied (or the user settled); the rest are offered again."""

import pytest
from django.urls import reverse

from annotations import services
from annotations.models import Revision, RevisionKind

pytestmark = pytest.mark.django_db


def _two_field_conflict(turn, adjudicator, admin_user):
    services.save_turn_edit(turn=turn, user=adjudicator, changes={"answer_en": "Adjudicator EN."}, base_version=1)
    with pytest.raises(services.Conflict) as info:
        services.save_turn_edit(
            turn=turn,
            user=admin_user,
            changes={"answer_en": "Admin EN.", "answer_zh": "管理员的回答。"},
            base_version=1,
        )
    return info.value


def _open(turn, user):
    return Revision.objects.filter(turn=turn, author=user, kind=RevisionKind.CONFLICT, resolved_at__isnull=True)


def test_merge_resolves_only_the_fields_it_applied(turn, adjudicator, admin_user):
    conflict = _two_field_conflict(turn, adjudicator, admin_user)
    assert set(_open(turn, admin_user).values_list("field", flat=True)) == {"answer_en", "answer_zh"}

    turn, revisions, _ = services.merge(
        turn=turn, user=admin_user, changes={"answer_en": "Merged EN."}, base_version=conflict.current_version
    )

    assert [r.field for r in revisions] == ["answer_en"]
    assert list(_open(turn, admin_user).values_list("field", flat=True)) == ["answer_zh"]
    assert services.pending_conflicts(turn=turn, user=admin_user) == {"answer_zh": "管理员的回答。"}
    pending = services.unapplied(turn=turn, user=admin_user)
    assert [d.field for d in pending.diffs] == ["answer_zh"] and pending.current_version == turn.version
    assert turn.answer_zh != "管理员的回答。"  # really not applied, and not marked merged


def test_a_settled_field_is_resolved_without_a_change(turn, adjudicator, admin_user):
    conflict = _two_field_conflict(turn, adjudicator, admin_user)
    services.merge(
        turn=turn,
        user=admin_user,
        changes={"answer_en": "Merged EN."},
        base_version=conflict.current_version,
        settled=["answer_zh"],  # the user kept the current Chinese text
    )
    assert not _open(turn, admin_user).exists()
    assert services.unapplied(turn=turn, user=admin_user) is None


def test_reopening_the_turn_shows_the_unapplied_version(client, turn, adjudicator, admin_user):
    conflict = _two_field_conflict(turn, adjudicator, admin_user)
    services.merge(
        turn=turn, user=admin_user, changes={"answer_en": "Merged EN."}, base_version=conflict.current_version
    )
    client.force_login(admin_user)
    page = client.get(reverse("annotations:turn", args=[turn.pk])).content.decode()
    assert 'id="unapplied"' in page and 'name="merge-answer_zh"' in page and "管理员的回答。" in page
    assert 'name="merge-answer_en"' not in page
    # The merge form of the reopened page settles it (here: keeping the current text).
    turn.refresh_from_db()
    response = client.post(
        reverse("annotations:merge", args=[turn.pk]), {"base_version": turn.version, "merge-answer_zh": turn.answer_zh}
    )
    assert response.status_code == 200 and 'id="unapplied"' not in response.content.decode()
    assert not _open(turn, admin_user).exists()
    # The other user (no conflicts of theirs) is told nothing.
    client.force_login(adjudicator)
    assert 'id="unapplied"' not in client.get(reverse("annotations:turn", args=[turn.pk])).content.decode()
