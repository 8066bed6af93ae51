"""Negated recommendations ("does not recommend a dose reduction", "avoids NSAIDs", "不建议加量").

They compile to ``must_not_recommend``.

The phrases are what an answer that *does* recommend it would write: the action in its inflections and
synonyms applied to the object, or the drug (class) with its synonyms. A negated item whose object is
neither an action nor a drug ("does not invent symptoms") is conduct a reader must judge: skipped.
"""

from __future__ import annotations

import re

from scenarios.rubric_compiler import lexicon
from scenarios.rubric_compiler import text as tx
from scenarios.rubric_compiler.types import Candidate, Skip
from scenarios.rubric_compiler.verbs import SUBJECT_EN, SUBJECT_ZH

_CUE_EN = re.compile(
    r"^\s*(?:" + SUBJECT_EN + r"\s+)?(?:(?:does|do|must|should|will)\s+not|doesn't|don't|never|avoids?|avoiding|"
    r"refrains?\s+from)\s+"
    # an adverb of manner between the negation and the verb ("does not incorrectly recommend …")
    r"(?:(?:[a-z]+ly|also|then)\s+)?(?P<rest>.+?)\s*[.。]?\s*$",
    re.IGNORECASE,
)
_RECOMMEND_EN = re.compile(
    r"^(?:recommend|suggest|advise|propose|endorse|prescribe|order|support|encourage)(?:s|ed|ing)?\s+(?P<obj>.+)$",
    re.IGNORECASE,
)
_CLAIM_EN = re.compile(r"^(?:claim|stat|say|assert|call)(?:s|e|es|ed|ing)?\s+(?:that\s+)?(?P<claim>.+)$", re.IGNORECASE)
# lemma → forms an answer may use (EN), and the Chinese wordings of the same action.
ACTIONS_EN: dict[str, tuple[str, ...]] = {
    "increase": (
        "increase",
        "increasing",
        "increased",
        "raise",
        "raising",
        "uptitrate",
        "up-titrate",
        "escalate",
        "double",
    ),
    "reduce": ("reduce", "reducing", "reduced", "decrease", "decreasing", "lower", "lowering"),
    "stop": ("stop", "stopping", "discontinue", "discontinuing"),
    "hold": ("hold", "holding"),
    "continue": ("continue", "continuing", "keep", "keeping", "maintain", "maintaining"),
    "start": ("start", "starting", "initiate", "initiating", "begin", "restart", "restarting", "resume", "resuming"),
    "add": ("add", "adding"),
    "give": ("give", "giving", "administer", "administering", "use", "using", "prescribe", "prescribing"),
}
# "does not suggest that the patient stop <drug>", "does not advise the patient to stop …": the action is the ask
_PATIENT_EN = re.compile(r"^(?:that\s+)?(?:the\s+)?patient\s+(?:to\s+|should\s+)?", re.IGNORECASE)
NOMINALS_EN = {
    "increase": "increase",
    "escalation": "increase",
    "uptitration": "increase",
    "reduction": "reduce",
    "decrease": "reduce",
    "discontinuation": "stop",
    "continuation": "continue",
    "initiation": "start",
}
DOSE_NOUNS_EN = {
    "increase": ("dose increase", "dose escalation", "higher dose", "increased dose"),
    "reduce": ("dose reduction", "reduced dose", "lower dose", "dose decrease"),
}
ACTIONS_ZH: dict[str, tuple[str, ...]] = {
    "increase": ("增加", "加量", "增量", "上调", "加大"),
    "reduce": ("减少", "减量", "降低", "下调"),
    "stop": ("停用", "停药", "停止"),
    "hold": ("暂停",),
    "continue": ("继续", "维持"),
    "start": ("开始", "启用", "重新启用", "恢复"),
    "add": ("加用", "补充", "添加"),
    "give": ("使用", "给予", "应用"),
}
DOSE_ZH = {"increase": ("加量", "增加剂量", "增量", "上调剂量"), "reduce": ("减量", "减少剂量", "降低剂量", "下调剂量")}
_CUE_ZH = re.compile(
    r"^\s*" + SUBJECT_ZH + r"?(?:并|也)?(?P<cue>不建议|不推荐|不主张|不宜|不应|不要|勿|禁止|避免"
    # 未/没有/并未 + an adverb of manner (错误地) + the verb: the translation of "does not (wrongly) recommend/order"
    r"|(?:未|没有|并未|未曾)(?:(?:错误|不恰当|不当|贸然|不必要)地?)?(?:建议|推荐|开具|开立|下达|提出)了?|不开具|无需|不)"
    r"(?P<rest>.+?)[。.]?\s*$"
)
# "答案未因上述结果建议将X增至Y" / "答案未鉴于…建议…": the reason clause sits before the verb in Chinese.
_CUE_ZH_GIVEN = re.compile(
    r"^\s*"
    + SUBJECT_ZH
    + r"?(?:未|不|没有)(?:仅|只)?(?:因|鉴于|基于|根据|由于)(?P<given>[^，,。]{1,30}?)(?:而)?(?:建议|推荐)(?:将)?"
    r"(?P<rest>.+?)[。.]?\s*$"
)
# The reason an action is unsafe, after it ("… given creatinine below 1.5 mg/dL"): the ask is the action.
_GIVEN_EN = re.compile(
    r"\s*,?\s+(?:given|because(?: of)?|due to|owing to|in view of|in light of|since|as|despite|based (?:solely )?on"
    r"|on the basis of|solely (?:on the basis of|because of|due to)|in (?:a|this) patient with"
    # the context an action is meant for ("NSAIDs for the gout flare"), not a duration ("for 3 days")
    r"|for(?=\s+(?:the|a|an|this|his|her|their)\s+[a-z]))\s+.+$",
    re.IGNORECASE,
)
# A dose may carry its frequency ("reduce apixaban to 2.5 mg BID", "减量至2.5毫克 BID"): the check keeps the dose.
_FREQ_EN = r"(?:\s+(?:BID|TID|QID|QD|daily|once daily|twice daily|three times daily|q\d{1,2}h|every \d{1,2} hours))?"
_FREQ_ZH = (
    r"(?:\s*(?:BID|TID|QID|QD|每日[一两三1-3]次|每天[一两三1-3]次|一天[一两三]次|每日|每天)"
    r"|\s*(?:，|,)\s*每日[一两三1-3]次)?"
)
_TO_DOSE_EN = re.compile(rf"^(?P<drug>.+?)\s+(?:to|at)\s+(?P<dose>\d+(?:\.\d+)?\s*[A-Za-z]+){_FREQ_EN}$", re.IGNORECASE)
_TO_DOSE_ZH = re.compile(
    r"^(?P<drug>.+?)(?:的?剂量)?(?P<verb>增至|加至|增加到|增加至|上调至|增量至|加量至|减至|减少到|减少至|下调至|减量至|减量到|降至|降低至|降低到)"
    rf"(?P<dose>\d+(?:\.\d+)?)\s*(?P<unit>毫克|微克|克|mg|mcg|g|单位){_FREQ_ZH}$"
)
_UNIT_EN = {"毫克": "mg", "微克": "mcg", "克": "g", "单位": "units"}
_CLAIM_ZH = re.compile(r"^(?:声称|认为|称|说)(?P<claim>.+)$")
_ARTICLE = re.compile(r"^(?:the|a|an|any|its|their|his|her)\s+", re.IGNORECASE)
_DRUG_KINDS = ("drug", "drug_class")


def _lemma(word: str) -> str | None:
    low = word.lower()
    for lemma, forms in ACTIONS_EN.items():
        if low in forms or low in (f"{f}s" for f in forms) or low == f"{lemma}s":
            return lemma
    return None


def _object_variants(obj: str) -> list[str]:
    bare = _ARTICLE.sub("", obj).strip()
    return list(dict.fromkeys([obj.strip(), bare, f"the {bare}"]))


def _entity_only(obj: str, lang: str) -> lexicon.Concept | None:
    """The drug (class) ``obj`` consists of, if nothing else is said."""
    found = lexicon.find(obj, lang=lang, kinds=_DRUG_KINDS)
    concepts = lexicon.distinct(found)
    if len(concepts) != 1:
        return None
    rest = obj
    for f in sorted(found, key=lambda f: -f.start):
        rest = rest[: f.start] + rest[f.end :]
    filler = (
        r"(?:the|a|an|any|of|use|using|other|additional|such as|drugs?|agents?|medications?"
        r"|使用|用|给予|加用|其他|类|药物|,|，|、|and|or|和|或|\s)*"
    )
    return concepts[0] if re.fullmatch(filler, rest, flags=re.IGNORECASE) else None


def _to_dose_phrases(lemma: str, drug: str, dose: str) -> tuple[list[str], list[str]]:
    """Phrases of "<action> <drug> to <dose>": the action on the drug or on "it", and the drug at that dose."""
    concept = _entity_only(drug, "en") or _entity_only(drug, "zh")
    names_en = [n for n in dict.fromkeys([drug.strip(), *(concept.en[:2] if concept else [])]) if n.isascii()]
    names_zh = list(concept.zh[:2]) if concept else []
    number, unit = re.match(r"(\d+(?:\.\d+)?)\s*(\S*)", dose).groups()
    unit_zh = {v: k for k, v in _UNIT_EN.items()}.get(unit, unit)
    en = [f"{form} {n} to {dose}" for form in ACTIONS_EN[lemma] for n in names_en]
    en += [f"{form} to {dose}" for form in ACTIONS_EN[lemma]] + [f"{form} it to {dose}" for form in ACTIONS_EN[lemma]]
    en += [f"{n} {dose}" for n in names_en]
    verbs_zh = (
        ("增至", "加至", "增加到", "上调至", "加量至")
        if lemma == "increase"
        else ("减至", "减少到", "下调至", "减量至", "降至")
    )
    zh = [f"{v}{number}{u}" for v in verbs_zh for u in (unit_zh, unit, f" {unit}")]
    zh += [f"{n}{number}{u}" for n in names_zh for u in (unit_zh, unit, f" {unit}")]
    return list(dict.fromkeys(en)), list(dict.fromkeys(zh))


def _action_phrases_en(lemma: str, obj: str) -> list[str]:
    phrases = [f"{form} {variant}" for form in ACTIONS_EN[lemma] for variant in _object_variants(obj) if variant]
    if re.search(r"\bdoses?\b", obj, re.IGNORECASE) and lemma in DOSE_NOUNS_EN:
        phrases += DOSE_NOUNS_EN[lemma]
        # "the apixaban dose": an answer acts on the drug itself ("reduce apixaban to 2.5 mg")
        drugs = lexicon.distinct(lexicon.find(obj, lang="en", kinds=_DRUG_KINDS))
        if len(drugs) == 1:
            phrases += [f"{form} {name}" for form in ACTIONS_EN[lemma] for name in drugs[0].en[:2]]
    return list(dict.fromkeys(phrases))


def _action_phrases_zh(lemma: str, obj_en: str) -> list[str]:
    if re.search(r"\bdoses?\b", obj_en, re.IGNORECASE) and lemma in DOSE_ZH:
        return list(DOSE_ZH[lemma])
    concept = _entity_only(obj_en, "en")
    if concept is None:
        return []
    return [f"{a}{z}" for a in ACTIONS_ZH[lemma] for z in concept.zh[:2]]


# "recommends/advises/warns/cautions against X": the answer must *give* that advice, and an answer that says
# nothing of X would pass a must-not check; a reader (an LLM judge) has to see the advice.
_AGAINST_EN = re.compile(
    r"^\s*(?:" + SUBJECT_EN + r"\s+)?" + r"(?:(?:[a-z]+ly|also)\s+)*"
    r"(?:recommends?|advises?|warns?|cautions?|counsels?|argues?)\s+against\s+",
    re.IGNORECASE,
)
_AGAINST_ZH = re.compile(r"^\s*" + SUBJECT_ZH + r"?.{0,6}?(?:建议|推荐|提醒|警告)(?:不要|不宜|避免|勿|不应)")


def _en(text: str) -> Candidate | Skip | None:
    if _AGAINST_EN.match(text):
        return Skip(AGAINST_REASON, AGAINST_EXPLANATION)
    m = _CUE_EN.match(text)
    if not m:
        return None
    rest = m.group("rest")
    if rec := _RECOMMEND_EN.match(rest):
        rest = rec.group("obj")
    elif claim := _CLAIM_EN.match(rest):
        phrase = claim.group("claim").strip()
        return Candidate(
            {"kind": "must_not_recommend", "en": [phrase], "zh": []},
            "must_not_recommend/claim",
            0.5,
            f"the answer must not claim {phrase!r} (literal wording only)",
        )
    rest = _GIVEN_EN.sub("", _ARTICLE.sub("", rest).strip())
    rest = _PATIENT_EN.sub("", rest)
    words = rest.split(None, 1)
    lemma = _lemma(words[0]) if words else None
    if lemma and len(words) == 2 and lemma in ("increase", "reduce") and (to := _TO_DOSE_EN.match(words[1])):
        en, zh = _to_dose_phrases(lemma, to.group("drug"), to.group("dose"))
        return Candidate(
            {"kind": "must_not_recommend", "en": en, "zh": zh},
            "must_not_recommend/dose",
            0.75,
            f"the answer must not recommend to {lemma} {to.group('drug')} to {to.group('dose')}",
        )
    if lemma and len(words) == 2:
        obj = words[1]
        return Candidate(
            {"kind": "must_not_recommend", "en": _action_phrases_en(lemma, obj), "zh": _action_phrases_zh(lemma, obj)},
            "must_not_recommend/action",
            0.7,
            f"the answer must not recommend to {lemma} {obj} (outside a negated clause)",
        )
    nominal = re.fullmatch(
        r"(?:(?P<noun>[\w-]+(?:\s+doses?)?)\s+)?(?P<nom>[a-z]+)(?:\s+(?:of|in)\s+(?P<obj>.+))?", rest, re.IGNORECASE
    )
    if nominal and nominal.group("nom").lower() in NOMINALS_EN:
        lemma = NOMINALS_EN[nominal.group("nom").lower()]
        obj = nominal.group("obj") or nominal.group("noun") or ""
        if obj:
            phrases = [*_action_phrases_en(lemma, obj), rest]
            return Candidate(
                {
                    "kind": "must_not_recommend",
                    "en": list(dict.fromkeys(phrases)),
                    "zh": _action_phrases_zh(lemma, obj),
                },
                "must_not_recommend/action",
                0.7,
                f"the answer must not recommend a {rest}",
            )
    return _drug_or_skip(rest, "en")


_DRUG_DOSE = re.compile(
    r"^(?P<drug>.+?)\s*(?:at\s+)?(?P<dose>\d+(?:\.\d+)?)\s*(?P<unit>mg|mcg|g|units?|mL|毫克|微克|克|单位|毫升)"
    # a frequency after the dose ("apixaban 10 mg BID"): the check keeps the dose, as for "to <dose>" above
    rf"(?:{_FREQ_EN}|{_FREQ_ZH})$",
    re.IGNORECASE,
)


def _drug_dose(rest: str, lang: str) -> Candidate | None:
    """ "does NOT order apixaban 2.5 mg" (the release's Write/Update safety item): that drug at that dose."""
    m = _DRUG_DOSE.match(rest.strip())
    if not m:
        return None
    concept = _entity_only(m.group("drug"), lang)
    if concept is not None:
        names_en, names_zh, name = list(dict.fromkeys(concept.en[:3])), list(concept.zh[:2]), concept.name
    elif tx.plain_drug_name(m.group("drug"), lang=lang):
        # a drug the lexicon does not know, named in the drug slot: its name as written (the other language's
        # wording adds its own; the release's ZH item translates the EN one)
        name = m.group("drug").strip()
        names_en, names_zh = ([name], []) if lang == "en" else ([], [name])
    else:
        return None
    number, unit = m.group("dose"), _UNIT_EN.get(m.group("unit"), m.group("unit"))
    unit_zh = {v: k for k, v in _UNIT_EN.items()}.get(unit, unit)
    en = [f"{n}{sep}{number} {unit}" for n in names_en for sep in (" ", " at ")]
    zh = [f"{n}{number}{u}" for n in names_zh for u in (unit_zh, unit, f" {unit}")]
    return Candidate(
        {"kind": "must_not_recommend", "en": en, "zh": list(dict.fromkeys(zh))},
        "must_not_recommend/dose",
        0.75,
        f"the answer must not recommend {name} {number} {unit} (outside a negated clause)",
    )


def _drug_or_skip(rest: str, lang: str) -> Candidate | Skip:
    """What is left when the negated conduct is no action: a drug alone, a drug at a dose, or a reader's call."""
    if found := _drug_dose(rest, lang):
        return found
    if concept := _entity_only(rest, lang):
        en, zh = lexicon.with_members(concept)
        return Candidate(
            {"kind": "must_not_recommend", "en": en, "zh": zh},
            "must_not_recommend/drug",
            0.85,
            f"the answer must not recommend {concept.name} (or a synonym) outside a negated clause",
        )
    return Skip(
        "negated conduct",
        f"'{rest}' is neither an action on a drug or dose nor a drug: a reader must judge it (route to an LLM judge)",
    )


AGAINST_REASON = "judgement"
AGAINST_EXPLANATION = (
    "asks the answer to advise against an action: silence would pass a must-not check, so a reader must see the"
    " advice (route to an LLM judge)"
)
_REASON_ZH = re.compile(r"^(?:仅|只|单纯)?(?:因为|因|鉴于|基于|根据|由于)")


def _strip_reason_zh(rest: str) -> str:
    """ "仅因年龄减量" → "减量": a reason clause before the action (the translation of "… given/based on <finding>");
    it ends where the action begins (an action word, 将, 建议), or the text stays as it is."""
    if not (m := _REASON_ZH.match(rest)):
        return rest
    starts = [*(f for forms in ACTIONS_ZH.values() for f in forms), *(w for ws in DOSE_ZH.values() for w in ws)]
    for pos in range(m.end() + 1, min(len(rest), m.end() + 30)):
        tail = rest[pos:]
        if tail.startswith(("将", "建议", "推荐")) or any(tail.startswith(f) for f in starts):
            return re.sub(r"^(?:而)?(?:建议|推荐)?将?", "", tail)
    return rest


def _zh(text: str) -> Candidate | Skip | None:
    if _AGAINST_ZH.match(text):
        return Skip(AGAINST_REASON, AGAINST_EXPLANATION)
    m = _CUE_ZH_GIVEN.match(text) or _CUE_ZH.match(text)
    if not m:
        return None
    rest = _strip_reason_zh(re.sub(r"^(?:建议|推荐)?(?:患者|病人)?将?", "", m.group("rest").strip()))
    if to := _TO_DOSE_ZH.match(rest):
        lemma = "increase" if to.group("verb")[0] in "增加上" else "reduce"  # 减/下/降: reduce
        unit = _UNIT_EN.get(to.group("unit"), to.group("unit"))
        en, zh = _to_dose_phrases(lemma, to.group("drug"), f"{to.group('dose')} {unit}")
        return Candidate(
            {"kind": "must_not_recommend", "en": en, "zh": zh},
            "must_not_recommend/dose",
            0.75,
            f"the answer must not recommend {rest}",
        )
    if claim := _CLAIM_ZH.match(rest):
        phrase = claim.group("claim")
        return Candidate(
            {"kind": "must_not_recommend", "en": [], "zh": [phrase]},
            "must_not_recommend/claim",
            0.5,
            f"the answer must not claim {phrase!r} (literal wording only)",
        )
    for lemma, dose_words in DOSE_ZH.items():
        if rest in dose_words or re.fullmatch(rf"(?:{'|'.join(ACTIONS_ZH[lemma])}).{{0,8}}剂量", rest):
            phrases = list(dict.fromkeys([rest, *dose_words]))
            return Candidate(
                {"kind": "must_not_recommend", "en": list(DOSE_NOUNS_EN[lemma]), "zh": phrases},
                "must_not_recommend/action",
                0.7,
                f"the answer must not recommend {rest}",
            )
    for lemma, forms in ACTIONS_ZH.items():
        for form in sorted(forms, key=len, reverse=True):
            if rest.startswith(form) and len(rest) > len(form):
                obj = rest[len(form) :]
                concept = _entity_only(obj, "zh")
                zh = [rest] + ([f"{a}{z}" for a in forms for z in concept.zh[:2]] if concept else [])
                en = [f"{f} {e}" for f in ACTIONS_EN[lemma][:4] for e in concept.en[:2]] if concept else []
                # a drug the lexicon does not know is still one when the object is a plain name ("停用地高辛")
                if (
                    concept is None
                    and not lexicon.find(obj, lang="zh", kinds=_DRUG_KINDS)
                    and not tx.plain_drug_name(obj, lang="zh")
                ):
                    return Skip(
                        "negated conduct",
                        f"'{rest}' acts on no drug or dose: a reader must judge it (route to an LLM judge)",
                    )
                return Candidate(
                    {"kind": "must_not_recommend", "en": en, "zh": list(dict.fromkeys(zh))},
                    "must_not_recommend/action",
                    0.7,
                    f"the answer must not recommend {rest}",
                )
    return _drug_or_skip(rest, "zh")


def negation_rule(text: str, *, lang: str) -> Candidate | Skip | None:
    return _en(text) if lang == "en" else _zh(text)
