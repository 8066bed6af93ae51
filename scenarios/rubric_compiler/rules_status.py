"""Interpretations and conclusions about a lab's range status → a ``term`` check on the status.

The release writes an Information Lookup turn's second and third items as "The answer correctly
interprets <lab> as within the normal range (<lo>–<hi> <unit>)" and "… concludes that <lab> is
<status>" (semantics file §3; ZH: "答案正确将<检验>解读为在正常范围内（…）", "得出<检验>正常的结论").
The claim is the status; the range in parentheses is the reference range that defines it, not a
second claim. The item compiles only when nothing but the lab, the status and that range is left.

Phrases are chosen so that one status does not match another's wording by accident ("normal" alone
would match "above the normal range", "low" would match "follow-up"): an answer must write the
status the way a clinician marks it (elevated, above the normal range, "(normal)", 偏高, 正常范围内 …).
"""

from __future__ import annotations

import re

from scenarios.rubric_compiler import lexicon
from scenarios.rubric_compiler import text as tx
from scenarios.rubric_compiler.types import Candidate, Skip
from scenarios.rubric_compiler.verbs import ADVERBS_EN, ADVERBS_ZH, SUBJECT_EN, SUBJECT_ZH, lead_en, lead_zh

STATUS_PHRASES: dict[str, tuple[list[str], list[str]]] = {
    "normal": (
        [
            "within normal",
            "within the normal",
            "within the reference",
            "within reference",
            "within range",
            "is normal",
            "are normal",
            "was normal",
            "remains normal",
            "normal)",
            "(normal",
            "normal,",
            "normal.",
            "normal;",
            "normal renal function",
            "unremarkable",
        ],
        ["在正常范围内", "正常范围内", "正常）", "（正常", "正常，", "正常。", "正常；", "属正常", "为正常", "均正常"],
    ),
    "high": (
        [
            "elevated",
            "above the normal",
            "above normal",
            "above the reference",
            "above the upper",
            "above the ",  # "above the 0.4–1.1 mg/dL range", "above the threshold"
            "above range",
            "is high",
            "high (",
            "(high",
            "high)",
            "high,",
            "high.",
            "raised",
        ],
        ["偏高", "升高", "高于正常", "高于参考", "增高", "高于上限", "高于"],
    ),
    "low": (
        [
            "below the normal",
            "below normal",
            "below the reference",
            "below the lower",
            "below the ",
            "below range",
            "is low",
            "low (",
            "(low",
            "low)",
            "low,",
            "low.",
            "decreased",
            "reduced",
        ],
        ["偏低", "降低", "低于正常", "低于参考", "减低", "低于下限", "低于"],
    ),
}
# What the item may say for each status (EN / ZH wording of the item, not of the answer).
_STATUS_EN = [
    (
        "high",
        r"\b(?:above (?:the )?(?:normal|reference) (?:range|limits?)|above (?:the )?upper limit"
        r"|elevated|high|raised)\b",
    ),
    (
        "low",
        r"\b(?:below (?:the )?(?:normal|reference) (?:range|limits?)|below (?:the )?lower limit"
        r"|low|decreased|reduced)\b",
    ),
    ("normal", r"\b(?:(?:within|in) (?:the )?(?:normal|reference) (?:range|limits)|normal|unremarkable)\b"),
]
_STATUS_ZH = [
    ("high", r"高于正常(?:范围|上限)?|高于参考(?:范围|值)?|偏高|升高|增高"),
    ("low", r"低于正常(?:范围|下限)?|低于参考(?:范围|值)?|偏低|降低|减低"),
    ("normal", r"(?:在|处于)?正常范围内|在参考范围内|正常"),
]
STATUS_PATTERNS_EN, STATUS_PATTERNS_ZH = _STATUS_EN, _STATUS_ZH
_VERBS_EN = frozenset(
    [
        "interprets",
        "interpret",
        "concludes",
        "conclude",
        "identifies",
        "identify",
        "recognizes",
        "recognises",
        "notes",
        "states",
        "classifies",
        "describes",
        "reports",
        "finds",
        "determines",
    ]
)
_VERBS_ZH = ("将", "解读", "得出", "指出", "判断", "识别", "说明", "认为")
# "interprets … as": 解读为 and its translations 解释为 / 判读为 / 理解为 / 判定为 / 视为 after the subject.
_INTERPRET_ZH = re.compile(r"(?P<v>(?:解读|解释|判读|理解|判定|认定|视)为)")
# "concludes (that)": 得出结论 / 总结出 / 推断出 / 判定 / 结论为 (the conclusion follows).
_CONCLUDE_ZH = re.compile(
    r"^\s*" + SUBJECT_ZH + r"?\s*" + ADVERBS_ZH + r"(?P<v>总结出?|推断出?|判定|认定|确定|结论为|结论是)"
)
_RANGE = re.compile(r"\s*[(（][^()（）]*\d[^()（）]*[)）]")
_FILLER_EN = frozenset(
    "as that is are was remains within range normal limits reference the its level value result results".split()  # noqa: SIM905
)
_FILLER_ZH = "将解读为的结论得出指出判断识别说明认为处于在范围内"


def status_spans(text: str, patterns: list[tuple[str, str]]) -> list[tuple[str, int, int]]:
    """(status, start, end) of each range status an item's wording states (for other rules)."""
    return _status_in(text, patterns)


def _status_in(text: str, patterns: list[tuple[str, str]]) -> list[tuple[str, int, int]]:
    out = []
    for status, pattern in patterns:
        for m in re.finditer(pattern, text, re.IGNORECASE):
            if not any(a < m.end() and m.start() < b for _s, a, b in out):
                out.append((status, m.start(), m.end()))
    return out


def _lead(text: str, lang: str) -> tuple[str, int] | None:
    """(verb, end) of an interpretation or conclusion; None when the item is neither."""
    verb, end = lead_en(text) if lang == "en" else lead_zh(text)
    if lang == "en":
        return (verb, end) if verb in _VERBS_EN else None
    if verb in _VERBS_ZH:
        return verb, end
    if m := _CONCLUDE_ZH.match(text):
        return m.group("v"), m.end()
    return (verb, end) if "解读" in text or "结论" in text else None


def status_rule(text: str, *, lang: str) -> Candidate | Skip | None:
    lead = _lead(text, lang)
    if lead is None:
        return None
    verb, end = lead
    ranges = [m.span() for m in _RANGE.finditer(text)]
    masked = "".join(" " if any(a <= i < b for a, b in ranges) else ch for i, ch in enumerate(text))
    analytes = lexicon.analyte_spans(masked)  # the range's unit is no analyte ("mg" of mg/dL is not Mg)
    if len({key for _s, _e, key in analytes}) > 1:
        return None
    statuses = _status_in(text[end:], _STATUS_EN if lang == "en" else _STATUS_ZH)
    if len({s for s, _a, _b in statuses}) != 1:
        return None if not statuses else Skip("several facts", "names more than one range status")
    status = statuses[0][0]
    spans = [(0, end), *[(s, e) for s, e, _k in analytes], *[(end + a, end + b) for _s, a, b in statuses]]
    spans += ranges  # the reference range defining the status
    # ZH "将<检验>解读/解释/判读为<状态>" (the translation of "interprets … as"): the verb sits after the subject.
    interpret = _INTERPRET_ZH.search(text, end) if lang == "zh" else None
    if interpret:
        spans.append(interpret.span("v"))
    rest = _rest(text, lang, spans, verb)
    slot = None
    if rest:
        # "interprets <any lab> as <status>": the subject slot names what the status is of
        slot_end = interpret.start("v") if interpret else end + statuses[0][1]
        slot = tx.subject_slot(text, end, slot_end, lang=lang)
        if slot is not None:
            rest = _rest(text, lang, [*spans, slot], verb)
    if not analytes and (slot is None or rest):
        return None  # no subject this rule can name: another rule (or a reader) takes the item
    if rest:
        return Skip("partial", f"a check on the status {status!r} would miss: {rest}")
    en, zh = STATUS_PHRASES[status]
    return Candidate(
        {"kind": "term", "en": list(en), "zh": list(zh)},
        "term/range_status",
        0.75,
        f"the answer must call the value {status} (as a clinician marks it)",
    )


def _rest(text: str, lang: str, spans: list[tuple[int, int]], verb: str) -> str:
    if lang == "en":
        return " ".join(tx.residual_en(text, spans, _FILLER_EN | {verb}))
    return tx.residual_zh(text, spans, _FILLER_ZH)


# "… concludes that no apixaban dose reduction is needed" (the release's CR conclusion on a dose): the answer
# must say the dose stays, in one of the ways clinicians write it.
NO_CHANGE_PHRASES = (
    [
        "no dose reduction",
        "no dose adjustment",
        "no dose change",
        "no adjustment",
        "no reduction",
        "no change",
        "not require",
        "does not need",
        "doesn't need",
        "not needed",
        "not required",
        "no need",
        "unnecessary",
        "not necessary",
        "not warranted",
        "not indicated",
    ],
    [
        "无需减量",
        "无需调整",
        "不需要减量",
        "不需要调整",
        "无需减少",
        "无需改变",
        "无需",
        "不需要",
        "不必",
        "维持原剂量",
        "维持当前剂量",
    ],
)
_NO_CHANGE_EN = re.compile(
    r"^\s*" + SUBJECT_EN + r"\s+" + ADVERBS_EN + r"(?:concludes|states|determines|notes|identifies|recognizes)"
    # "concludes (that) no metformin (dose) adjustment is needed" (the release's rubric prompt writes it so)
    r"\s+(?:that\s+)?(?:no\s+(?P<a>.*?)\s*(?:dose\s+)?(?:reduction|adjustment|change|modification)\s+is\s+"
    r"(?:needed|required|necessary|warranted|indicated)|(?P<b>.*?)\s*dose\s+(?:reduction|adjustment|change)\s+is\s+not\s+"
    r"(?:needed|required|necessary|warranted|indicated))\s*[.]?\s*$",
    re.IGNORECASE,
)
_NO_CHANGE_ZH = re.compile(
    r"^\s*"
    + SUBJECT_ZH
    + r"?"
    + ADVERBS_ZH
    + r"(?:得出(?:了)?(?P<a>.*?)(?:无需|不需要|不必)(?:减少|调整|改变|减量)(?P<b>.*?)(?:剂量)?的结论"
    # "得出结论：无需调整…剂量" / "结论为无需…": the conclusion after 结论 (the translation of "concludes that")
    r"|(?:得出(?:了)?结论|结论(?:为|是))[：:，,]?\s*(?P<c>.*?)(?:无需|不需要|不必)(?:减少|调整|改变|减量)(?P<d>.*?)(?:剂量)?)\s*[。.]?\s*$"
)


def no_change_rule(text: str, *, lang: str) -> Candidate | None:
    m = (_NO_CHANGE_EN if lang == "en" else _NO_CHANGE_ZH).match(text)
    if not m:
        return None
    groups = ("a", "b") if lang == "en" else ("a", "b", "c", "d")
    rest = " ".join(filter(None, (m.group(g) for g in groups))).strip()
    if rest:
        drugs = lexicon.find(rest, lang=lang, kinds=("drug", "drug_class"))
        for f in sorted(drugs, key=lambda f: -f.start):
            rest = rest[: f.start] + rest[f.end :]
        rest = re.sub(r"(?:the|its|her|his|current|剂量|的|\s)+", " ", rest, flags=re.IGNORECASE).strip()
        if rest and not tx.plain_drug_name(rest, lang=lang):
            return None  # says more than that the dose (of one drug, known to the lexicon or not) stays
    en, zh = NO_CHANGE_PHRASES
    return Candidate(
        {"kind": "term", "en": list(en), "zh": list(zh)},
        "term/no_dose_change",
        0.65,
        "the answer must say the dose needs no change",
    )
