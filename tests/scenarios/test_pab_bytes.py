"""import_pab → export_pab byte for byte (issue 33): field order and nested key order as read.

Cases: every release-shaped record in the tests (``data/pab_sample.jsonl``, ``data/pab_release_sample.jsonl``,
the hand-written contract record of ``release_contract_record.py``), and one written here with the release's
own habits (json.dumps defaults, unsorted nested keys, ``5.0``, ``22444183.0``, Chinese as text, an unknown
field), none of them written by the exporter.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from scenarios.models import Session
from tests.scenarios import release_contract_record
from tests.scenarios.pab_helpers import SAMPLE

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data"


def _release_habits_line() -> bytes:
    rec = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    rec["id"] = rec["session_id"] = "med_safety_habits"
    rec["hadm_id"] = 20002001.0  # pandas' spelling
    # nested keys in the release's order (not sorted), floats as Python writes them
    rec["answer_list"][0][0]["observation"] = {
        "resourceType": "Bundle",
        "type": "searchset",
        "total": 1,
        "entry": [
            {"resource": {"resourceType": "Observation", "id": "lab-1", "valueQuantity": {"value": 5.0, "unit": "mg"}}}
        ],
        "_fhir_resource_type": "Observation",
    }
    rec["persona_config"] = {
        "info_completeness": "full",
        "health_literacy": "high",
        "anxiety_level": "low",
        "adherence": "good",
    }
    rec["zz_unknown_first"] = {"b": 1, "a": [2.50, "阿哌沙班"]}
    order = ["zz_unknown_first", *[k for k in rec if k != "zz_unknown_first"]]
    return (json.dumps({k: rec[k] for k in order}, ensure_ascii=False) + "\n").encode("utf-8")


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines(keepends=True) if line.strip()]


def _export(tmp_path: Path, *extra: str) -> list[bytes]:
    out = tmp_path / "out.jsonl"
    call_command("export_pab", "--out", str(out), "--quiet", *extra)
    return _lines(out)


def _import(path: Path) -> None:
    call_command("import_pab", str(path), "--quiet", stdout=StringIO())


@pytest.mark.parametrize("name", ["pab_sample.jsonl", "pab_release_sample.jsonl", "contract", "habits"])
def test_unedited_records_come_back_byte_for_byte(tmp_path, name):
    if name == "contract":
        path = release_contract_record.write_jsonl(tmp_path / "contract.jsonl")
    elif name == "habits":
        path = tmp_path / "habits.jsonl"
        path.write_bytes(_release_habits_line())
    else:
        path = DATA / name
    _import(path)
    original = sorted(_lines(path), key=lambda line: json.loads(line)["id"])
    assert _export(tmp_path, "--no-extension") == original
    # with PhysReview's extension: the same bytes, our field appended last and nothing else changed
    for mine, theirs in zip(_export(tmp_path), original, strict=True):
        head, _sep, tail = mine.rpartition(b', "physreview": ')
        assert head + b"}\n" == theirs and tail.startswith(b"{")


def test_an_edited_field_is_rendered_and_the_others_keep_their_bytes(tmp_path):
    path = tmp_path / "habits.jsonl"
    path.write_bytes(_release_habits_line())
    _import(path)
    session = Session.objects.get(record_id="med_safety_habits")
    session.persona = {**session.persona, "anxiety_level": "high"}
    session.save()
    (line,) = _export(tmp_path, "--no-extension")
    before = json.loads(path.read_bytes())
    after = json.loads(line)
    assert list(after) == list(before)  # field order as read
    assert after["persona_config"]["anxiety_level"] == "high"
    text = line.decode("utf-8")
    assert '"hadm_id": 20002001.0' in text and '"value": 5.0, "unit": "mg"' in text
    assert text.startswith('{"zz_unknown_first": {"b": 1, "a": [2.5, "阿哌沙班"]}, "id": "med_safety_habits"')
