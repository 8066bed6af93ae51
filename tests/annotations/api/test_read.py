"""Reading sessions and turns: visibility per role, filters, the language switch and pagination."""

from __future__ import annotations

import pytest

from annotations import services
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def _records(response) -> list[str]:
    return sorted({row["record_id"] for row in response.json()["results"]})


def test_anonymous_gets_401_with_error_body(clients):
    for url in ("/api/sessions/", "/api/turns/", "/api/"):
        response = clients["anon"].get(url)
        assert response.status_code == 401, url
        assert response["WWW-Authenticate"] == "Token"
        assert response.json() == {
            "error": {"code": "not_authenticated", "message": "Authentication credentials were not provided."}
        }


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        ("rev1", ["med_safety_a"]),
        ("rev3", []),
        ("adj", ["diagnostic_workup_b", "med_safety_a"]),
        ("admin", ["diagnostic_workup_b", "med_safety_a"]),
    ],
)
def test_sessions_and_turns_visible_per_role(clients, world, user, expected):
    sessions = clients[user].get("/api/sessions/")
    assert sessions.status_code == 200
    assert _records(sessions) == expected
    turns = clients[user].get("/api/turns/")
    assert _records(turns) == expected
    assert turns.json()["count"] == 4 * len(expected)
    # Detail of a session or turn outside the user's view is a 404, as in the review UI.
    b_turn = world["b"].turns.get(index=0)
    for url in (f"/api/sessions/{world['b'].pk}/", f"/api/turns/{b_turn.pk}/"):
        response = clients[user].get(url)
        assert response.status_code == (200 if "diagnostic_workup_b" in expected else 404), url
        if response.status_code == 404:
            assert response.json()["error"]["code"] == "not_found"


def test_session_detail_lists_turns_and_hides_co_reviewers_from_reviewers(clients, world):
    a = world["a"]
    mine = clients["rev1"].get(f"/api/sessions/{a.pk}/").json()
    assert [t["index"] for t in mine["turns"]] == [0, 1, 2, 3]
    assert {t["status"] for t in mine["turns"]} == {"in_review"}
    assert mine["reviewers"] == ["rev1"]
    assert clients["adj"].get(f"/api/sessions/{a.pk}/").json()["reviewers"] == ["rev1", "rev2"]


def test_turn_carries_steps_rubric_and_texts(clients, world):
    turn = world["a"].turns.get(index=0)
    body = clients["rev1"].get(f"/api/turns/{turn.pk}/").json()
    assert body["version"] == turn.version and body["status"] == "in_review"
    assert body["answer_zh"] == turn.answer_zh and body["answer_en"] == turn.answer_en
    assert [s["tool"] for s in body["steps"]] == ["Observation.search", "prepare_to_answer"]
    assert body["steps"][0]["arguments"] == {"subject_id": world["a"].subject_id, "code": "creatinine"}
    assert [r["text_zh"] for r in body["rubric"]] == ["指出肌酐 1.4 mg/dL", "不建议使用非甾体抗炎药"]
    assert body["rubric"][1]["is_safety"] is True
    assert body["reviews"] == []


def test_steps_stored_by_an_earlier_version_read_in_the_contracts_terms(clients, world):
    turn = world["a"].turns.get(index=0)
    step = turn.steps.get(idx=0)
    step.arguments = {"patient": world["a"].subject_id, "test_name": "creatinine"}
    step.save(update_fields=["arguments"])
    body = clients["rev1"].get(f"/api/turns/{turn.pk}/").json()
    assert body["steps"][0]["arguments"] == {"subject_id": world["a"].subject_id, "code": "creatinine"}


def test_language_selects_the_texts(clients, world):
    en = clients["adj"].get("/api/turns/", {"language": "en"}).json()["results"][0]
    assert en["answer_en"] and en["request_implicit_en"] and en["rubric"][0]["text_en"]
    assert en["answer_zh"] is None and en["request_implicit_zh"] is None and en["rubric"][0]["text_zh"] is None
    zh = clients["adj"].get("/api/turns/", {"language": "zh"}).json()["results"][0]
    assert zh["answer_zh"] and zh["answer_en"] is None and zh["rubric"][0]["text_en"] is None
    turn = world["a"].turns.get(index=0)
    detail = clients["adj"].get(f"/api/turns/{turn.pk}/", {"language": "zh"}).json()
    assert detail["answer_zh"] == turn.answer_zh and detail["answer_en"] is None
    bad = clients["adj"].get(f"/api/turns/{turn.pk}/", {"language": "fr"})
    assert bad.status_code == 400 and "language" in bad.json()["error"]["fields"]


def test_turn_filters(clients, world):
    adj = clients["adj"]
    turn = world["a"].turns.get(index=0)
    rev1, rev2 = world["users"]["rev1"], world["users"]["rev2"]
    services.submit_review(turn=turn, reviewer=rev1, decision="approve", base_version=turn.version)
    services.submit_review(turn=turn, reviewer=rev2, decision="approve", base_version=turn.version)

    def ids(**params):
        return sorted((r["record_id"], r["index"]) for r in adj.get("/api/turns/", params).json()["results"])

    assert ids(status="approved") == [("med_safety_a", 0)]
    assert ids(status="draft") == [("diagnostic_workup_b", i) for i in range(4)]
    assert ids(scenario="diagnostic_workup", task_type="CR") == [("diagnostic_workup_b", 2)]
    assert ids(tier=2, task_type="IL") == [("diagnostic_workup_b", 0)]
    assert ids(reviewer="rev2", task_type="WU") == [("med_safety_a", 3)]
    assert ids(reviewer="nobody") == []
    assert ids(session=world["b"].pk, task_type="DG") == [("diagnostic_workup_b", 1)]
    # A reviewer may filter by themselves; another reviewer's name reveals nothing.
    rows = clients["rev1"].get("/api/turns/", {"reviewer": "rev1"}).json()["results"]
    assert len(rows) == 4
    assert clients["rev1"].get("/api/turns/", {"reviewer": "rev2"}).json()["results"] == []


def test_session_filters(clients, world):
    def records(**params):
        return _records(clients["admin"].get("/api/sessions/", params))

    assert records(tier=2) == ["diagnostic_workup_b"]
    assert records(scenario="med_safety") == ["med_safety_a"]
    assert records(reviewer="rev1") == ["med_safety_a"]
    assert records(status="draft") == ["diagnostic_workup_b", "med_safety_a"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "finished"}, "status"),
        ({"tier": "4"}, "tier"),
        ({"task_type": "XX"}, "task_type"),
        ({"scenario": "surgery"}, "scenario"),
        ({"session": "abc"}, "session"),
    ],
)
def test_bad_filter_values_answer_400_naming_the_parameter(clients, params, field):
    response = clients["adj"].get("/api/turns/", params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid" and list(error["fields"]) == [field]
    assert error["message"].startswith(f"{field}: ")


def test_pagination(clients, world):
    for i in range(3):
        complete_session(record_id=f"med_safety_extra_{i}")  # 5 sessions, 20 turns in all
    adj = clients["adj"]
    first = adj.get("/api/turns/", {"page_size": 8}).json()
    assert first["count"] == 20 and len(first["results"]) == 8 and first["previous"] is None
    assert "page=2" in first["next"] and "page_size=8" in first["next"]
    last = adj.get("/api/turns/", {"page_size": 8, "page": 3}).json()
    assert len(last["results"]) == 4 and last["next"] is None
    seen = [r["id"] for p in (1, 2, 3) for r in adj.get("/api/turns/", {"page_size": 8, "page": p}).json()["results"]]
    assert len(seen) == len(set(seen)) == 20
    assert len(adj.get("/api/turns/").json()["results"]) == 20  # default page size 25
    assert len(adj.get("/api/turns/", {"page_size": 1000}).json()["results"]) == 20  # capped at 100, not an error
    out_of_range = adj.get("/api/turns/", {"page": 9})
    assert out_of_range.status_code == 404 and out_of_range.json()["error"]["code"] == "not_found"
