"""Guideline thresholds, score points and formula constants: numbers that are knowledge, not patient data.

A gold answer that reasons "no dose reduction: CrCl 15–29 mL/min or two of age ≥ 80, weight ≤ 60 kg,
creatinine ≥ 1.5 mg/dL" quotes a drug label, not the record. The audit traces such a number to an
entry of this table when the sentence it stands in names the entry (one of its ``terms``) and the
value (with a compatible unit) is one of the entry's constants. A number that is in neither the
record nor a named entry stays untraced. Each entry names its source; the values are the published
ones (labels and scores as commonly cited in 2024), written here by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from scenarios.audit.numbers import NumberToken, as_decimal, tokenize, unit_key


@dataclass(frozen=True)
class KnowledgeEntry:
    key: str
    source: str
    terms: tuple[str, ...]  # lower-case words, EN and ZH, one of which the sentence must contain
    constants: tuple[tuple[str, str | None], ...]  # (value, unit or None for a bare number)

    def holds(self, number: NumberToken) -> bool:
        wanted = unit_key(number.unit)
        for value, unit in self.constants:
            if as_decimal(value) == number.value and (wanted is None or unit is None or unit_key(unit) == wanted):
                return True
        return False


TABLE: tuple[KnowledgeEntry, ...] = (
    KnowledgeEntry(
        "apixaban_dosing",
        "Apixaban (Eliquis) US prescribing information, §2.2 dose adjustments (AF: 2.5 mg BID if 2 of age ≥ 80, "
        "weight ≤ 60 kg, serum creatinine ≥ 1.5 mg/dL; ESRD/CrCl < 15 and 15–29 mL/min); ARISTOTLE excluded CrCl < 25",
        ("apixaban", "eliquis", "阿哌沙班", "dose reduction", "dose-reduction", "减量"),
        (
            ("80", None),
            ("60", "kg"),
            ("1.5", "mg/dL"),
            ("2.5", "mg"),
            ("5", "mg"),
            ("10", "mg"),
            ("15", "mL/min"),
            ("25", "mL/min"),
            ("29", "mL/min"),
            ("30", "mL/min"),
            ("2", None),
        ),
    ),
    KnowledgeEntry(
        "cha2ds2_vasc",
        "CHA₂DS₂-VASc score (Lip et al., Chest 2010; ESC 2020 AF guideline): CHF, hypertension, age 65–74 1 point, "
        "age ≥ 75 2 points, diabetes, stroke/TIA 2 points, vascular disease, female sex; maximum 9; "
        "anticoagulation recommended at ≥ 2 (men) / ≥ 3 (women)",
        ("cha2ds2-vasc", "cha₂ds₂-vasc", "chads", "卒中风险评分"),
        (("0", None), ("1", None), ("2", None), ("3", None), ("9", None), ("65", None), ("74", None), ("75", None)),
    ),
    KnowledgeEntry(
        "has_bled",
        "HAS-BLED score (Pisters et al., Chest 2010): one point per item, maximum 9, high bleeding risk at ≥ 3",
        ("has-bled", "hasbled", "出血风险评分"),
        (("0", None), ("1", None), ("2", None), ("3", None), ("9", None), ("65", None)),
    ),
    KnowledgeEntry(
        "cockcroft_gault",
        "Cockcroft–Gault creatinine clearance: (140 − age) × weight / (72 × serum creatinine), × 0.85 for women",
        ("cockcroft", "crcl", "creatinine clearance", "肌酐清除率"),
        (("140", None), ("72", None), ("0.85", None)),
    ),
    KnowledgeEntry(
        "ckd_stages",
        "KDIGO 2012 CKD GFR categories: G1 ≥ 90, G2 60–89, G3a 45–59, G3b 30–44, G4 15–29, G5 < 15 mL/min/1.73 m²",
        ("egfr", "gfr", "ckd", "kdigo", "肾小球滤过率"),
        (
            ("90", None),
            ("89", None),
            ("60", None),
            ("59", None),
            ("45", None),
            ("44", None),
            ("30", None),
            ("29", None),
            ("15", None),
        ),
    ),
    KnowledgeEntry(
        "warfarin_inr",
        "Warfarin INR target range 2.0–3.0 (ACCP/CHEST antithrombotic guidelines; mechanical mitral valve 2.5–3.5)",
        ("inr", "warfarin", "华法林"),
        (("2", None), ("3", None), ("2.5", None), ("3.5", None)),
    ),
    KnowledgeEntry(
        "metformin_egfr",
        "Metformin US prescribing information: contraindicated at eGFR < 30, not started at 30–45 mL/min/1.73 m²",
        ("metformin", "二甲双胍"),
        (("30", None), ("45", None)),
    ),
    KnowledgeEntry(
        "potassium",
        "Serum potassium reference 3.5–5.0 mEq/L; hyperkalaemia ≥ 5.5, severe ≥ 6.5 mEq/L (UK Renal Association 2020)",
        ("potassium", "hyperkal", "hypokal", "钾"),
        (("3.5", "mEq/L"), ("5", "mEq/L"), ("5.5", "mEq/L"), ("6.5", "mEq/L"), ("6", "mEq/L")),
    ),
    KnowledgeEntry(
        "enoxaparin_renal",
        "Enoxaparin US prescribing information: CrCl < 30 mL/min → 30 mg once daily (prophylaxis) "
        "or 1 mg/kg once daily",
        ("enoxaparin", "lovenox", "依诺肝素"),
        (("30", "mL/min"), ("30", "mg"), ("1", "mg"), ("40", "mg")),
    ),
    KnowledgeEntry(
        "transfusion",
        "Restrictive red-cell transfusion threshold haemoglobin 7 g/dL (8 g/dL with cardiovascular disease), AABB 2023",
        ("transfus", "输血"),
        (("7", "g/dL"), ("8", "g/dL")),
    ),
    KnowledgeEntry(
        "digoxin_level",
        "Digoxin therapeutic serum concentration 0.5–2.0 ng/mL (heart failure target 0.5–0.9 ng/mL)",
        ("digoxin", "地高辛"),
        (("0.5", "ng/mL"), ("0.9", "ng/mL"), ("2", "ng/mL"), ("1", "ng/mL")),
    ),
    KnowledgeEntry(
        "vancomycin_level",
        "Vancomycin monitoring (ASHP/IDSA 2020): AUC 400–600 mg·h/L; trough 10–20 mcg/mL in older practice",
        ("vancomycin", "万古霉素"),
        (("400", None), ("600", None), ("10", "mcg/mL"), ("15", "mcg/mL"), ("20", "mcg/mL")),
    ),
)


def _sentences(text: str) -> list[str]:
    """Sentences and list lines; a decimal point does not end one."""
    return [p for p in re.split(r"(?<!\d)[.](?!\d)|[!?;。！？；\n•]", text) if p.strip()]


def trace(*, text: str, number: NumberToken) -> KnowledgeEntry | None:
    """The entry a number of ``text`` quotes: named in a sentence where that number stands."""
    for sentence in _sentences(text):
        if not any(t.value == number.value and t.unit == number.unit for t in tokenize(sentence).numbers):
            continue
        lower = sentence.lower()
        for entry in TABLE:
            if entry.holds(number) and any(term in lower for term in entry.terms):
                return entry
    return None


def constants_of(key: str) -> tuple[Decimal, ...]:
    entry = next(e for e in TABLE if e.key == key)
    return tuple(v for v in (as_decimal(c) for c, _ in entry.constants) if v is not None)
