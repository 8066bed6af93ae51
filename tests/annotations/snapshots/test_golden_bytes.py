"""Golden bytes of the exporters: fixed frozen items → fixed files (sha256 and size of each).

Guards performance work on :func:`annotations.snapshots.exporters.write_files`: any change to the bytes
written (key order, escaping, row order, Parquet layout, row groups) fails here. The expected digests
were recorded with the exporters as they were before the single-pass rewrite; the Parquet digest also
depends on the pinned pyarrow version (``created_by`` names it), so the test states that version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pyarrow
import pytest

from annotations.snapshots.exporters import FORMATS, parquet, write_files
from annotations.snapshots.rows import flat_source_json
from scenarios.pab import dumps_record

PYARROW_VERSION = "26.0.1"  # the pinned version the Parquet digest was recorded with


@dataclass
class Item:
    record_id: str
    scenario: str
    source: str
    record_json: str
    flat_json: str
    review: dict


def _record(k: int) -> dict[str, Any]:
    """A small but awkward session: Chinese, quotes and control characters, None subtypes, a verbatim
    conversation segment with extra messages, fewer safety flags than rubric items, unsorted argument keys."""
    n = 2 + k % 3
    scenario = ("med_safety", "diagnostic_workup", "treatment_response")[k % 3]
    en_q = [f'Turn {i}: what is "K+" for pt {k}?\tplease\n' for i in range(n)]
    zh_q = [f"第{i}轮：患者{k}的血钾是多少？" for i in range(n)]
    en_a = [f"K+ 4.{i} mmol/L (\\ normal) é ✓ {k}" for i in range(n)]
    zh_a = [f"血钾 4.{i} mmol/L，正常。" for i in range(n)]

    def conv(q: list[str], a: list[str]) -> list[Any]:
        out: list[Any] = []
        for i in range(n):
            if i:
                out.append("=" * 50)
            segment = [{"role": "user", "content": q[i]}, {"role": "assistant", "content": a[i]}]
            if i == 1:  # a verbatim segment: a tool message and two assistant messages, the last one counts
                segment = [
                    {"role": "user", "content": q[i]},
                    {"role": "assistant", "content": "thinking"},
                    {"role": "tool", "content": {"z": 1, "a": [1, 2]}},
                    {"role": "assistant", "content": a[i]},
                ]
            out.extend(segment)
        return out

    steps = [
        [
            {
                "action": {
                    "name": "Observation.search",
                    "arguments": {"patient": 100 + k, "code": "potassium", "z": None},
                },
                "observation": {"resourceType": "Bundle", "total": i, "entry": [{"v": 1.5, "u": "mmol/L"}]},
                "dependency_list": [],
                "idx": 0,
            },
            {
                "action": {"name": "prepare_to_answer", "arguments": {}},
                "observation": "ok",
                "dependency_list": [0],
                "idx": 1,
            },
        ][: 1 + i % 2]
        for i in range(n)
    ]
    labels = ["Information Lookup", "Data Gathering", "Clinical Reasoning", "Write/Update"]
    physreview = {
        "format": 1,
        "patient_memory": {"facts": [{"id": "f1", "text": "人"}]},
        "turns": [
            {
                "derivations": [],
                "rubric": [{"is_safety": j == 1, "safety_inferred": False, "check": None} for j in range(2)],
            }
            for _ in range(n)
        ],
    }
    record = {
        "id": f"{scenario}_{k:03d}",
        "session_id": f"physreview_{scenario}_{k:03d}",
        "subject_id": 10000000 + k,
        "hadm_id": 20000000 + k,
        "current_date": "2180-07-23",
        "env_info": "Current date: 2180-07-23",
        "clinical_scenario": scenario,
        "clinical_task_domain": "LabInterp",
        "difficulty_level": 1 + k % 3,
        "tool_set": "fhir",
        "sequence_idx": k,
        "tools": [{"name": "Observation.search", "parameters": {"type": "object"}}],
        "tasks": en_q,
        "tasks_explicit": [q + " (explicit)" for q in en_q],
        "tasks_zh": zh_q,
        "tasks_zh_explicit": [q + "（明确）" for q in zh_q],
        "messages": conv(en_q, en_a),
        "messages_zh": conv(zh_q, zh_a),
        "answer_list": steps,
        "turn_types": [i % 2 == 0 for i in range(n)],
        "task_types": [labels[(i + k) % 4] for i in range(n)],
        "turn_subtypes": [None if i == 0 else "PE" for i in range(n)],
        "tool_sources": ["ehr"] * n,
        "workup_modes": [None, "parallel", None, None][:n] + [None] * max(0, n - 4),
        "dep_graph": {"nodes": {}, "edges": []},
        "session_plan": {"b": 1, "a": 2},
        "rubrics": [[f"States K+ 4.{i}", "Does not advise NSAIDs"] + (["extra"] if i == 0 else []) for i in range(n)],
        "rubrics_zh": [[f"指出血钾 4.{i}", "不建议使用非甾体抗炎药"] + (["额外"] if i == 0 else []) for i in range(n)],
        "persona_config": {"health_literacy": "high"},
        "patient_agent_annotations": [],
        "generated_at": "2026-05-01T12:00:00Z",
    }
    if k % 4 != 3:  # some records carry no extension: every rubric item is then not a safety item
        record["physreview"] = physreview
    return record


def _items() -> list[Item]:
    out = []
    for k in sorted(range(14), key=lambda k: _record(k)["id"]):
        line = dumps_record(_record(k))
        review = {
            "turns": [
                {"index": i, "turn_pk": 100 * k + i, "version": 1 + i, "reviewers": ["ann", "bob"], "adjudicator": None}
                for i in range(2 + k % 3)
                if not (k == 5 and i == 1)  # a turn without review facts: nulls and an empty reviewer list
            ]
            + ([{"index": 0, "turn_pk": 1, "version": 3, "reviewers": [], "adjudicator": "chief"}] if k == 7 else []),
            "generation": {"run_id": None},
        }
        scenario = _record(k)["clinical_scenario"]
        source = "imported" if k % 5 == 0 else "generated"
        out.append(Item(_record(k)["id"], scenario, source, line, flat_source_json(line), review))
    return out


def _digests(tmp_path, languages: list[str]) -> dict[str, tuple[int, int, str]]:
    files = write_files(items=_items(), formats=list(FORMATS), out_dir=tmp_path, languages=languages)
    out = {}
    for f in files:
        data = (tmp_path / f["name"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (f["bytes"], f["sha256"])
        out[f["name"]] = (f["rows"], f["bytes"], f["sha256"])
    return out


_PAB = {
    "diagnostic_workup.jsonl": (5, 22325, "59668ed63e96a81ebd3e83477d462c6a3b72d37cf7e47492246837d68ea5a774"),
    "med_safety.jsonl": (5, 16685, "9c834ec7f1937d336a9e4e6b06bc84ee9b3db7c6cd77daab9da95fda33011b82"),
    "treatment_response.jsonl": (4, 22593, "d38a0ca662c47fb92d0a191aff56e87ba7370f0bfc8b51df85c91dafa33e7c8a"),
}
GOLDEN_BOTH = _PAB | {
    "turns.jsonl": (82, 71418, "c3ffaf7fc56cbb6d18aa50220f1cf595a904006233129e9eab9d95ad7bcca6d7"),
    "turns.parquet": (82, 78480, "9cdfe464f28e45e4bd49437c2d5f62f99fcefdbb461b6ef0578324ec29bc9122"),
}
GOLDEN_EN = _PAB | {
    "turns.jsonl": (41, 35667, "4f03d4f09d268067dcea317363f975664b7a7c5eb793674d2c49cf7c915e86af"),
    "turns.parquet": (41, 39784, "b044525262dd625f5975fbf0d9726e57cbcab1d20f8dc531bd81cbb71b73432d"),
}


@pytest.mark.parametrize("languages", [["en", "zh"], ["en"]], ids=["en+zh", "en"])
def test_exported_bytes_are_the_recorded_ones(tmp_path, monkeypatch, languages):
    monkeypatch.setattr(parquet, "ROW_GROUP", 7)  # several row groups and a partial last one
    got = _digests(tmp_path, languages)
    golden = GOLDEN_BOTH if languages == ["en", "zh"] else GOLDEN_EN
    if pyarrow.__version__ != PYARROW_VERSION:
        got.pop("turns.parquet")
        golden = {k: v for k, v in golden.items() if k != "turns.parquet"}
    assert got == golden
