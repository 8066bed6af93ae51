"""Bench: turns/s and peak memory of the snapshot exporters writing every format.

    .venv/bin/python bench/export_throughput.py [--turns 100000] [--out DIR] [--db]

Feeds 100,000 synthetic turns (25,000 sessions of 4 turns, English and Chinese, gold steps with FHIR
Bundles, rubric items, the real tool schemas: ~90,000 characters / ~95 KB per PAB line and ~6 KB of
flat projection, like the demo snapshot's rows) as frozen items to
:func:`annotations.snapshots.exporters.write_files`, the function ``make_snapshot``, the admin task and
``export_set`` all use: PhysAssistBench JSONL per scenario, flat ``turns.jsonl`` (one row per turn and
language) and ``turns.parquet``, with the sha256 of each file, as a snapshot does.

Two paths, named in the output:

* default: the items come from a generator (one session in memory at a time, the JSON texts as UTF-8
  bytes as PostgreSQL hands them over), so the DB read is NOT included: the figure is the exporters' own;
* ``--db``: the items are first stored as ``SnapshotItem`` rows of a temporary ``building`` snapshot in
  the ``DATABASE_URL`` database (not timed, deleted afterwards), then ``export_snapshot`` is timed: the
  server-side cursor read of the frozen rows is included.

Targets: >= 10,000 turns/s (wall clock) and <= 300 MB peak RSS (whole process, Django and pyarrow
included; with ``--db`` the untimed loading runs in a child process, so its memory is not counted).
The CPU time (user + system, all threads of this process) is printed too: on a shared machine the wall
figure depends on the load. ``--db`` loads ~26 ms per session here: use ``--turns 20000`` with it.
"""

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
TARGET_TURNS_S = 10_000
TARGET_RSS_MB = 300
SCENARIOS = ("diagnostic_workup", "med_safety", "treatment_response", "discharge_planning")


@dataclass
class Item:
    record_id: str
    scenario: str
    source: str
    record_json: bytes
    flat_json: bytes
    review: dict


def _template() -> str:
    """One session line shaped like the demo's (~90,000 characters, as the demo snapshot's lines average:
    the real tool schemas in English and Chinese, gold
    steps with FHIR Bundles, a patient memory), serialized by the real PAB writer, with placeholders."""
    from ehr.fhir.registry import tool_schemas
    from scenarios.pab import dumps_record

    def bundle(n: int) -> dict:
        return {
            "resourceType": "Bundle",
            "type": "searchset",
            "total": n,
            "entry": [
                {
                    "resource": {
                        "resourceType": "Observation",
                        "id": f"lab-{1000 + k}",
                        "status": "final",
                        "code": {"coding": [{"system": "mimic-iv/itemid", "code": "50912", "display": "Creatinine"}]},
                        "effectiveDateTime": f"2180-07-{10 + k} 05:10:00",
                        "valueQuantity": {"value": 1.1 + k / 10, "unit": "mg/dL"},
                        "referenceRange": [{"low": {"value": 0.5}, "high": {"value": 1.2}}],
                    }
                }
                for k in range(n)
            ],
        }

    arc = [("Information Lookup", None, "ehr"), ("Data Gathering", "PE", "ehr"), ("Clinical Reasoning", "NA", "mixed")]
    arc.append(("Write/Update", "AE", "write"))
    en_q = "What is the latest creatinine for __ID__, and how has it trended since admission?"
    zh_q = "__ID__ 最近一次肌酐是多少？自入院以来趋势如何？"
    en_a = "Creatinine 1.4 mg/dL on 2180-07-22, up from 0.9 at admission; eGFR about 48 (__ID__). " * 3
    zh_a = "2180-07-22 肌酐 1.4 mg/dL，入院时 0.9；估算 eGFR 约 48（__ID__）。" * 3
    sep = "=" * 50
    messages_en, messages_zh = [], []
    for i in range(4):
        if i:
            messages_en.append(sep)
            messages_zh.append(sep)
        messages_en += [{"role": "user", "content": en_q}, {"role": "assistant", "content": en_a}]
        messages_zh += [{"role": "user", "content": zh_q}, {"role": "assistant", "content": zh_a}]
    steps = [
        {
            "action": {"name": "Observation.search", "arguments": {"subject_id": 10000017, "code": "creatinine"}},
            "observation": bundle(6),
            "dependency_list": [],
            "idx": 0,
        },
        {
            "action": {"name": "prepare_to_answer", "arguments": {}},
            "observation": en_a,
            "dependency_list": [0],
            "idx": 1,
        },
    ]
    rubric_en = ["States creatinine 1.4 mg/dL", "Notes the rise from 0.9", "Does not recommend NSAIDs", "Gives eGFR"]
    rubric_zh = ["指出肌酐 1.4 mg/dL", "指出较 0.9 升高", "不建议使用非甾体抗炎药", "给出 eGFR"]
    record = {
        "id": "__ID__",
        "session_id": "physreview___ID__",
        "subject_id": 10000017,
        "hadm_id": 20000001,
        "current_date": "2180-07-23",
        "env_info": "session_id: physreview___ID__\nCurrent date: 2180-07-23. Patient is a 68-year-old F",
        "clinical_scenario": "__SCENARIO__",
        "clinical_task_domain": "LabInterp",
        "difficulty_level": 2,
        "tool_set": "fhir",
        "sequence_idx": 0,
        "tools": tool_schemas(language="en"),
        "tools_en": tool_schemas(language="en"),
        "tools_zh": tool_schemas(language="zh"),
        "tasks": [en_q] * 4,
        "tasks_en": [en_q] * 4,
        "tasks_explicit": [en_q] * 4,
        "tasks_en_explicit": [en_q] * 4,
        "tasks_zh": [zh_q] * 4,
        "tasks_zh_explicit": [zh_q] * 4,
        "messages": messages_en,
        "messages_en": messages_en,
        "messages_zh": messages_zh,
        "answer_list": [steps] * 4,
        "turn_types": [False, True, True, True],
        "task_types": [label for label, _, _ in arc],
        "task_sequence": [label for label, _, _ in arc],
        "turn_subtypes": [sub for _, sub, _ in arc],
        "tool_sources": [src for _, _, src in arc],
        "workup_modes": [None, "parallel", None, None],
        "dep_graph": {"nodes": {}, "edges": []},
        "session_plan": {"clinical_situation": "AKI on CKD", "turn_intents": ["lookup", "trend", "reason", "write"]},
        "rubrics": [rubric_en] * 4,
        "rubrics_zh": [rubric_zh] * 4,
        "persona_config": {"health_literacy": "high", "adherence": "good", "anxiety_level": "low"},
        "patient_agent_annotations": [],
        "generated_at": "2026-05-01T12:00:00Z",
        "physreview": {
            "format": 1,
            "patient_memory": {
                "facts": [
                    {"id": f"fact-{k}", "text": f"Takes lisinopril 10 mg daily since 2178 ({k}).", "source": "note"}
                    for k in range(255)
                ],
                "persona": {"health_literacy": "high"},
            },
            "turns": [
                {
                    "derivations": [],
                    "rubric": [{"is_safety": j == 2, "safety_inferred": False, "check": None} for j in range(4)],
                }
            ]
            * 4,
        },
    }
    return dumps_record(record)


def _load_into_db(n_sessions: int):
    """A ``building`` snapshot holding the synthetic items as SnapshotItem rows (the caller deletes it)."""
    from django.db.models import Max

    from annotations.models import Snapshot, SnapshotItem

    version = (Snapshot.objects.aggregate(m=Max("version"))["m"] or 0) + 1
    snapshot = Snapshot.objects.create(
        version=version, label=f"v{version}", filters={"languages": ["en", "zh"]}, progress_stage="bench"
    )
    batch = []
    for item in items(n_sessions):
        batch.append(
            SnapshotItem(
                snapshot=snapshot,
                record_id=item.record_id,
                session_pk=0,
                scenario=item.scenario,
                tier=2,
                source=item.source,
                n_turns=4,
                record_json=item.record_json.decode(),
                flat_json=item.flat_json.decode(),
                review=item.review,
                sha256="",
            )
        )
        if len(batch) == 200:
            SnapshotItem.objects.bulk_create(batch)
            batch.clear()
    SnapshotItem.objects.bulk_create(batch)
    return snapshot


def items(n_sessions: int):
    from annotations.snapshots.rows import flat_source_json

    template = _template()

    # The frozen pair a snapshot stores per session: the PAB line and its flat projection (made the way
    # freezing makes it), as UTF-8 bytes, which is how the export reads them from PostgreSQL
    # (selectors.iter_export_items); filling the placeholders with one %-format keeps this cost small.
    def pattern(text: str) -> bytes:
        text = text.replace("%", "%%").replace("__ID__", "%(id)s").replace("__SCENARIO__", "%(scenario)s")
        return text.encode()

    line_template, flat_template = pattern(template), pattern(flat_source_json(template))
    review = {
        "turns": [
            {"index": i, "turn_pk": i, "version": 2, "reviewers": ["rev1", "rev2"], "adjudicator": None}
            for i in range(4)
        ]
    }
    for k in range(n_sessions):
        scenario = SCENARIOS[k % 4]
        record_id = f"{scenario}_{k:06d}"
        values = {b"id": record_id.encode(), b"scenario": scenario.encode()}
        line, flat = line_template % values, flat_template % values
        yield Item(
            record_id=record_id, scenario=scenario, source="generated", record_json=line, flat_json=flat, review=review
        )


def _reset_peak_rss() -> None:
    # Linux: "5" resets the process's peak RSS (VmHWM) to its current RSS, which stays counted.
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _peak_rss_mb() -> float:
    with contextlib.suppress(OSError), open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns (4 per session)")
    parser.add_argument("--out", help="folder for the files (default: a temporary one, removed afterwards)")
    parser.add_argument(
        "--db",
        action="store_true",
        help="store the items as SnapshotItem rows of a temporary snapshot first (DATABASE_URL; not timed) and "
        "time export_snapshot, DB read included; without it, the items come from a generator (DB read excluded)",
    )
    parser.add_argument("--load-only", action="store_true", help=argparse.SUPPRESS)  # --db's loading child
    args = parser.parse_args()

    import django

    django.setup()
    from annotations.models import Snapshot
    from annotations.snapshots.exporters import FORMATS, write_files
    from annotations.snapshots.services import export_snapshot

    n_sessions = args.turns // 4
    if args.load_only:
        print(_load_into_db(n_sessions).pk)
        return
    snapshot = None
    if args.db:
        t0 = time.perf_counter()
        # Loaded by a child process, so the memory the loading took is not in this process's figures.
        child = [sys.executable, __file__, "--load-only", "--turns", str(args.turns)]
        pk = int(subprocess.run(child, check=True, capture_output=True, text=True).stdout.split()[-1])
        snapshot = Snapshot.objects.get(pk=pk)
        print(
            f"loaded {n_sessions:,} SnapshotItem rows into snapshot {snapshot.label} "
            f"in {time.perf_counter() - t0:.1f} s (not timed)"
        )
    try:
        with tempfile.TemporaryDirectory(prefix="physreview_bench_export_") as tmp:
            out = Path(args.out or tmp)
            out.mkdir(parents=True, exist_ok=True)
            _reset_peak_rss()  # only the timed part's peak (on top of what Django and pyarrow hold)
            load = os.getloadavg()[0]
            start, times_start = time.perf_counter(), os.times()
            if snapshot is not None:
                files = export_snapshot(snapshot=snapshot, formats="all", out_dir=out)
            else:
                files = write_files(items=items(n_sessions), formats=list(FORMATS), out_dir=out, languages=["en", "zh"])
            elapsed, times = time.perf_counter() - start, os.times()
    finally:
        if snapshot is not None:
            snapshot.delete()  # a building snapshot: it and its items can be deleted
    turns = 4 * n_sessions
    rate = turns / elapsed
    peak_mb = _peak_rss_mb()
    path = (
        "export_snapshot: PostgreSQL read of the frozen items INCLUDED (server-side cursor), exporters, sha256"
        if args.db
        else "write_files from an in-memory generator: DB read NOT included (exporters and sha256 only; see --db)"
    )
    print(f"path: {path}")
    print(f"{turns:,} turns ({n_sessions:,} sessions, en+zh) -> {', '.join(FORMATS)} in {elapsed:.2f} s wall")
    # The wall figure is the target's; CPU time says what the code costs when the machine is shared.
    user, system = times.user - times_start.user, times.system - times_start.system
    cpu = user + system
    note = " (this process only: PostgreSQL's own CPU is not counted)" if args.db else ""
    print(
        f"CPU time {cpu:.2f} s = user {user:.2f} + system {system:.2f} ({turns / cpu:,.0f} turns/s of CPU){note}; "
        f"load average at start {load:.1f}, at end {os.getloadavg()[0]:.1f}"
    )
    for f in files:
        print(f"  {f['name']:<26} {f['rows']:>8,} rows {f['bytes'] / 2**20:>8.1f} MiB  sha256 {f['sha256'][:16]}…")
    ok_rate, ok_rss = rate >= TARGET_TURNS_S, peak_mb <= TARGET_RSS_MB
    print(f"throughput: {rate:,.0f} turns/s (target >= {TARGET_TURNS_S:,}): {'MET' if ok_rate else 'MISSED'}")
    print(f"peak RSS: {peak_mb:.0f} MB (target <= {TARGET_RSS_MB}): {'MET' if ok_rss else 'MISSED'}")


if __name__ == "__main__":
    main()
