"""Concepts rubric items name (drugs, diagnoses, organisms, symptoms, findings, statuses) with EN/ZH synonyms.

Sources, merged once per process: this package's ``data/lexicon.json`` (short clinical names and
synonyms), the EHR glossary (``ehr/data/glossary.json``: drugs, antibiotics, organisms, diagnoses as
charted) and the generator's extras. Concepts that share an English synonym are one concept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ehr import glossary

DATA_PATH = Path(__file__).resolve().parent / "data" / "lexicon.json"
EXTRA_PATH = Path(__file__).resolve().parents[1] / "generation" / "data" / "glossary_extra.json"
_GLOSSARY_KINDS = {"drug": "drug", "antibiotic": "drug", "organism": "organism", "diagnosis": "diagnosis"}
# Kinds whose mention is a checkable fact of an answer (statuses need a subject, see rules_term).
ENTITY_KINDS = ("drug", "drug_class", "diagnosis", "organism", "symptom", "finding", "route")


@dataclass
class Concept:
    kind: str
    en: list[str]
    zh: list[str]
    members: tuple[str, ...] = ()  # a drug class's drugs (English names): "does not recommend NSAIDs" covers them

    @property
    def name(self) -> str:
        return self.en[0] if self.en else self.zh[0]


@dataclass(frozen=True)
class Found:
    concept: Concept
    start: int
    end: int
    phrase: str


def _short_drug(name: str) -> str:
    """'Enoxaparin Sodium' → 'enoxaparin', 'MetFORMIN (Glucophage)' → 'metformin' (the name as said)."""
    base = re.sub(r"\s*\(.*?\)", "", name)
    base = re.sub(r"\s+(sodium|hyclate|tartrate|bromide|neb|sl)\b.*$", "", base, flags=re.IGNORECASE)
    return base.strip().lower()


@cache
def concepts() -> tuple[Concept, ...]:
    data = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    found = [Concept(c["kind"], list(c["en"]), list(c["zh"]), tuple(c.get("members", ()))) for c in data["concepts"]]
    for gkind, kind in _GLOSSARY_KINDS.items():
        for en, zh in glossary.terms(kind=gkind).items():
            names = [en] if kind != "drug" else list(dict.fromkeys([_short_drug(en), en]))
            found.append(Concept(kind, names, [zh]))
    extra = json.loads(EXTRA_PATH.read_text(encoding="utf-8"))["terms"]
    for en, zh in extra.items():
        if en[:1].isupper() or en in ("hyperkalemia",):
            found.append(Concept("diagnosis" if en[:1].isupper() and "," in en else "drug", [en], [zh]))
    return tuple(_merge(found))


def _merge(items: list[Concept]) -> list[Concept]:
    """One concept per English synonym: later entries join the first concept that shares a name."""
    out: list[Concept] = []
    by_name: dict[str, Concept] = {}
    for c in items:
        target = next((by_name[n.casefold()] for n in c.en if n.casefold() in by_name), None)
        if target is None:
            target = Concept(c.kind, [], [], c.members)
            out.append(target)
        for n in c.en:
            if n.casefold() not in {x.casefold() for x in target.en}:
                target.en.append(n)
            by_name.setdefault(n.casefold(), target)
        for z in c.zh:
            if z not in target.zh:
                target.zh.append(z)
    return out


def _en_pattern(phrase: str) -> re.Pattern[str]:
    body = re.escape(phrase).replace(r"\ ", r"[\s-]+")
    # Short all-caps abbreviations (AF, HF, K) only as written; names case-insensitively, plural allowed.
    if len(phrase) <= 3 and phrase.upper() == phrase:
        return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])")
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?:e?s)?(?![A-Za-z0-9])", re.IGNORECASE)


@cache
def _patterns() -> tuple[tuple[Concept, str, str, re.Pattern[str] | None], ...]:
    rows: list[tuple[Concept, str, str, re.Pattern[str] | None]] = []
    for c in concepts():
        rows += [(c, "en", p, _en_pattern(p)) for p in c.en if p.strip()]
        rows += [(c, "zh", p, None) for p in c.zh if p.strip()]
    return tuple(rows)


def find(text: str, *, lang: str, kinds: tuple[str, ...] | None = None) -> list[Found]:
    """Concepts named in ``text`` (EN patterns on English, substrings on Chinese), longest first, no overlaps."""
    hits: list[Found] = []
    for concept, plang, phrase, pattern in _patterns():
        if kinds is not None and concept.kind not in kinds:
            continue
        if lang == "en" and plang == "en" and pattern is not None:
            hits += [Found(concept, m.start(), m.end(), m.group()) for m in pattern.finditer(text)]
        elif lang == "zh":
            if plang == "zh":
                start = text.find(phrase)
                while start >= 0:
                    hits.append(Found(concept, start, start + len(phrase), phrase))
                    start = text.find(phrase, start + 1)
            elif pattern is not None and re.search(r"[A-Za-z]", phrase):
                # Chinese items often keep drug names and abbreviations in English.
                hits += [Found(concept, m.start(), m.end(), m.group()) for m in pattern.finditer(text)]
    hits.sort(key=lambda f: (-(f.end - f.start), f.start))
    chosen: list[Found] = []
    for f in hits:
        if all(f.end <= g.start or f.start >= g.end for g in chosen):
            chosen.append(f)
    return sorted(chosen, key=lambda f: f.start)


def with_members(concept: Concept) -> tuple[list[str], list[str]]:
    """(EN, ZH) phrases of a concept and, for a drug class, of its member drugs."""
    en, zh = list(concept.en), list(concept.zh)
    for name in concept.members:
        member = next((c for c in concepts() if name.casefold() in (e.casefold() for e in c.en)), None)
        if member is not None:
            en += [e for e in member.en if e not in en]
            zh += [z for z in member.zh if z not in zh]
    return en, zh


def distinct(found: list[Found]) -> list[Concept]:
    out: list[Concept] = []
    for f in found:
        if all(f.concept is not c for c in out):
            out.append(f.concept)
    return out


@cache
def _data() -> dict[str, Any]:
    return json.loads(DATA_PATH.read_text(encoding="utf-8"))


@cache
def analyte_patterns() -> tuple[tuple[str, re.Pattern[str] | None, str], ...]:
    """(analyte key, EN pattern or None, phrase) for the names of measured things (labs, vitals, age, dose)."""
    rows: list[tuple[str, re.Pattern[str] | None, str]] = []
    names = {key: list(phrases) for key, phrases in _data()["analytes"].items()}
    key_of = {p.casefold(): key for key, phrases in names.items() for p in phrases}
    for en, zh in glossary.terms(kind="lab").items():
        # A glossary lab one of our analytes already names ("Platelet Count" / 血小板计数 of "platelets") is that
        # analyte, not a second one: an item naming it names one measured thing.
        key = key_of.get(en.casefold()) or key_of.get(zh.casefold()) or en.casefold()
        names.setdefault(key, [])
        names[key] += [p for p in (en, zh) if p.casefold() not in {q.casefold() for q in names[key]}]
        key_of.update({p.casefold(): key for p in (en, zh)})
    for key, phrases in names.items():
        for p in phrases:
            ascii_name = bool(re.fullmatch(r"[\x00-\x7f]+", p))
            rows.append((key, _en_pattern(p) if ascii_name else None, p))
    return tuple(rows)


def analyte_spans(text: str) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for key, pattern, phrase in analyte_patterns():
        if pattern is not None:
            spans += [(m.start(), m.end(), key) for m in pattern.finditer(text)]
        else:
            start = text.find(phrase)
            while start >= 0:
                spans.append((start, start + len(phrase), key))
                start = text.find(phrase, start + 1)
    # A name inside a longer one is part of it (钙 of 肌钙蛋白, "creatinine" of "creatinine clearance"): longest wins.
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    kept: list[tuple[int, int, str]] = []
    for span in spans:
        if all(span[1] <= k[0] or span[0] >= k[1] or (span[0], span[1]) == (k[0], k[1]) for k in kept):
            kept.append(span)
    return sorted(kept)


def units() -> tuple[str, ...]:
    """Units as charted, longest first (so 'mL/min' wins over 'mL')."""
    names = set(_data()["units"]) | set(glossary.terms(kind="unit"))
    return tuple(sorted(names, key=len, reverse=True))


def units_zh() -> dict[str, str]:
    """Chinese unit → unit as charted (the glossary's translations and this package's extras)."""
    table = {zh: en for en, zh in glossary.terms(kind="unit").items() if zh != en}
    table.update(_data()["units_zh"])
    return dict(sorted(table.items(), key=lambda kv: len(kv[0]), reverse=True))
