"""Factual premises of the physician's request, checked against the record at the cutoff.

A request can carry facts the gold answer then silently accepts ("change warfarin from 2.5 mg"
when the record says 5 mg). Three kinds are read from every request form (explicit/implicit, EN/ZH):

* **drug + dose**: a number with a dose unit (mg, mcg, g, units, mEq, mL; 毫克 …) after a drug name
  of the lexicon (the patient's prescription names and the glossary's drugs, EN and ZH) in the same
  clause, or right before it ("2.5 mg of apixaban"). Written right after "instead of", "rather than",
  "from", "currently (on)", "was given", "is on" (a few words of drug name between allowed) or
  "从"/"而不是"/"目前" it is a *premise* whatever else the clause says. Otherwise it is a premise unless
  it is a proposal: written after "to"/"改为" (the target of a change, also "from A to B 5 mg"), or in a
  clause that orders/suggests ("order", "start", "consider", "开具", "建议" …) without a change verb
  ("continue", "reduce", "hold", "继续", "减" …) or "from"/"currently".
  Checked with ``MedicationRequest.search(subject_id, medication)``: some visible order must have
  that dose (value and unit).
* **lab + value**: a lab or vital name of the lexicon (our code aliases, the patient's lab labels, the
  glossary) followed by a value ("creatinine of 2.1", "potassium 5.9 mEq/L", "肌酐为1.9"), not a
  threshold ("above 5", "target", "目标"). Checked with ``Observation.search(subject_id, code)``: some
  visible result must round to the stated value (to its last written digit).
* **dates**: a date on/after the current date is flagged unless the request schedules something
  ("order … for 2180-07-21", "安排"); an earlier date must have something charted that day
  (``Observation.search`` with ``date_from``/``date_to``) or fall inside an admission
  (``Encounter.search``).

Premises are always checked at the cutoff with strict bounds (what the physician can know then),
whatever bounds the gold calls are audited under. The same premise stated in several forms is one
finding naming the forms.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ehr import glossary
from ehr import models as m
from ehr.fhir import ToolContext, execute_tool
from ehr.fhir.codes import LAB_ALIASES, VITAL_ALIASES
from scenarios.audit.numbers import UNIT_AFTER, as_decimal, unit_key

FORMS = ("request_explicit_en", "request_implicit_en", "request_explicit_zh", "request_implicit_zh")
_CLAUSE = re.compile(r"[;?!。；？！\n]|\.(?!\d)")
_DOSE_UNITS = {
    "mg": "mg",
    "mcg": "mcg",
    "µg": "mcg",
    "ug": "mcg",
    "g": "g",
    "gm": "g",
    "units": "unit",
    "unit": "unit",
    "iu": "unit",
    "meq": "mEq",
    "ml": "mL",
    "毫克": "mg",
    "微克": "mcg",
    "克": "g",
    "单位": "unit",
    "毫当量": "mEq",
    "毫升": "mL",
}
_DOSE = re.compile(
    r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)\s*(mcg|µg|ug|mg|gm|g|units?|IU|mEq|mL|毫克|微克|毫当量|毫升|单位|克)(?![A-Za-z/])",
    re.IGNORECASE,
)
_LAB_VALUE = re.compile(
    r"\s*(?:[(（][^)）]{0,24}[)）]\s*)?"
    r"(?:(?:levels?|values?|results?|was|is|of|at|now|=|:|：|around|about|approximately|~|≈|from|rose from|"
    r"went from|为|是|约|达|水平|值)\s*)*"
    r"(\d+(?:\.\d+)?)"
)
_TIME_AFTER = re.compile(
    r"\s*(?:days?|hours?|hrs?|h|weeks?|months?|years?|min(?:utes?)?|times|天|小时|周|个月|年|次)(?![A-Za-z])"
)
_THEN = re.compile(r"\s*(?:to|→|->|升至|降至|至|到)\s*(\d+(?:\.\d+)?)")
_TARGET_BEFORE = re.compile(
    r"\b(?:to|into|up to|target(?:ing)?|goal)\s*$|(?:改为|调至|调整为|增至|增加到|减至|减为|加到|到)\s*$"
)
_FROM_BEFORE = re.compile(r"\b(?:from|currently|current|taking|receiving)\b|从|目前|当前|正在")
# Right before a dose (a few words of drug name between allowed): the dose is what the patient is on.
_STATED_BEFORE = re.compile(
    r"(?:\binstead of|\brather than|\bin place of|\bfrom|\bcurrently(?: on| taking| receiving)?|\bwas given|"
    r"\b(?:is|was|has been|had been) (?:on|taking|receiving)|\bthe current|\bexisting|\bhome dose of)"
    r"(?:\s+(?!to\b|into\b|and\b|then\b)[A-Za-z][A-Za-z-]*){0,3}\s*$|(?:从|而不是|而非|代替|目前|当前|正在用)\S{0,8}$",
    re.IGNORECASE,
)
# A dose written before its drug ("was given 2.5 mg of apixaban"): the drug within these characters after it.
_DRUG_AFTER_GAP = 12
_CHANGE = re.compile(
    r"\b(?:continue|continuing|keep|hold|stop|discontinue|reduce|decrease|lower|increase|raise|titrate|change|adjust|"
    r"resume|taper|double|halve)\b|继续|停用|暂停|减量|减少|加量|调整|维持|停",
    re.IGNORECASE,
)
_PROPOSE = re.compile(
    r"\b(?:order|start|begin|initiate|prescribe|give|add|switch|consider|recommend|suggest|load|bolus|administer|"
    r"try|draft|write|place)\b|开具|开始|加用|给予|建议|考虑|应该|能否|可否|换用|开",
    re.IGNORECASE,
)
_THRESHOLD = re.compile(
    r"\b(?:target|goal|keep|maintain|above|below|over|under|greater|less|threshold|cut-?off|exceeds?|than)\b|[<>≤≥]|"
    r"目标|维持|高于|低于|超过|以上|以下",
    re.IGNORECASE,
)
_SCHEDULE = re.compile(
    r"\b(?:order|schedule|book|arrange|plan|planned|repeat|recheck|follow|draw|due|next|by|until|for)\b|"
    r"开|安排|预约|复查|计划|随访|为|之前",
    re.IGNORECASE,
)
_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)|(?<!\d)(\d{4})年(\d{1,2})月(\d{1,2})日")
# Words of drug names that name a salt or a form, not the drug.
_GENERIC_WORDS = frozenset(
    {
        *("sodium", "chloride", "potassium", "calcium", "tablet", "tablets", "oral", "solution", "injection"),
        *("extended", "release", "hydrochloride", "hcl", "human", "regular", "sulfate", "bromide", "tartrate"),
        *("succinate", "neb", "soln", "dextrose", "syringe", "vial"),
    }
)
_MAX_GAP = 48  # characters between a drug name and its dose


@dataclass
class Lexicon:
    """Terms (lower-case EN, or ZH as written) → the term the tools are asked for."""

    drugs: dict[str, str] = field(default_factory=dict)
    labs: dict[str, str] = field(default_factory=dict)
    short_labs: dict[str, str] = field(default_factory=dict)  # ≤ 3 letters: matched case-sensitively


def lexicon_for(*, subject_id: int) -> Lexicon:
    """Drug and lab names to recognise in this patient's requests."""
    lex = Lexicon()
    names = set(m.Prescription.objects.filter(subject_id=subject_id).values_list("drug", flat=True).distinct())
    for name in [*names, *glossary.terms(kind="drug")]:
        if not name:
            continue
        lex.drugs[name.lower()] = name
        for word in re.findall(r"[A-Za-z]{4,}", name):
            if word.lower() not in _GENERIC_WORDS:
                lex.drugs.setdefault(word.lower(), word)
    for en, zh in glossary.terms(kind="drug").items():
        lex.drugs[zh] = en
    itemids = m.LabEvent.objects.filter(subject_id=subject_id).values("itemid").distinct()
    labels = m.DLabItem.objects.filter(itemid__in=itemids).values_list("label", flat=True)
    for term in [*LAB_ALIASES, *VITAL_ALIASES, *labels, *glossary.terms(kind="lab"), *glossary.terms(kind="vital")]:
        if not term:
            continue
        if len(term) <= 3:
            for spelling in {term.upper(), term.capitalize()}:
                lex.short_labs[spelling] = term
        else:
            lex.labs[term.lower()] = term
    for kind in ("lab", "vital"):
        for en, zh in glossary.terms(kind=kind).items():
            lex.labs[zh] = en
    return lex


@dataclass(frozen=True)
class Premise:
    kind: str  # dose | lab | date
    lookup: str  # what the tool is asked for (drug or lab name); the date for a date
    stated: str  # as written
    value: Decimal | None = None
    unit: str | None = None
    scheduled: bool = False  # dates: the clause schedules something

    @property
    def key(self) -> tuple:
        return (self.kind, self.lookup.lower(), self.value, unit_key(self.unit) if self.kind == "dose" else None)


def _terms_in(text: str, terms: dict[str, str], *, case: bool = False) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, lookup) occurrences, longest terms first."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for term in sorted(terms, key=len, reverse=True):
        ascii_term = term.isascii()
        pattern = rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])" if ascii_term else re.escape(term)
        flags = 0 if case or not ascii_term else re.IGNORECASE
        for hit in re.finditer(pattern, text, flags):
            span = hit.span()
            if any(a < span[1] and span[0] < b for a, b in taken):
                continue
            taken.append(span)
            found.append((span[0], span[1], terms[term]))
    return sorted(found)


def _clause_start(text: str, pos: int) -> int:
    starts = [hit.end() for hit in _CLAUSE.finditer(text, 0, pos)]
    return starts[-1] if starts else 0


def find_premises(*, text: str, lexicon: Lexicon) -> list[Premise]:
    out: list[Premise] = []
    drugs = _terms_in(text, lexicon.drugs)
    labs = _terms_in(text, lexicon.labs) + _terms_in(text, lexicon.short_labs, case=True)
    for hit in _DOSE.finditer(text):
        start = _clause_start(text, hit.start())
        before = [d for d in drugs if start <= d[0] and d[1] <= hit.start() and hit.start() - d[1] <= _MAX_GAP]
        after = [d for d in drugs if hit.end() <= d[0] <= hit.end() + _DRUG_AFTER_GAP]
        if after and not before and re.fullmatch(r"\s*(?:of\s+)?(?:the\s+)?", text[hit.end() : after[0][0]]):
            before = after[:1]
        if not before or _is_proposal(text[start : hit.start()]):
            continue
        d = before[-1]
        out.append(
            Premise(
                "dose",
                d[2],
                text[min(d[0], hit.start()) : max(d[1], hit.end())],
                as_decimal(hit.group(1)),
                _DOSE_UNITS[hit.group(2).lower()],
            )
        )
    dose_spans = [h.span() for h in _DOSE.finditer(text)]
    for start, end, lookup in sorted(labs):
        hit = _LAB_VALUE.match(text, end)
        if not hit or _THRESHOLD.search(text[_clause_start(text, start) : hit.start(1)]):
            continue
        if any(a <= hit.start(1) < b for a, b in dose_spans) or _TIME_AFTER.match(text, hit.end()):
            continue
        unit = UNIT_AFTER.match(text, hit.end())
        values = [hit.group(1)]
        then = _THEN.match(text, unit.end() if unit else hit.end())
        if then:
            values.append(then.group(1))
        for raw in values:
            out.append(Premise("lab", lookup, f"{text[start:end]} {raw}", as_decimal(raw), unit and unit.group(1)))
    for hit in _DATE.finditer(text):
        y, mo, d = (hit.group(1), hit.group(2), hit.group(3)) if hit.group(1) else hit.group(4, 5, 6)
        day = f"{int(y):04d}-{int(mo):02d}-{int(d):02d}"
        clause = text[_clause_start(text, hit.start()) : hit.end() + 40]
        out.append(Premise("date", day, hit.group(0), scheduled=bool(_SCHEDULE.search(clause))))
    return out


def _is_proposal(before: str) -> bool:
    """Whether the dose right after ``before`` (its clause so far) is proposed rather than stated."""
    if _STATED_BEFORE.search(before):
        return False  # "instead of 2.5 mg", "currently on apixaban 2.5 mg": what the patient is on
    if _TARGET_BEFORE.search(before):
        return True
    if re.search(r"\bfrom\b(?!.*\bfrom\b).*\b(?:to|into)\b", before, re.IGNORECASE):
        return True  # "switch from amiodarone to warfarin 5 mg": the target of the change
    if _FROM_BEFORE.search(before) or _CHANGE.search(before):
        return False
    return bool(_PROPOSE.search(before))


# --- checking against the record ---------------------------------------------------------------


@dataclass
class PremiseFinding:
    reason: str  # dose_mismatch | no_order | lab_mismatch | no_result | date_after_cutoff | date_no_record
    stated: str
    record: str
    forms: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "premise",
            "reason": self.reason,
            "stated": self.stated,
            "record": self.record,
            "forms": self.forms,
            "message": f"possible false premise: the request says {self.stated!r}; the record: {self.record}",
        }


def _entries(result: dict[str, Any]) -> list[dict[str, Any]] | None:
    if not isinstance(result, dict) or "error" in result:
        return None
    return [e["resource"] for e in result.get("entry") or [] if isinstance(e, dict) and "resource" in e]


def _order_doses(order: dict[str, Any]) -> tuple[list[tuple[Decimal, str | None]], str]:
    dosage = (order.get("dosageInstruction") or [{}])[0]
    doses: list[tuple[Decimal, str | None]] = []
    for dr in dosage.get("doseAndRate") or []:
        q = dr.get("doseQuantity") or {}
        if isinstance(q.get("value"), int | float):
            doses.append((as_decimal(str(q["value"])), q.get("unit")))
        text = (dr.get("doseRange") or {}).get("text") or ""
        for raw, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([A-Za-z/]+)?", text):
            doses.append((as_decimal(raw), unit or None))
    drug = (order.get("medicationCodeableConcept") or {}).get("text") or "?"
    when = (order.get("authoredOn") or "")[:16]
    shown = f"{drug} {dosage.get('text', '')}".strip() + f" ({order.get('id')}, {order.get('status')}, {when})"
    return doses, shown


def _dose_unit_matches(stated: str | None, unit: str | None) -> bool:
    if stated is None or unit is None:
        return True
    a, b = unit_key(stated), unit_key(unit)
    return a == b or b.split("/", 1)[0] == a


def _check_dose(p: Premise, *, ctx: ToolContext) -> tuple[str, str] | None:
    result = execute_tool(
        name="MedicationRequest.search", arguments={"subject_id": ctx.subject_id, "medication": p.lookup}, context=ctx
    )
    orders = _entries(result)
    if orders is None:
        return None
    if not orders:
        return "no_order", f"no order of {p.lookup} before {ctx.current_date}"
    shown = []
    for order in orders:
        doses, text = _order_doses(order)
        if any(v == p.value and _dose_unit_matches(p.unit, u) for v, u in doses):
            return None
        shown.append(text)
    return "dose_mismatch", "; ".join(shown[:3])


def _tolerance(value: Decimal) -> Decimal:
    exponent = value.as_tuple().exponent
    return Decimal(5).scaleb(min(int(exponent), 0) - 1)


def _observed(res: dict[str, Any]) -> list[tuple[Decimal, str, str]]:
    out = []
    for q in [res.get("valueQuantity"), *[c.get("valueQuantity") for c in res.get("component") or []]]:
        if isinstance(q, dict) and isinstance(q.get("value"), int | float):
            out.append((as_decimal(str(q["value"])), q.get("unit") or "", (res.get("effectiveDateTime") or "")[:16]))
    return out


def _check_lab(p: Premise, *, ctx: ToolContext) -> tuple[str, str] | None:
    result = execute_tool(
        name="Observation.search",
        arguments={"subject_id": ctx.subject_id, "code": p.lookup, "_count": 100},
        context=ctx,
    )
    found = _entries(result)
    if found is None:
        return None  # not a code the record knows: not a lab premise after all
    values = [v for res in found for v in _observed(res)]
    if not values:
        return "no_result", f"no {p.lookup} result before {ctx.current_date}"
    tol = _tolerance(p.value)
    if any(abs(v - p.value) <= tol for v, _, _ in values):
        return None
    latest = values[0]
    others = ", ".join(str(v) for v, _, _ in values[1:5])
    more = f"; earlier: {others}" if others else ""
    return "lab_mismatch", f"latest {p.lookup} {latest[0]} {latest[1]} on {latest[2]}{more}".replace("  ", " ")


def _check_date(p: Premise, *, ctx: ToolContext) -> tuple[str, str] | None:
    day = dt.date.fromisoformat(p.lookup)
    if day >= ctx.current_date:
        if p.scheduled:
            return None
        return "date_after_cutoff", f"the current date is {ctx.current_date}: nothing of {day} is charted yet"
    obs = execute_tool(
        name="Observation.search",
        arguments={"subject_id": ctx.subject_id, "date_from": p.lookup, "date_to": p.lookup, "_count": 1},
        context=ctx,
    )
    if _entries(obs):
        return None
    encounters = _entries(execute_tool(name="Encounter.search", arguments={"subject_id": ctx.subject_id}, context=ctx))
    for enc in encounters or []:
        period = enc.get("period") or {}
        start, end = (period.get("start") or "")[:10], (period.get("end") or "9999-12-31")[:10]
        if start and start <= p.lookup <= end:
            return None
    return "date_no_record", f"nothing charted on {day} and no admission spans it"


_CHECKS = {"dose": _check_dose, "lab": _check_lab, "date": _check_date}


def check_premises(*, texts: dict[str, str], context: ToolContext, lexicon: Lexicon) -> list[PremiseFinding]:
    """Premises of the request forms (``{form: text}``) that the record contradicts, one per premise."""
    grouped: dict[tuple, tuple[Premise, list[str]]] = {}
    for form, text in texts.items():
        for premise in find_premises(text=text or "", lexicon=lexicon):
            kept, forms = grouped.setdefault(premise.key, (premise, []))
            if premise.scheduled and not kept.scheduled:  # a date some form schedules is scheduled
                grouped[premise.key] = (premise, forms)
            if form not in forms:
                forms.append(form)
    out = []
    for premise, forms in grouped.values():
        verdict = _CHECKS[premise.kind](premise, ctx=context)
        if verdict is not None:
            out.append(PremiseFinding(verdict[0], premise.stated, verdict[1], forms))
    return out
