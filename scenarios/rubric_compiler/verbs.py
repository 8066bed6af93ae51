"""The leading verb of a rubric item, and what kind of claim it makes."""

from __future__ import annotations

import re

# Verbs that ask for a stated fact (the answer must contain it).
MENTION_EN = frozenset(
    """
    names name mentions mention identifies identify lists list states state reports report gives give notes
    note says say cites cite includes include recognizes recognises recognize documents document records
    describes describe flags confirms confirm quotes quote specifies specify indicates indicate shows finds
    provides provide uses use calculates calculate computes compute estimates estimate retrieves returns
    """.split()  # noqa: SIM905
)
# Verbs that ask for reasoning, advice or conduct: a reader has to judge them.
JUDGEMENT_EN = frozenset(
    """
    explains explain links link relates relate interprets interpret recommends recommend suggests suggest supports
    support justifies justify compares compare considers consider weighs weigh assesses assess evaluates evaluate
    discusses discuss proposes propose advises advise summarizes summarises summarize asks ask checks check warns
    reassures counsels plans prioritizes distinguishes clarifies tailors adjusts attributes acknowledges
    notices reconciles verifies answers offers addresses connects
    applies apply reasons infers
    """.split()  # noqa: SIM905
)
MENTION_ZH = (
    "指出",
    "提到",
    "提及",
    "列出",
    "识别",
    "说明",
    "报告",
    "给出",
    "写明",
    "包含",
    "引用",
    "注明",
    "描述",
    "确认",
    "记录",
    "使用",
    "计算",
    "得出",
    "引述",
    "提供",
    "陈述",
    "表明",
)
JUDGEMENT_ZH = (
    "解释",
    "联系",
    "将",
    "建议",
    "支持",
    "评估",
    "询问",
    "比较",
    "考虑",
    "权衡",
    "讨论",
    "推荐",
    "核对",
    "警告",
    "区分",
    "关联",
    "以",
    "仅",
    "向",
    "结合",
    "判断",
    "按",
    "沿用",
    "应用",
    "推理",
)
# Who the item is about: the release's read prompts write "The answer …", its prose Write/Update prompt "The model
# …"; translations open 答案 / 回答 / 该回答 / 模型 (semantics file §3).
SUBJECT_EN = r"(?:(?:the|this)\s+)?(?:answer|response|assistant|model)"
SUBJECT_ZH = r"(?:该回答|该答案|答案|回答|模型|回复)"
_LEAD_EN = re.compile(r"^\s*" + SUBJECT_EN + r"\s+", re.IGNORECASE)
# Adverbs the release writes before the verb ("The answer correctly cites …", semantics file §3): manner, not
# a claim of their own. Any "-ly" word there is one ("accurately", "explicitly", "clearly", "appropriately").
# Two adverbs may be joined ("correctly and explicitly cites", "正确且明确地引用").
_ADVERB_EN = re.compile(r"\s*(?:[A-Za-z]+ly|also|both|and)\b(?:\s*,)?", re.IGNORECASE)
ADVERBS_EN = r"(?:(?:[a-z]+ly|also|and)\s+)*"  # for the rules' own lead patterns
ADVERBS_ZH = r"(?:(?:正确|准确|明确|清楚|清晰|恰当|适当|合理|完整|同时|也|如实|具体)(?:无误)?地?(?:且|并且|而且|、)?)*"
_LEAD_ZH = re.compile(r"^\s*" + SUBJECT_ZH + r"?\s*" + ADVERBS_ZH)


def lead_en(text: str) -> tuple[str, int]:
    """(first verb in lower case, end offset of it) of an English item, skipping 'The answer (correctly) ...'."""
    m = _LEAD_EN.match(text)
    start = m.end() if m else 0
    while (adverb := _ADVERB_EN.match(text, start)) and not _is_verb(adverb.group().strip(" ,").lower()):
        start = adverb.end()
    word = re.match(r"\s*([A-Za-z]+)", text[start:])
    if not word:
        return "", start
    return word.group(1).lower(), start + word.end()


def _is_verb(word: str) -> bool:
    return word in MENTION_EN or word in JUDGEMENT_EN


def lead_zh(text: str) -> tuple[str, int]:
    """(verb, end offset) of a Chinese item, skipping 答案 and adverbs (正确地 …); 了 after the verb is part of it."""
    offset = _LEAD_ZH.match(text).end()
    stripped = text[offset:]
    for verb in sorted((*MENTION_ZH, *JUDGEMENT_ZH), key=len, reverse=True):
        if stripped.startswith(verb):
            end = offset + len(verb)
            return verb, end + (1 if text[end : end + 1] == "了" else 0)
    return "", offset


def is_judgement(text: str, *, lang: str) -> bool:
    if lang == "en":
        verb, _end = lead_en(text)
        return verb in JUDGEMENT_EN
    verb, _end = lead_zh(text)
    return verb in JUDGEMENT_ZH


def is_mention(text: str, *, lang: str) -> bool:
    if lang == "en":
        verb, _end = lead_en(text)
        return verb in MENTION_EN
    verb, _end = lead_zh(text)
    return verb in MENTION_ZH


# "将<X>引用为<值>" (a translation of "cites <X> as <v>"): the mention verb after its object; read as "引用<X>为<值>".
# Interpretations keep their order (将<X>解读为…: rules_status reads them so).
_OBJECT_FIRST_ZH = re.compile(
    r"(?:将|把)(?P<x>[^，,。；;]{1,20}?)(?P<v>引用|引述|记录|报告|列|写|标注|给出|描述|注明|计算)为"
)


def normalise_zh(text: str) -> str:
    return _OBJECT_FIRST_ZH.sub(lambda m: f"{m.group('v')}{m.group('x')}为", text, count=1)
