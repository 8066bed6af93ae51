"""Coverage and precision of the rubric compiler on release-style items (a JSONL of bench/rubric_items.py).

Per task type: items, compiled (both languages together), items whose EN wording alone compiles and
whose ZH wording alone compiles, judgement items wrongly compiled; precision: the gold answer (and
gold write call) must pass every compiled check, in EN and in ZH; a value-perturbed answer must fail
every compiled value check (value_unit, write_call with a dose). Usage::

    python bench/rubric_compiler_coverage.py tests/scenarios/data/rubric_items_dev.jsonl [--failures]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

CODES = {"Information Lookup": "IL", "Data Gathering": "DG", "Clinical Reasoning": "CR", "Write/Update": "WU"}


def _setup() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
    import django

    django.setup()


def measure(items: list[dict[str, Any]]) -> dict[str, Any]:
    from evaluation.judges.rules import judge_check
    from scenarios.rubric_compiler import attempt
    from scenarios.rubric_compiler.types import Candidate

    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    failures: list[str] = []
    for item in items:
        code = CODES[item["task_type"]]
        steps = [item["gold_write"]] if item["gold_write"] else []
        out = attempt(text_en=item["en"], text_zh=item["zh"], task_type=code, gold_steps=steps)
        for key in (code, "all"):
            r = rows[key]
            r["items"] += 1
            r["checkable"] += item["expect"] == "check"
            r["en"] += isinstance(out.per_language.get("en"), Candidate)
            r["zh"] += isinstance(out.per_language.get("zh"), Candidate)
            if out.compiled is None:
                continue
            r["compiled"] += 1
            r["wrongly_compiled"] += item["expect"] == "judgement"
        if out.compiled is None:
            if item["expect"] == "check":
                failures.append(f"unscored [{out.reason}] {item['en']} | {out.explanation}")
            continue
        check = out.compiled.check
        writes = [item["gold_write"]] if item["gold_write"] else []
        bad_writes = [item["wrong_write"]] if item["wrong_write"] else []
        for lang in ("en", "zh"):
            ok = judge_check(idx=0, check=check, answer=item[f"gold_{lang}"], writes=writes).passed
            rows[code][f"gold_pass_{lang}"] += ok
            rows["all"][f"gold_pass_{lang}"] += ok
            if not ok:
                failures.append(f"gold fails ({lang}) {item['en']} → {check}")
        parts = check["checks"] if check["kind"] == "all_of" else [check]
        is_value = any(
            p["kind"] == "value_unit" or (p["kind"] == "write_call" and "dose" in p["params"]) for p in parts
        )
        if is_value:
            for lang in ("en", "zh"):
                bad = judge_check(idx=0, check=check, answer=item[f"wrong_{lang}"], writes=bad_writes).passed
                for key in (code, "all"):
                    rows[key]["value_checks"] += 1
                    rows[key]["perturbed_fail"] += not bad
                if bad:
                    failures.append(f"perturbed passes ({lang}) {item['en']} → {check}")
    return {"rows": {k: dict(v) for k, v in rows.items()}, "failures": failures}


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "—"


def lines(result: dict[str, Any]) -> list[str]:
    head = ["type", "items", "compiled", "%", "EN", "ZH", "judgement compiled", "gold passes", "perturbed fails"]
    out = [head]
    for key in ("IL", "DG", "CR", "WU", "all"):
        r = result["rows"].get(key)
        if not r:
            continue
        n, c = r["items"], r.get("compiled", 0)
        out.append(
            [
                key,
                str(n),
                str(c),
                _pct(c, n),
                _pct(r["en"], n),
                _pct(r["zh"], n),
                str(r.get("wrongly_compiled", 0)),
                f"{r.get('gold_pass_en', 0) + r.get('gold_pass_zh', 0)}/{2 * c}",
                f"{r.get('perturbed_fail', 0)}/{r.get('value_checks', 0)}",
            ]
        )
    widths = [max(len(row[i]) for row in out) for i in range(len(head))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--failures", action="store_true")
    args = parser.parse_args()
    _setup()
    items = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = measure(items)
    print("\n".join(lines(result)))
    if args.failures:
        print("\n".join(result["failures"]))


if __name__ == "__main__":
    main()
