"""Gold audit (issue 13): re-executed gold calls, traced numbers, request premises, the command."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotations.models import Snapshot, SnapshotItem
from ehr.fhir import ToolContext, execute_tool
from scenarios.audit import audit_sessions
from scenarios.audit.facts import compare, result_facts
from scenarios.audit.numbers import Pool, tokenize, untraced
from scenarios.audit.premises import Lexicon, find_premises
from scenarios.models import GoldAudit, GoldStep, Session
from tests.ehr.factories import build_record
from tests.scenarios.audit_fixtures import add_defects, clean_session, context_for, run_step
from tests.scenarios.factories import TurnFactory
from tests.scenarios.pab_helpers import SAMPLE

pytestmark = pytest.mark.django_db


def _findings(report) -> list[tuple[int, dict]]:
    return [(t.index, f) for s in report.sessions for t in s.turns for f in t.findings]


# --- the clean session and the three defects ---------------------------------------------------------


def test_gold_made_by_the_tools_reproduces_with_no_finding():
    session = clean_session()
    report = audit_sessions(sessions=[session], bounds="strict")
    totals = report.totals
    assert totals["calls"] == 15 and totals["reproduced"] == 15 and totals["reproduced_share"] == 1.0
    assert totals["leaks"] == 0 and totals["differs"] == 0
    # 4 prepare_to_answer, 1 patient answer, 1 simulated write
    assert totals["not_reexecuted"] == 6
    assert _findings(report) == []
    rows = GoldAudit.objects.filter(turn__session=session).order_by("turn__index")
    assert [r.n_calls for r in rows] == [1, 2, 12, 0]
    assert [r.findings for r in rows] == [[], [], [], []]
    assert all(r.bounds == "strict" for r in rows)
    kinds = {c["tool"]: c["status"] for r in rows for c in r.calls}
    assert kinds["patient.get_medication_adherence"] == kinds["ServiceRequest.create"] == "not_reexecuted"
    assert kinds["prepare_to_answer"] == "not_reexecuted"


def test_the_three_defects_and_nothing_else():
    session = clean_session()
    touched = add_defects(session)
    report = audit_sessions(sessions=[session], bounds="strict")
    found = _findings(report)
    assert [(i, f["kind"]) for i, f in found] == [(0, "differs"), (1, "untraced"), (1, "premise")]

    (_, differs), (_, number), (_, premise) = found
    assert differs["step"] == 0 and differs["tool"] == "Observation.search"
    assert differs["differences"] == [
        {
            "kind": "changed",
            "resource": touched["edited_resource"],
            "fact": "value",  # canonical facts (issue 33): the value; its unit is a fact of its own
            "stored": "0.8 mg/dL",
            "now": "0.9 mg/dL",
        }
    ]
    assert number["number"] == "6.3 mEq/L" and number["reason"] == "value"
    assert number["places"] == [{"field": "answer", "language": "en"}, {"field": "answer", "language": "zh"}]
    assert premise["reason"] == "dose_mismatch" and premise["stated"] == "warfarin 2.5 mg"
    assert premise["record"].startswith("Warfarin 5 mg PO")  # the record value beside the premise
    assert premise["forms"] == [
        "request_explicit_en",
        "request_implicit_en",
        "request_explicit_zh",
        "request_implicit_zh",
    ]
    totals = report.totals
    assert (totals["differs"], totals["untraced"], totals["premises"], totals["leaks"]) == (1, 1, 1, 0)
    assert totals["findings"] == 3 and totals["turns_with_findings"] == 2


def test_a_rerun_replaces_the_rows():
    session = clean_session()
    add_defects(session)
    audit_sessions(sessions=[session], bounds="strict")
    step = GoldStep.objects.get(turn__session=session, turn__index=0, idx=0)
    step.observation = execute_tool(name=step.tool, arguments=step.arguments, context=context_for(session))
    step.save()
    audit_sessions(sessions=[session], bounds="strict")
    assert GoldAudit.objects.filter(turn__session=session).count() == 4
    assert GoldAudit.objects.get(turn__session=session, turn__index=0).findings == []
    assert GoldAudit.objects.get(turn__session=session, turn__index=1).n_premises == 1


# --- leaks and bounds ---------------------------------------------------------------------------------


def test_release_gold_reproduces_under_release_and_leaks_under_strict():
    session = clean_session(bounds="release")
    release = audit_sessions(sessions=[session], bounds="release")
    # only Observation resources count as leaks under release; the release's vitals search has no date bound
    # (semantics file §1, issue 33), so gold made that way holds the heart rate of the current date: a leak
    assert (release.totals["calls"], release.totals["reproduced"], release.totals["leaks"]) == (15, 14, 1)
    (leak,) = [c for t in release.sessions[0].turns for c in t.calls if c["status"] == "leak"]
    assert leak["leaks"][0]["value"] == "2180-07-21 08:00:00"

    strict = audit_sessions(sessions=[session], bounds="strict")
    by_tool = {
        c["tool"]: c for r in strict.sessions[0].turns for c in r.calls if c["step"] and c["status"] != "not_reexecuted"
    }
    notes = by_tool["DocumentReference.search"]
    assert notes["status"] == "leak"
    assert {"fact": "date", "value": "2180-07-24 00:00:00"}.items() <= notes["leaks"][0].items()
    observations = [c for t in strict.sessions[0].turns for c in t.calls if c["tool"] == "Observation.search"]
    assert [c["status"] for c in observations if c["arguments"].get("category") != "vital-signs"] == ["reproduced"] * (
        len(observations) - 1
    )
    assert [c["status"] for c in observations if c["arguments"].get("category") == "vital-signs"] == ["leak"]
    assert GoldAudit.objects.filter(turn__session=session, bounds="strict").count() == 4


def test_an_observation_from_after_the_cutoff_is_a_leak_under_both_bounds():
    rec = build_record()
    session = clean_session(rec)
    turn = TurnFactory(session=session, index=4, task_type="IL")
    later = ToolContext(current_date=dt.date(2180, 7, 23), subject_id=rec.subject_id)
    run_step(
        turn, 0, "Observation.search", {"subject_id": rec.subject_id, "code": "creatinine", "_count": 1}, context=later
    )
    turn.answer_en = turn.answer_zh = ""
    turn.save()
    for bounds in ("strict", "release"):
        report = audit_sessions(sessions=[session], bounds=bounds)
        (finding,) = [f for i, f in _findings(report) if i == 4]
        assert finding["kind"] == "leak"
        assert (
            finding["leaks"][0]["value"] == "2180-07-21 06:00:00" and finding["leaks"][0]["fact"] == "effectiveDateTime"
        )
        assert finding["n_differences"] >= 1  # and the re-execution no longer returns it


# --- facts ------------------------------------------------------------------------------------------


def test_facts_ignore_presentation():
    obs = {
        "resourceType": "Bundle",
        "total": 2,
        "entry": [
            {
                "resource": {
                    "resourceType": "Observation",
                    "id": "lab-1",
                    "code": {"coding": [{"system": "s", "code": "1", "display": "Creatinine"}], "text": "Creatinine"},
                    "valueQuantity": {"value": 0.90, "unit": "mg/dL"},
                    "effectiveDateTime": "2180-07-19 06:00:00",
                }
            },
            {"resource": {"resourceType": "Observation", "id": "lab-2", "valueString": "pending  result"}},
        ],
    }
    same = json.loads(json.dumps(obs))
    same["total"] = 9
    same["entry"].reverse()
    first = same["entry"][1]["resource"]
    first["code"] = {"text": "Serum creatinine", "coding": [{"code": "1", "system": "s", "display": "Cr"}]}
    first["valueQuantity"] = {"unit": "mg/dL", "value": 0.9}
    same["entry"][0]["resource"]["valueString"] = "pending result"
    assert compare(stored=result_facts(obs), fresh=result_facts(same)) == []

    same["entry"][0]["resource"]["id"] = "lab-3"
    first["effectiveDateTime"] = "2180-07-19 07:00:00"
    described = [d.describe() for d in compare(stored=result_facts(obs), fresh=result_facts(same))]
    assert described == [
        "Observation/lab-1 effectiveDateTime: 2180-07-19 06:00:00 → 2180-07-19 07:00:00",
        "Observation/lab-2 stored but not returned now",
        "Observation/lab-3 returned now but not stored",
    ]


# --- numbers ------------------------------------------------------------------------------------------


def _pool(*texts: str, json_values: tuple = ()) -> Pool:
    pool = Pool()
    for t in texts:
        pool.add_text(t)
    for v in json_values:
        pool.add_json(v)
    return pool


def test_numbers_tolerate_formatting_and_check_units():
    pool = _pool(
        json_values=(
            {"valueQuantity": {"value": 0.9, "unit": "mg/dL"}},
            {"dose": 1000},
            {"value": 5.9, "unit": "mmol/L"},
        )
    )
    assert untraced(text="creatinine 0.90 mg/dL, dose 1,000 mg", pool=pool) == []
    (miss,) = untraced(text="potassium 5.9 mEq/L", pool=pool)
    assert (miss.text, miss.reason, miss.record_units) == ("5.9 mEq/L", "unit", ("mmol/l",))
    assert [m.text for m in untraced(text="creatinine 0.8 mg/dL", pool=pool)] == ["0.8 mg/dL"]


def test_non_facts_are_not_numbers():
    pool = _pool("Observation at 2180-07-19 06:00:00")
    text = (
        "1. First point\n2) second point: pain scale 0-10, turn 2, step 3, 第2轮, order rx-1000097, ICD I4891, "
        "HbA1c, on 2180-07-19 06:00, in 2180"
    )
    assert untraced(text=text, pool=pool) == []
    misses = untraced(text="on 2180-07-18, at 2180-07-19 07:00, in 2179", pool=pool)
    assert [(m.text, m.reason) for m in misses] == [
        ("2180-07-18", "date"),
        ("2180-07-19 07:00", "time"),
        ("2179", "value"),
    ]
    assert [n.value for n in tokenize("肌酐1.9 mg/dL，年龄60岁").numbers] == [Decimal("1.9"), Decimal("60")]


def test_declared_derivations_ground_their_numbers():
    session = clean_session()
    turn = session.turns.get(index=2)
    turn.answer_en += " CrCl 44.5 mL/min by (140 - 62) × 70 kg / (72 × 2)."
    turn.save()
    report = audit_sessions(sessions=[session], bounds="strict")
    (index, finding), *rest = _findings(report)
    assert index == 2 and [finding["number"], *(f["number"] for _, f in rest)] == ["44.5 mL/min", "140", "70 kg", "72"]
    turn.derivations = [
        *turn.derivations,
        {
            "name": "cockcroft_gault",
            "formula": "(140 - age) × weight / (72 × creatinine)",
            "inputs": {"age": 62, "weight_kg": 70, "creatinine_mg_dl": 2},
            "constants": {"age_base": 140.0, "divisor": 72.0},
            "result": 44.5,
            "unit": "mL/min",
        },
    ]
    turn.save()
    assert _findings(audit_sessions(sessions=[session], bounds="strict")) == []


# --- premises -----------------------------------------------------------------------------------------

LEX = Lexicon(
    drugs={"furosemide": "furosemide", "amiodarone": "amiodarone", "warfarin": "warfarin", "华法林": "Warfarin"},
    labs={"creatinine": "creatinine", "potassium": "potassium", "肌酐": "Creatinine"},
    short_labs={"K": "k"},
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Increase furosemide from 40 mg to 80 mg?", [("dose", "furosemide", "40", "mg")]),
        ("Order amiodarone 200 mg daily.", []),
        ("Should we continue furosemide 40 mg IV?", [("dose", "furosemide", "40", "mg")]),
        (
            "Creatinine of 2.1 today, K 5.9 — hold lisinopril?",
            [("lab", "creatinine", "2.1", None), ("lab", "k", "5.9", None)],
        ),
        ("Keep potassium above 4.0.", []),
        ("Creatinine over the last 3 days?", []),
        (
            "患者正在服用华法林2.5 mg，肌酐为1.9",
            [("dose", "Warfarin", "2.5", "mg"), ("lab", "Creatinine", "1.9", None)],
        ),
    ],
)
def test_premises_are_read_from_the_request(text, expected):
    found = [
        (p.kind, p.lookup, f"{p.value:f}", p.unit) for p in find_premises(text=text, lexicon=LEX) if p.kind != "date"
    ]
    assert found == expected


# Issue 33's English phrasings (its list: "instead of X", "from X to Y", "currently on X", "increase/reduce …
# to", "was given X"), written for this test; the proposal in the same sentence stays a proposal.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Order warfarin 5 mg daily instead of 2.5 mg.", [("dose", "warfarin", "2.5", "mg")]),
        ("Please write warfarin 5 mg rather than the 2.5 mg.", [("dose", "warfarin", "2.5", "mg")]),
        ("Reduce furosemide from 80 mg to 40 mg.", [("dose", "furosemide", "80", "mg")]),
        ("She is currently on warfarin 2.5 mg; renew it.", [("dose", "warfarin", "2.5", "mg")]),
        ("He was given 2.5 mg of warfarin last night; order the next dose.", [("dose", "warfarin", "2.5", "mg")]),
        ("Increase the warfarin to 7.5 mg.", []),
        ("Switch from amiodarone to warfarin 5 mg.", []),
        ("Start warfarin 5 mg in place of 2 mg.", [("dose", "warfarin", "2", "mg")]),
    ],
)
def test_english_dose_premises(text, expected):
    found = [
        (p.kind, p.lookup, f"{p.value:f}", p.unit) for p in find_premises(text=text, lexicon=LEX) if p.kind != "date"
    ]
    assert found == expected


def test_lab_and_date_premises_are_checked_against_the_record():
    session = clean_session()
    turn = session.turns.get(index=2)
    turn.request_explicit_en = (
        "Creatinine was 3.5 on 2180-07-20; what changed since 2179-01-01, and what about 2180-07-25?"
    )
    turn.request_implicit_en = turn.request_explicit_zh = turn.request_implicit_zh = ""
    turn.save()
    findings = [f for _, f in _findings(audit_sessions(sessions=[session], bounds="strict"))]
    assert [(f["reason"], f["stated"]) for f in findings] == [
        ("lab_mismatch", "Creatinine 3.5"),
        ("date_no_record", "2179-01-01"),
        ("date_after_cutoff", "2180-07-25"),
    ]
    assert findings[0]["record"].startswith("latest Creatinine 2 mg/dL on 2180-07-20 23:30")


# --- the command ------------------------------------------------------------------------------------


def test_command_json_shape_and_exit_status():
    session = clean_session()
    add_defects(session)
    out = StringIO()
    call_command("audit_gold", "--sessions", session.record_id, "--json", "--quiet", stdout=out)  # no error: exit 0
    doc = json.loads(out.getvalue())
    assert set(doc) == {"bounds", "ran_at", "totals", "sessions"}
    assert doc["bounds"] == "strict" and doc["totals"]["findings"] == 3
    (s,) = doc["sessions"]
    assert s["record_id"] == session.record_id and [t["turn"] for t in s["turns"]] == [0, 1, 2, 3]
    assert {"counts", "calls", "findings", "turn_id"} <= set(s["turns"][0])
    assert {f["kind"] for t in s["turns"] for f in t["findings"]} == {"differs", "untraced", "premise"}


def test_command_table_and_totals():
    session = clean_session(bounds="release")
    out = StringIO()
    call_command("audit_gold", "--sessions", session.session_id, "--bounds", "release", "--quiet", stdout=out)
    text = out.getvalue()
    assert f"{session.record_id} (current date 2180-07-21)" in text
    assert "gold audit (release bounds): 1 session(s), 4 turn(s); EHR calls 14/15 reproduced (93.3%)" in text
    assert "1 leak(s)" in text  # the current date's heart rate (see above)


def test_command_bad_arguments_fail_with_a_message():
    clean_session()
    with pytest.raises(CommandError) as exc:
        call_command("audit_gold", "--sessions", "no_such_session", "--quiet")
    assert exc.value.returncode == 1 and "unknown session(s): no_such_session" in str(exc.value)
    with pytest.raises(CommandError, match="snapshot 'v7' does not exist"):
        call_command("audit_gold", "--snapshot", "v7", "--quiet")
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("audit_gold", "--bounds", "loose", "--quiet")
    assert not GoldAudit.objects.exists()


def test_command_audits_the_sessions_of_a_snapshot():
    session, other = clean_session(), clean_session(build_record())
    snap = Snapshot.objects.create(version=1, label="v1")
    SnapshotItem.objects.create(
        snapshot=snap,
        record_id=session.record_id,
        session_pk=session.pk,
        scenario="med_safety",
        tier=1,
        source="generated",
        n_turns=4,
        record_json="{}",
        flat_json="{}",
        sha256="0" * 64,
    )
    Snapshot.objects.filter(pk=snap.pk).update(status="ready")
    out = StringIO()
    call_command("audit_gold", "--snapshot", "v1", "--quiet", stdout=out)
    assert "1 session(s), 4 turn(s)" in out.getvalue()
    assert GoldAudit.objects.filter(turn__session=session).count() == 4
    assert not GoldAudit.objects.filter(turn__session=other).exists()


def test_import_pab_runs_the_audit(capsys):
    call_command("import_pab", str(SAMPLE))
    out = capsys.readouterr().out
    assert "gold audit (strict bounds): 3 session(s)" in out
    imported = Session.objects.filter(record_id__in=["med_safety_0", "diagnostic_workup_3", "discharge_planning_7"])
    assert GoldAudit.objects.filter(turn__session__in=imported).count() == sum(s.turns.count() for s in imported)


# Issue 33: numbers of guideline thresholds and score points, cases written for this test.
@pytest.mark.parametrize(
    ("text", "number", "entry"),
    [
        (
            "Apixaban dose reduction needs two of age ≥80, weight ≤60 kg, creatinine ≥1.5 mg/dL.",
            "60 kg",
            "apixaban_dosing",
        ),
        ("Avoid apixaban if CrCl is 15–29 mL/min without review.", "29 mL/min", "apixaban_dosing"),
        ("CHA₂DS₂-VASc: age ≥75 scores 2 points.", "75", "cha2ds2_vasc"),
        ("Her weight is 60 kg.", "60 kg", None),  # no entry named in the sentence: a patient value, untraced
        ("Apixaban was given at 7 mg.", "7 mg", None),  # named, but not one of the label's constants
    ],
)
def test_threshold_numbers_are_traced_to_the_knowledge_table(text, number, entry):
    from scenarios.audit import knowledge

    (token,) = [t for t in tokenize(text).numbers if f"{t.text} {t.unit or ''}".strip() == number]
    found = knowledge.trace(text=text, number=token)
    assert (found.key if found else None) == entry
