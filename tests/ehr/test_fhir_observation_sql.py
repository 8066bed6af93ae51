"""Observation.search's hand-written microbiology, vital-sign and omr queries: the ORM's semantics
(LIKE wildcards taken literally, chartdate when charttime is missing, every vital sign without a
code, ids past the column range), on the suite's backend."""

import datetime as dt

import pytest

from ehr.fhir import ToolContext, execute_tool
from tests.ehr.factories import ChartEventFactory, DItemFactory, MicrobiologyEventFactory, at, call_tool


def search(rec, current_date=None, **arguments):
    return call_tool(rec, "Observation.search", current_date, **arguments)


def ids(bundle):
    return [e["resource"]["id"] for e in bundle["entry"]]


def test_micro_text_code_wildcards_are_literal(rec):
    MicrobiologyEventFactory(
        subject_id=rec.subject_id, micro_specimen_id=96_100_001, test_itemid=90301, test_name="MRSA_SCREEN 100%"
    )
    MicrobiologyEventFactory(
        subject_id=rec.subject_id, micro_specimen_id=96_100_002, test_itemid=90302, test_name="MRSAXSCREEN 1000"
    )
    assert ids(search(rec, category="microbiology", code="mrsa_screen")) == ["micro-96100001-90301-1"]
    assert ids(search(rec, category="microbiology", code="100%")) == ["micro-96100001-90301-1"]
    both = search(rec, category="microbiology", code="mrsa")  # case-insensitive substring
    assert sorted(ids(both)) == ["micro-96100001-90301-1", "micro-96100002-90302-1"]


def test_micro_without_charttime_uses_chartdate_and_storedate(rec):
    MicrobiologyEventFactory(
        subject_id=rec.subject_id,
        micro_specimen_id=96_100_003,
        test_itemid=90303,
        test_name="Stool Culture",
        charttime=None,
        chartdate=at("2180-07-19 00:00"),
        storetime=None,
        storedate=at("2180-07-21 00:00"),  # stored on the session date: still pending then
    )
    obs = search(rec, category="microbiology", code="stool")["entry"][0]["resource"]
    assert obs["effectiveDateTime"] == "2180-07-19 00:00:00"
    assert obs["valueString"] == "Pending"
    later = search(rec, current_date=dt.date(2180, 7, 22), category="microbiology", code="stool")
    assert later["entry"][0]["resource"]["status"] == "final"
    assert search(rec, category="microbiology", code="stool", date_from="2180-07-20")["total"] == 0


def test_micro_by_itemid_of_test_specimen_or_organism(rec):
    for code in ("90201", "70012", "80002"):
        assert "micro-96000001-90201-1" in ids(search(rec, category="microbiology", code=code))
    assert search(rec, category="microbiology", code="99999999999999999999")["total"] == 0


def test_every_vital_sign_without_code(rec):
    # A vital by category (not in the fixed itemid list) is included; a non-vital chart item is not.
    DItemFactory(itemid=95201, label="Zz Vital By Category", category="Routine Vital Signs")
    DItemFactory(itemid=95202, label="Zz Not A Vital", category="Alarms")
    chart = {"subject_id": rec.subject_id, "hadm_id": rec.current_hadm, "charttime": at("2180-07-20 09:00")}
    ChartEventFactory(**chart, itemid=95201, valuenum=1.0)
    ChartEventFactory(**chart, itemid=95202, valuenum=2.0)
    out = search(rec, category="vital-signs", hadm_id=rec.current_hadm)
    labels = [e["resource"]["code"]["text"] for e in out["entry"]]
    assert labels[0] == "Zz Vital By Category" and "Zz Not A Vital" not in labels
    assert out["total"] == len(labels)


@pytest.mark.parametrize("big", [2**40, 2**70])  # past PostgreSQL's int4, past SQLite's 64 bits
@pytest.mark.parametrize("category", ["microbiology", "vital-signs"])
def test_ids_past_the_integer_range_find_nothing(rec, category, big):
    code = {"code": "heart rate"} if category == "vital-signs" else {}
    out = search(rec, category=category, hadm_id=big, **code)
    assert "error" in out and "Encounter" in out["error"]
    out = execute_tool(
        name="Observation.search",
        arguments={"subject_id": big, "category": category, **code},
        context=ToolContext(current_date=rec.current_date),
    )
    assert "error" in out and "Patient" in out["error"]
