"""Issue 32, item 1: a turn's gold answer equals its ``prepare_to_answer`` observation, in both languages.

Cases: the demo as ``manage.py demo --no-serve`` prepares it (generation, the demo's own reviews and
adjudications, some of which edit answers) frozen and exported (issue 32 found 6 of 20 exported
sessions contradicting themselves); a release-shaped record with ``answer_list_zh``
(tests/scenarios/data/pab_release_sample.jsonl) edited in both languages; a row changed behind the
services' back, which ``make_snapshot`` must refuse, naming the turn.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotations import services
from annotations.models import Revision, Snapshot
from scenarios.models import GoldStep, Session
from scenarios.pab import import_pab_file
from tests.annotations.conftest import make_user
from tests.annotations.snapshots.conftest import approve_directly

SAMPLE = Path(__file__).parents[2] / "scenarios" / "data" / "pab_release_sample.jsonl"


def _assistant_answers(messages: list) -> list[str]:
    # One assistant answer per turn: the last assistant message of each user/assistant segment.
    answers: list[str] = []
    expecting = False
    for m in messages:
        if isinstance(m, dict) and m["role"] == "user":
            answers.append("")
            expecting = True
        elif isinstance(m, dict) and m["role"] == "assistant" and expecting:
            answers[-1] = m["content"]
    return answers


def _contradictions(record: dict) -> list[str]:
    out = []
    for lang, messages, steps_field in (("en", "messages", "answer_list"), ("zh", "messages_zh", "answer_list_zh")):
        if steps_field not in record and lang == "zh":
            continue  # no Chinese step list: the Chinese run reads answer_list (see pab-protocol.md)
        answers = _assistant_answers(record[messages])
        for i, steps in enumerate(record[steps_field]):
            assert steps[-1]["action"]["name"] == "prepare_to_answer"
            if steps[-1]["observation"] != answers[i]:
                out.append(f"{record['id']} turn {i} {lang}")
    return out


def _export(tmp_path: Path) -> list[dict]:
    call_command("make_snapshot", "--quiet", stdout=StringIO())
    out = tmp_path / "export"
    call_command("export_set", "--out", str(out), "--format", "pab", "--quiet", stdout=StringIO())
    records = []
    for path in sorted(out.glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return records


@pytest.mark.django_db(transaction=False)
def test_demo_snapshot_export_never_contradicts_itself(demo_cohort, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    call_command("demo", "--no-serve", "--quiet", stdout=StringIO())
    records = [r for r in _export(tmp_path) if "prepare_to_answer" in json.dumps(r["answer_list"])]
    assert len(records) >= 15  # the fully reviewed demo sessions, minus those with a rejected turn
    assert [c for r in records for c in _contradictions(r)] == []
    # The demo's adjudications did edit answers (6 turns contradicted themselves before the fix).
    assert Revision.objects.filter(field__in=("answer_en", "answer_zh"), kind="adjudication").exists()


def test_both_languages_follow_an_edit_of_an_imported_record(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    result = import_pab_file(path=SAMPLE, replace=False)
    assert result.ok, result
    boss = make_user("boss", "admin")
    session = Session.objects.get(record_id="med_safety_0")
    turn = session.turns.get(index=1)
    services.save_turn_edit(
        turn=turn,
        user=boss,
        changes={"answer_en": "Spironolactone 25 mg daily.", "answer_zh": "螺内酯 25 mg 每日一次。"},
        base_version=turn.version,
    )
    turn.refresh_from_db()
    assert turn.steps.order_by("idx").last().observation == "Spironolactone 25 mg daily."
    assert turn.extra["pab_answer_list_zh"][-1]["observation"] == "螺内酯 25 mg 每日一次。"
    approve_directly(session)
    records = _export(tmp_path)
    assert [r["id"] for r in records] == ["med_safety_0"]
    assert _contradictions(records[0]) == []


def test_make_snapshot_refuses_a_contradicting_turn_and_names_it(db, settings, tmp_path):
    from tests.scenarios.factories import complete_session

    settings.VAR_DIR = tmp_path / "var"
    session = complete_session(record_id="med_safety_7")
    approve_directly(session)
    # Behind the services' back (raw SQL, an old import): only the observation changes.
    GoldStep.objects.filter(turn__session=session, turn__index=2, tool="prepare_to_answer").update(
        observation="Creatinine 9.9 mg/dL."
    )
    with pytest.raises(CommandError, match=r"session med_safety_7 turn 3 \(index 2\): the English answer differs"):
        call_command("make_snapshot", "--quiet", stdout=StringIO())
    assert not Snapshot.objects.exists()


def test_import_takes_the_answer_as_the_source_of_truth(db, tmp_path):
    """A record whose prepare_to_answer observations differ from its conversation (both languages) is
    stored consistent: the observation follows the answer (the conversation is what reviewers edit)."""
    record = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[1])
    record["answer_list"][0][-1]["observation"] = "stale"
    record["answer_list_zh"][0][-1]["observation"] = "过时"
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    result = import_pab_file(path=path)
    assert result.ok and result.aligned == [f"{record['id']} turn 1 (en)", f"{record['id']} turn 1 (zh)"]
    turn = Session.objects.get(record_id=record["id"]).turns.get(index=0)
    assert turn.steps.order_by("idx").last().observation == turn.answer_en != "stale"
    assert turn.extra["pab_answer_list_zh"][-1]["observation"] == turn.answer_zh != "过时"
