"""Gold patient answers are bilingual: the generator keeps the Chinese answer in the gold step."""

import datetime as dt
import re

from ehr.fhir import ToolContext
from scenarios.generation import generate_session
from scenarios.models import GoldStep, Session
from scenarios.pab import export_pab, import_pab_file
from scenarios.patient import make_patient_responder, public_view
from tests.evaluation.conftest import make_sessions

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_gold_patient_steps_carry_the_chinese_answer(demo_cohort):
    responder = make_patient_responder()
    drafts = [
        generate_session(scenario="diagnostic_workup", tier=1, seed=1, index=i, patient_answer=responder).draft
        for i in range(4)
    ]
    found = [(d, t, s) for d in drafts if d for t in d.turns for s in t.steps if s.tool.startswith("patient.")]
    assert found, "diagnostic_workup L1 asks the patient"
    for draft, _, step in found:
        obs = step.observation
        assert list(obs)[:5] == ["resourceType", "tool", "language", "answer", "answer_zh"]
        assert obs["language"] == "en" and not CJK.search(obs["answer"]) and CJK.search(obs["answer_zh"])
        # It is the patient's own answer to the same question asked in Chinese.
        context = ToolContext(
            current_date=dt.date.fromisoformat(draft.current_date),
            subject_id=draft.subject_id,
            hadm_id=draft.hadm_id,
            session_id=draft.session_id,
        )
        asked_zh = responder(tool=step.tool, arguments={**step.arguments, "language": "zh"}, context=context)
        assert obs["answer_zh"] == asked_zh["answer"] and asked_zh["facts"] == obs["facts"]
        # What a model under test is shown never carries the Chinese copy.
        assert "answer_zh" not in public_view(obs)
    # Chinese gold answers that quote the patient quote the stored Chinese text.
    quoted = [t for _, t, s in found if s.observation["answer_zh"] in t.answer_zh]
    assert quoted, "no Chinese gold answer quotes the patient"


def test_stored_chinese_answers_survive_the_pab_round_trip(demo_cohort, tmp_path):
    sessions = make_sessions(n=4, seed=3)
    steps = GoldStep.objects.filter(tool__startswith="patient.", turn__session__in=sessions)
    assert steps.exists() and all(CJK.search(s.observation["answer_zh"]) for s in steps)
    key = ("turn__session__record_id", "turn__index", "idx")
    before = list(steps.order_by(*key).values_list("observation", flat=True))

    first = tmp_path / "first.jsonl"
    export_pab(out=first)
    Session.objects.all().delete()
    assert import_pab_file(path=first).ok
    after = GoldStep.objects.filter(tool__startswith="patient.").order_by(*key)
    assert list(after.values_list("observation", flat=True)) == before
    second = tmp_path / "second.jsonl"
    export_pab(out=second)
    assert second.read_bytes() == first.read_bytes()
