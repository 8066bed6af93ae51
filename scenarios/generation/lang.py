"""English → Chinese terms for generated text: the EHR glossary first, then this package's extras.

Units stay as charted in both languages (the numbers-and-units gate compares them literally);
tool names are never passed through here.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from ehr.glossary import translate
from scenarios.generation.latin import untranslated_words

EXTRA_PATH = Path(__file__).resolve().parent / "data" / "glossary_extra.json"


@cache
def _extra() -> dict[str, str]:
    data = json.loads(EXTRA_PATH.read_text(encoding="utf-8"))
    return {k.casefold(): v for k, v in data["terms"].items()}


def zh(term: str, *, kind: str | None = None) -> str:
    """Chinese for a medical term; the English term itself when neither glossary has it."""
    found = translate(term=term, kind=kind) if kind else translate(term=term)
    if found:
        return found
    return _extra().get(term.strip().casefold(), term)


def zh_or_quote(term: str, *, kind: str) -> str:
    """Chinese for a record term, or the term quoted as the record's words when no glossary has it
    (an untranslated English title must not read as if it were the translation)."""
    found = zh(term, kind=kind)
    return found if found != term or not untranslated_words(f"诊断 {term}") else f"病历原文“{term}”"


def lab_name(label: str) -> str:
    """Lower-case English display of a lab label ("INR(PT)" → "INR")."""
    return {"INR(PT)": "INR", "PTT": "PTT", "WBC": "WBC"}.get(label, label.lower())


def lab_code(label: str) -> str:
    """Search code for Observation.search (labels match case-insensitively)."""
    return label.lower()


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def split_drug(line: str) -> tuple[str, str | None]:
    """Longest leading drug name of a medication line known to the glossary, with its Chinese."""
    words = line.split(" ")
    for n in range(len(words), 0, -1):
        name = " ".join(words[:n])
        found = translate(term=name, kind="drug")
        if found:
            return name, found
    return words[0], None


_PER_DAY = re.compile(r"(\d+(?:\.\d+)?) times? (?:per day|daily)")
FREQUENCY_ZH = {
    "as ordered": "按原医嘱",
    "once daily": "每日 1 次",
    "twice daily": "每日 2 次",
    "three times daily": "每日 3 次",
    "four times daily": "每日 4 次",
}
MED_STATUS_ZH = {
    "active": "在用",
    "completed": "已结束",
    "stopped": "已停用",
    "on-hold": "已暂停",
    "unknown": "状态未知",
    "cancelled": "已取消",
    "draft": "草稿",
}
PRIORITY_ZH = {"routine": "常规", "urgent": "紧急", "asap": "尽快", "stat": "立即"}


def record_text_zh(text: str) -> str:
    """A record text (dose, schedule) in a Chinese sentence: as written when Chinese clinical text keeps
    it in Latin letters ('5 mg PO BID'), with 'N times per day' as 每日 N 次; otherwise quoted as the
    record's words (病历原文“...”), never left as bare English."""
    text = text.strip()
    converted = _PER_DAY.sub(lambda m: f"每日 {m.group(1)} 次", text)
    return converted if not untranslated_words(f"医嘱 {converted}") else f"病历原文“{text}”"


def frequency_zh(frequency: str) -> str:
    return FREQUENCY_ZH.get(frequency) or record_text_zh(frequency)


def drug_line_zh(line: str) -> str:
    """'Apixaban 5 mg PO BID' → '阿哌沙班（Apixaban）5 mg PO BID': the drug named in Chinese, the dose kept as
    written (or quoted as the record's words when it is English prose, e.g. a sliding-scale instruction)."""
    name, found = split_drug(line)
    if not found:
        return record_text_zh(line)
    rest = line[len(name) :].strip()
    return f"{found}（{name}）{record_text_zh(rest) if rest else ''}"
