"""SQL queries per page do not grow with the size of the session, the record or the review history.

Each test counts a page's queries on a small case, then grows the case (more turns in the session,
more rows in the admission's record, more sessions in the queue, more revisions, reviews and
comments) and asserts with ``django_assert_max_num_queries`` that the large case needs no more.
Complements tests/annotations (review screen with more comments and steps, dashboard with more
sessions) and tests/ehr (fixed ceilings). Pages are reached by URL, not by importing views.
"""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from django.apps import apps
from django.core.cache import cache
from django.db import connection, models
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations import services
from annotations.models import Comment, TurnState
from ehr.models import Admission, LabEvent
from scenarios.models import GoldStep, RubricItem, Turn
from tests.annotations.conftest import make_user
from tests.scenarios.factories import ARC, TurnFactory, complete_session

pytestmark = pytest.mark.django_db

FAR_FUTURE = dt.date(2300, 1, 1)  # a session current date after every charted row: the whole record is visible
_serial = itertools.count(1)


@pytest.fixture
def people(db):
    return {
        "reviewers": [make_user(f"qc_rev{i}", "reviewer") for i in (1, 2)],
        "adjudicator": make_user("qc_adj", "adjudicator"),
        "admin": make_user("qc_admin", "admin"),
    }


def _count(client, url: str, *, method: str = "get", data: dict | None = None) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = getattr(client, method)(url, data or {})
    assert response.status_code == 200, (url, response.status_code)
    assert 'role="alert"' not in response.text, response.text[:2000]
    return len(captured)


def _admissions(demo_cohort) -> tuple[Admission, Admission]:
    """Two admissions of the demo cohort that have lab results (the small one and the one to grow)."""
    with_labs = LabEvent.objects.exclude(hadm_id=None).values_list("hadm_id", flat=True).distinct()
    small, large = Admission.objects.filter(hadm_id__in=with_labs).order_by("hadm_id")[:2]
    return small, large


def _grow_record(admission: Admission, *, rows_per_table: int = 60) -> int:
    """Copy rows of other admissions, in every EHR table keyed by admission, onto ``admission``."""
    added = 0
    for model in apps.get_app_config("ehr").get_models():
        names = {f.name for f in model._meta.fields}
        if model is Admission or "hadm_id" not in names:
            continue
        pk = model._meta.pk
        copies = []
        for row in model.objects.exclude(hadm_id=admission.hadm_id).exclude(hadm_id=None)[:rows_per_table]:
            row.hadm_id, row.subject_id = admission.hadm_id, admission.subject_id
            if isinstance(pk, models.AutoField | models.BigAutoField):
                setattr(row, pk.attname, None)
            elif isinstance(pk, models.CharField):
                setattr(row, pk.attname, f"qc{next(_serial)}"[: pk.max_length])
            else:
                setattr(row, pk.attname, 1_900_000_000 + next(_serial))  # fits int and bigint keys
            copies.append(row)
        model.objects.bulk_create(copies)
        added += len(copies)
    assert added, "the demo cohort has rows to copy"
    return added


def _grow_session(session, *, extra_turns: int = 12) -> None:
    """More turns in the session, each with gold steps and rubric items like the generated ones."""
    start = session.turns.count()
    for index in range(start, start + extra_turns):
        task_type, subtype, source, mode = ARC[index % len(ARC)]
        turn = TurnFactory(
            session=session,
            index=index,
            task_type=task_type,
            subtype=subtype,
            is_implicit=True,
            tool_source=source,
            workup_mode=mode,
            status=TurnState.IN_REVIEW,
        )
        for idx in range(3):
            GoldStep.objects.create(
                turn=turn,
                idx=idx,
                tool="Observation.search",
                arguments={"subject_id": session.subject_id, "code": "creatinine"},
                observation={"resourceType": "Bundle", "type": "searchset", "total": 0, "entry": []},
            )
        for idx in range(4):
            RubricItem.objects.create(turn=turn, idx=idx, text_en=f"item {idx}", text_zh=f"项目 {idx}")


def _session_on(admission: Admission, people, *, assign_to=None):
    session = complete_session(subject_id=admission.subject_id, hadm_id=admission.hadm_id, current_date=FAR_FUTURE)
    for reviewer in assign_to if assign_to is not None else people["reviewers"]:
        services.assign(session=session, reviewer=reviewer, by=people["admin"])
    return session


def _busy_turn(turn: Turn, people) -> None:
    """History around a turn: comments from everyone, a draft review, direct edits (revisions)."""
    for i, user in enumerate(people["reviewers"] * 3):
        Comment.objects.create(turn=turn, author=user, text=f"comment {i}")
    turn.refresh_from_db()
    services.save_draft_review(
        turn=turn, reviewer=people["reviewers"][1], proposed={"answer_en": "Edited answer."}, base_version=turn.version
    )
    for i in range(4):
        turn.refresh_from_db()
        services.save_turn_edit(
            turn=turn, user=people["admin"], changes={"answer_en": f"Answer v{i}"}, base_version=turn.version
        )


def _turn_url(turn: Turn, action: str = "") -> str:
    url = reverse("annotations:turn", args=[turn.pk])
    return f"{url}{action}/" if action else url


# --- review screens ------------------------------------------------------------------------------


def test_queue_does_not_grow_with_sessions_and_turns(client, django_assert_max_num_queries, people):
    reviewer = people["reviewers"][0]
    small = complete_session()
    services.assign(session=small, reviewer=reviewer, by=people["admin"])
    client.force_login(reviewer)
    url = reverse("annotations:queue")
    client.get(url)
    baseline = _count(client, url)
    for _ in range(5):
        session = complete_session()
        _grow_session(session, extra_turns=4)
        services.assign(session=session, reviewer=reviewer, by=people["admin"])
    with django_assert_max_num_queries(baseline):
        response = client.get(url)
    assert len(response.context["turns"]) == 4 + 5 * 8


@pytest.mark.parametrize("role", ["reviewer", "adjudicator"])
def test_review_screen_does_not_grow_with_session_or_record(
    client, django_assert_max_num_queries, people, demo_cohort, role
):
    small_adm, large_adm = _admissions(demo_cohort)
    small = _session_on(small_adm, people)
    large = _session_on(large_adm, people)
    _grow_session(large)
    _grow_record(large_adm)
    small_turn, large_turn = small.turns.get(index=3), large.turns.get(index=9)
    _busy_turn(large_turn, people)
    user = people["reviewers"][0] if role == "reviewer" else people["adjudicator"]
    client.force_login(user)
    client.get(_turn_url(small_turn))
    cache.clear()  # both counts with the evidence panel rendered, not served from the cache
    baseline = _count(client, _turn_url(small_turn))
    cache.clear()
    with django_assert_max_num_queries(baseline):
        response = client.get(_turn_url(large_turn))
    assert response.status_code == 200
    assert len(response.context["earlier"]) == 9 and len(response.context["evidence"]["labs"]) >= 1


def test_saving_a_draft_and_commenting_do_not_grow_with_session_or_record(
    client, django_assert_max_num_queries, people, demo_cohort
):
    small_adm, large_adm = _admissions(demo_cohort)
    small = _session_on(small_adm, people)
    large = _session_on(large_adm, people)
    _grow_session(large)
    _grow_record(large_adm)
    small_turn, large_turn = small.turns.get(index=3), large.turns.get(index=9)
    _busy_turn(large_turn, people)
    client.force_login(people["reviewers"][0])
    for turn in (small_turn, large_turn):  # a first draft creates the review; count the second save
        client.post(_turn_url(turn, "edit"), {"base_version": 1, "answer_en": "first draft", "draft": "1"})
    draft = {"base_version": 1, "answer_en": "second draft", "draft": "1"}
    edit_baseline = _count(client, _turn_url(small_turn, "edit"), method="post", data=draft)
    comment_baseline = _count(client, _turn_url(small_turn, "comment"), method="post", data={"text": "ok"})
    with django_assert_max_num_queries(edit_baseline):
        assert client.post(_turn_url(large_turn, "edit"), draft).status_code == 200
    with django_assert_max_num_queries(comment_baseline):
        assert client.post(_turn_url(large_turn, "comment"), {"text": "ok"}).status_code == 200


def _disputed(session, people) -> Turn:
    """Turn 0 of ``session`` with review A rejecting and review B approving with an edit."""
    turn = session.turns.get(index=0)
    rev_a, rev_b = people["reviewers"]
    services.submit_review(
        turn=turn, reviewer=rev_a, decision="reject", reject_reason="translation_error", base_version=turn.version
    )
    turn.refresh_from_db()
    services.submit_review(
        turn=turn, reviewer=rev_b, decision="approve", proposed={"answer_zh": "新的答案。"}, base_version=turn.version
    )
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    return turn


def test_adjudication_screen_does_not_grow_with_session_or_record(
    client, django_assert_max_num_queries, people, demo_cohort
):
    small_adm, large_adm = _admissions(demo_cohort)
    small = _disputed(_session_on(small_adm, people), people)
    large_session = _session_on(large_adm, people)
    _grow_session(large_session)
    _grow_record(large_adm)
    large = _disputed(large_session, people)
    for i in range(6):
        Comment.objects.create(turn=large, author=people["adjudicator"], text=f"note {i}")
    client.force_login(people["adjudicator"])
    url = lambda turn: reverse("annotations:adjudicate", args=[turn.pk])  # noqa: E731
    client.get(url(small))
    cache.clear()  # both counts with the evidence panel and header rendered, not served from the cache
    baseline = _count(client, url(small))
    cache.clear()
    with django_assert_max_num_queries(baseline):
        assert client.get(url(large)).status_code == 200
    # The adjudication queue lists both without a query per row.
    client.get(reverse("annotations:queue"))
    queue_baseline = _count(client, reverse("annotations:queue"))
    for session in (complete_session(), complete_session()):
        for reviewer in people["reviewers"]:
            services.assign(session=session, reviewer=reviewer, by=people["admin"])
        _disputed(session, people)
    with django_assert_max_num_queries(queue_baseline):
        assert client.get(reverse("annotations:queue")).status_code == 200


def test_history_does_not_grow_with_revisions(client, django_assert_max_num_queries, people):
    session = complete_session()
    for reviewer in people["reviewers"]:
        services.assign(session=session, reviewer=reviewer, by=people["admin"])
    small, large = session.turns.get(index=0), session.turns.get(index=1)
    services.save_turn_edit(turn=small, user=people["admin"], changes={"answer_en": "One edit."}, base_version=1)
    for i in range(10):
        large.refresh_from_db()
        services.save_turn_edit(
            turn=large,
            user=people["admin"] if i % 2 else people["adjudicator"],
            changes={"answer_en": f"Edit {i}.", "answer_zh": f"编辑 {i}。", "request_explicit_en": f"Request {i}?"},
            base_version=large.version,
            reason=f"round {i}",
        )
    client.force_login(people["reviewers"][0])
    url = lambda turn: reverse("annotations:history", args=[turn.pk])  # noqa: E731
    client.get(url(small))
    baseline = _count(client, url(small))
    with django_assert_max_num_queries(baseline):
        response = client.get(url(large))
    assert sum(len(rows) for rows in response.context["fields"].values()) >= 30


# --- EHR pages -----------------------------------------------------------------------------------


def test_admission_page_does_not_grow_with_the_record(client, django_assert_max_num_queries, people, demo_cohort):
    small_adm, large_adm = _admissions(demo_cohort)
    client.force_login(people["reviewers"][0])
    url = lambda adm: reverse("ehr:admission_detail", args=[adm.hadm_id])  # noqa: E731
    client.get(url(small_adm))
    baseline = _count(client, url(small_adm))
    _grow_record(large_adm)
    with django_assert_max_num_queries(baseline):
        assert client.get(url(large_adm)).status_code == 200


def test_patient_list_does_not_grow_with_patients_or_admissions(
    client, django_assert_max_num_queries, people, demo_cohort
):
    client.force_login(people["reviewers"][0])
    url = reverse("ehr:patient_list")
    client.get(url)
    baseline = _count(client, url)
    template = Admission.objects.first()
    for i in range(30):  # 30 more admissions for patients already listed
        template.pk = None
        template.hadm_id = 95_000_000 + i
        template.save(force_insert=True)
    with django_assert_max_num_queries(baseline):
        assert client.get(url).status_code == 200
