"""The review screen's EHR evidence: vitals, cultures and note sections bounded by the session's current date."""

import datetime as dt

import pytest
from django.db.models import Count

from ehr.fhir.codes import VITAL_ITEMIDS
from ehr.fhir.context import visibility_cutoff
from ehr.models import Admission, ChartEvent, DischargeNote, MicrobiologyEvent, RadiologyNote
from ehr.selectors import admission_evidence

pytestmark = pytest.mark.django_db


def _busiest_admission() -> Admission:
    hadm_id = (
        ChartEvent.objects.filter(itemid__in=VITAL_ITEMIDS)
        .values("hadm_id")
        .annotate(n=Count("*"))
        .order_by("-n", "hadm_id")
        .first()["hadm_id"]
    )
    return Admission.objects.get(hadm_id=hadm_id)


def test_evidence_holds_only_what_was_charted_before_the_cutoff(demo_cohort):
    admission = _busiest_admission()
    day = (admission.admittime + dt.timedelta(days=1)).date()
    cutoff = visibility_cutoff(day)
    evidence = admission_evidence(hadm_id=admission.hadm_id, current_date=day)
    points = [p for series in evidence["vitals"] for p in series.points]
    expected = ChartEvent.objects.filter(hadm_id=admission.hadm_id, itemid__in=VITAL_ITEMIDS, charttime__lt=cutoff)
    assert points and len(points) == expected.count()
    assert all(p.charttime < cutoff for p in points)
    assert all(s.label and not s.label.startswith("item ") for s in evidence["vitals"])
    assert all((e.charttime or e.chartdate) < cutoff for e in evidence["micro"])
    for note in evidence["notes"]:
        assert note.charttime < cutoff and note.sections


def test_notes_appear_once_written_and_are_split_into_sections(demo_cohort):
    note = DischargeNote.objects.exclude(hadm_id=None).order_by("note_id").first() or RadiologyNote.objects.first()
    admission = Admission.objects.get(hadm_id=note.hadm_id)
    # visible iff written before 00:00 of the current date: not on the day it is written, from the next day on
    before = admission_evidence(hadm_id=admission.hadm_id, current_date=note.charttime.date())
    after = admission_evidence(hadm_id=admission.hadm_id, current_date=note.charttime.date() + dt.timedelta(days=1))
    assert note.note_id not in {n.note_id for n in before["notes"]}
    written = next(n for n in after["notes"] if n.note_id == note.note_id)
    assert len(written.sections) > 1 and all(s.text for s in written.sections)


def test_culture_results_follow_the_cutoff(demo_cohort):
    event = MicrobiologyEvent.objects.exclude(hadm_id=None).order_by("chartdate", "microevent_id").first()
    admission = Admission.objects.get(hadm_id=event.hadm_id)
    seen = (event.charttime or event.chartdate).date()
    early = admission_evidence(hadm_id=admission.hadm_id, current_date=seen)  # the day it is taken: not yet
    late = admission_evidence(hadm_id=admission.hadm_id, current_date=seen + dt.timedelta(days=1))
    assert event.microevent_id not in {e.microevent_id for e in early["micro"]}
    assert event.microevent_id in {e.microevent_id for e in late["micro"]}


def test_review_screen_reuses_the_rendered_evidence_of_the_same_admission_and_date(
    client, demo_cohort, django_assert_max_num_queries
):
    from annotations import services
    from tests.annotations.conftest import make_user
    from tests.evaluation.conftest import make_sessions

    reviewer = make_user("dr_cache", "reviewer")
    session = make_sessions(n=1)[0]
    services.assign(session=session, reviewer=reviewer, by=None)
    client.force_login(reviewer)
    first, second = session.turns.order_by("index")[:2]
    cold = client.get(f"/review/turns/{first.pk}/")
    assert cold.status_code == 200 and b'id="evidence-labs"' in cold.content
    with django_assert_max_num_queries(100) as captured:
        warm = client.get(f"/review/turns/{second.pk}/")
    evidence_tables = ("mimic_labevents", "mimic_chartevents", "mimic_microbiologyevents", "mimic_prescriptions")
    assert not [q for q in captured.captured_queries if any(t in q["sql"] for t in evidence_tables)]
    start = cold.content.index(b'id="evidence"')
    assert cold.content[start : cold.content.index(b"</section>", start)] in warm.content
