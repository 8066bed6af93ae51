"""Loaders: DB sessions and frozen PhysAssistBench records give the same EvalSession; replay keys."""

import json

import pytest

from evaluation.dataset import from_sessions, session_from_record
from evaluation.replay import ReplayBook, normalise_arguments
from scenarios.models import Session
from scenarios.pab import dumps_record, session_to_record


def test_snapshot_record_and_db_give_the_same_session(sessions):
    qs = Session.objects.filter(pk=sessions[0].pk)
    from_db = from_sessions(qs).sessions[0]
    row = qs.prefetch_related("turns__steps", "turns__rubric_items").get()
    from_record = session_from_record(json.loads(dumps_record(session_to_record(row))))
    assert from_record == from_db
    assert from_db.age is not None and from_db.sex in {"male", "female"}
    assert len(from_db.turns) == 4 and all(t.rubric for t in from_db.turns)


def test_replay_normalises_arguments():
    adherence = "patient.get_medication_adherence"
    assert normalise_arguments(
        tool=adherence, arguments={"medication": " Furosemide ", "question": "How?", "session_id": "x"}
    ) == ('{"drug": "furosemide"}')
    assert normalise_arguments(tool="patient.get_social_history", arguments={"topic": None, "language": "zh"}) == "{}"
    assert (
        normalise_arguments(tool="Made.up", arguments={"x": " A ", "question": "?", "language": "zh"}) == '{"x": "a"}'
    )
    book = ReplayBook(answers={(adherence, '{"drug": "furosemide"}'): {"answer": "ok"}})
    hit = book.reply(tool="patient.get_medication_adherence", arguments={"medication": "FUROSEMIDE"}, language="en")
    assert (hit.observation, hit.hit) == ({"answer": "ok"}, True)
    miss = book.reply(tool="patient.get_medication_adherence", arguments={}, language="zh")
    assert not miss.hit and miss.observation["answer"] == "这个我不太清楚，也说不出更多了。"


def test_a_missing_language_is_refused_before_any_work(sessions):
    from evaluation.setup import EvalSetupError, check_requests

    data = from_sessions(Session.objects.filter(pk=sessions[0].pk))
    check_requests(data, languages=("en", "zh"), variants=("implicit",))
    Session.objects.get(pk=sessions[0].pk).turns.update(request_implicit_zh="", request_explicit_zh="")
    data = from_sessions(Session.objects.filter(pk=sessions[0].pk))
    with pytest.raises(EvalSetupError, match="no zh request"):
        check_requests(data, languages=("zh",), variants=("implicit", "explicit"))


def test_streamed_sessions_hold_references_and_keep_the_checksum(sessions):
    """Issue 37 item 3: a database dataset keeps one light reference per session (no gold) and loads a
    session when asked; its checksum is byte for byte the old one (``asdict`` of the whole tuple), with
    and without ``limit`` (applied in the query)."""
    import dataclasses
    import hashlib
    import json

    from evaluation.session_stream import SessionRef, SessionStream

    def old_checksum(chosen):
        payload = [dataclasses.asdict(s) for s in chosen]
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    data = from_sessions(Session.objects.all())
    assert isinstance(data.sessions, SessionStream)
    refs = data.entries()
    assert all(isinstance(r, SessionRef) for r in refs) and len(refs) == len(sessions)
    loaded = list(data.sessions)  # streamed a chunk at a time, in record_id order
    assert [s.session_id for s in loaded] == [r.session_id for r in refs]
    assert [len(s.turns) for s in loaded] == [r.n_turns for r in refs]
    assert refs[1].load() == loaded[1]
    assert data.checksum == old_checksum(loaded)
    limited = from_sessions(Session.objects.all(), limit=2)
    assert [r.session_id for r in limited.entries()] == [s.session_id for s in loaded[:2]]
    assert limited.checksum == old_checksum(loaded[:2]) == data.limited(2).checksum


def test_a_snapshot_is_streamed_like_the_database(sessions, settings, tmp_path):
    """Issue 37 item 3 for frozen sets: a snapshot dataset keeps one reference per frozen item and parses a record
    while a job plays it; the sessions equal those of the frozen lines read whole, and --resume's selection streams."""
    from annotations.snapshots.selectors import iter_items
    from annotations.snapshots.services import create_snapshot
    from evaluation.dataset import from_snapshot
    from evaluation.session_stream import SessionRef, SessionStream
    from evaluation.setup import dataset_for_run
    from scenarios.models import Turn
    from tests.annotations.conftest import approve_as_is, make_user

    settings.VAR_DIR = tmp_path
    approve_as_is(Turn.objects.filter(session__in=sessions))
    snapshot = create_snapshot(user=make_user("root", "admin"))
    data = from_snapshot(snapshot)
    assert isinstance(data.sessions, SessionStream) and all(isinstance(r, SessionRef) for r in data.entries())
    whole = [session_from_record(json.loads(item.record_json)) for item in iter_items(snapshot=snapshot)]
    assert list(data.sessions) == whole and data.entries()[1].load() == whole[1]
    assert data.checksum == snapshot.content_sha256 and len(data.sessions) == len(sessions)
    # An older snapshot without a stored checksum gets the one computed over its records, as before.
    # (a ready snapshot cannot be changed: the attribute is blanked in memory only)
    from evaluation.dataset import content_checksum

    stored, snapshot.content_sha256 = snapshot.content_sha256, ""
    assert from_snapshot(snapshot).checksum == content_checksum(whole)
    snapshot.content_sha256 = stored

    ids = [whole[2].session_id, whole[0].session_id]
    manifest = {"dataset": {"source": "snapshot", "label": snapshot.label, "session_ids": ids}}
    chosen = dataset_for_run(manifest)
    assert isinstance(chosen.sessions, SessionStream)
    assert list(chosen.sessions) == [whole[0], whole[2]]  # snapshot order, as before
