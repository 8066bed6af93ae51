"""Release-style rubric items, generated from the release's rubric grammar, for measuring the rubric compiler.

The grammar is that of ``shared/formats/pab-release-semantics.md`` §3 and of the release's rubric
prompts (read, not copied): Information Lookup 3 items (cite, interpret, conclude), Data Gathering
4–5 (each value, a relation, a conclusion), Clinical Reasoning 5–6 (value, threshold, reasoning,
recommendation, safety), Write/Update in the prose style (drug at dose and frequency for an
indication, dose range with an equivalent class, route + frequency, indication, "does NOT order")
and the field style (one item per argument field, synonyms listed, one negative safety item). The
Chinese item is a translation of the English one, opening 答案…, drugs and units translated, BID kept.
Every sentence and value here is our own. Paraphrase variation: adverbs before the verb or none,
verb synonyms, "as"/"of"/"at"/"is", articles.

Three vocabularies: ``dev`` (labs/drugs the compiler may be tuned on), ``heldout`` (other labs,
other drugs, other seeds; measured twice, spent) and ``heldout2`` (a third set of labs and drugs in neither,
same grammar, frozen before the third tuning round as ``rubric_items_heldout2.jsonl``). Each item carries
the turn's gold answer (EN, ZH), a value-perturbed answer (every number changed, status words flipped),
the gold write call and a perturbed one, and ``expect``: ``check`` (a machine check can verify all of it)
or ``judgement`` (reasoning, relations, or more than one check can verify, e.g. a bound on a value or
"no other write tool": must stay unscored). Usage::

    python bench/rubric_items.py dev --turns 48 --seed 1 > tests/scenarios/data/rubric_items_dev.jsonl

The dev split grew with the release's documented grammar after the held-out split was frozen (ZH 解释为 / 判读为
and 得出结论：…, 引用了…值 without 为, "concludes that no <drug> dose adjustment is needed", "does not recommend
reducing the <drug> dose", "does NOT order <drug> <dose>", the field-style call and safety items): the frozen
``rubric_items_heldout.jsonl`` is the output of this generator at commit 702e784 and is never regenerated.
``rubric_items_heldout2.jsonl`` is ``python bench/rubric_items.py heldout2 --turns 48 --seed 33`` at the commit
that added it (frozen before tuning; never regenerated). The release prompts' further forms (grammar 3) and the
split ``rubric_items_heldout3.jsonl`` are written by ``bench/rubric_items_v3.py``, which reuses this module.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

# (en, zh, unit, value, low, high) — status follows from value vs range
LABS = {
    "dev": [
        ("creatinine", "肌酐", "mg/dL", "0.9", "0.5", "1.2"),
        ("potassium", "血钾", "mEq/L", "5.6", "3.3", "5.1"),
        ("sodium", "血钠", "mEq/L", "131", "133", "145"),
        ("hemoglobin", "血红蛋白", "g/dL", "9.8", "12.0", "16.0"),
        ("glucose", "血糖", "mg/dL", "182", "70", "100"),
        ("magnesium", "血镁", "mg/dL", "1.9", "1.6", "2.6"),
    ],
    "heldout": [
        ("urea nitrogen", "尿素氮", "mg/dL", "38", "6", "20"),
        ("white blood cell count", "白细胞计数", "K/uL", "12.4", "4.0", "11.0"),
        ("lactate", "乳酸", "mmol/L", "1.4", "0.5", "2.0"),
        ("calcium", "血钙", "mg/dL", "8.1", "8.4", "10.3"),
        ("bicarbonate", "碳酸氢盐", "mEq/L", "19", "22", "32"),
        ("platelet count", "血小板计数", "K/uL", "210", "150", "440"),
    ],
    # frozen before the issue-33 round 3 tuning (rubric_items_heldout2.jsonl): labs in neither set above
    "heldout2": [
        ("albumin", "白蛋白", "g/dL", "2.9", "3.5", "5.2"),
        ("alanine aminotransferase", "丙氨酸氨基转移酶", "IU/L", "64", "0", "40"),
        ("phosphate", "血磷", "mg/dL", "4.8", "2.7", "4.5"),
        ("chloride", "血氯", "mEq/L", "101", "96", "108"),
        ("hematocrit", "红细胞压积", "%", "31.2", "36", "48"),
        ("troponin T", "肌钙蛋白T", "ng/mL", "0.08", "0", "0.01"),
    ],
}
# (en, zh, dose, route, freq, indication en, indication zh, class en, class zh, dose range, unsafe dose)
DRUGS = {
    "dev": [
        (
            "Apixaban",
            "阿哌沙班",
            "5 mg",
            "oral",
            "BID",
            "atrial fibrillation",
            "心房颤动",
            "direct oral anticoagulant",
            "直接口服抗凝药",
            ("2.5", "5"),
            "10 mg",
        ),
        (
            "Furosemide",
            "呋塞米",
            "40 mg",
            "IV",
            "daily",
            "heart failure",
            "心力衰竭",
            "loop diuretic",
            "袢利尿剂",
            ("20", "80"),
            "200 mg",
        ),
        (
            "Metoprolol tartrate",
            "酒石酸美托洛尔",
            "25 mg",
            "oral",
            "BID",
            "hypertension",
            "高血压",
            "beta blocker",
            "β受体阻滞剂",
            ("12.5", "50"),
            "200 mg",
        ),
    ],
    "heldout": [
        (
            "Lisinopril",
            "赖诺普利",
            "10 mg",
            "oral",
            "daily",
            "hypertension",
            "高血压",
            "ACE inhibitor",
            "ACE抑制剂",
            ("5", "20"),
            "80 mg",
        ),
        (
            "Enoxaparin",
            "依诺肝素",
            "40 mg",
            "subcutaneous",
            "daily",
            "VTE prophylaxis",
            "静脉血栓预防",
            "low molecular weight heparin",
            "低分子肝素",
            ("30", "40"),
            "150 mg",
        ),
        (
            "Metformin",
            "二甲双胍",
            "500 mg",
            "oral",
            "BID",
            "type 2 diabetes",
            "2型糖尿病",
            "biguanide",
            "双胍类",
            ("500", "1000"),
            "3000 mg",
        ),
    ],
    "heldout2": [
        (
            "Warfarin",
            "华法林",
            "5 mg",
            "oral",
            "daily",
            "mechanical heart valve",
            "机械心脏瓣膜",
            "vitamin K antagonist",
            "维生素K拮抗剂",
            ("2", "10"),
            "20 mg",
        ),
        (
            "Atorvastatin",
            "阿托伐他汀",
            "40 mg",
            "oral",
            "daily",
            "hyperlipidemia",
            "高脂血症",
            "statin",
            "他汀类药物",
            ("10", "80"),
            "160 mg",
        ),
        (
            "Pantoprazole",
            "泮托拉唑",
            "40 mg",
            "IV",
            "BID",
            "upper gastrointestinal bleeding",
            "上消化道出血",
            "proton pump inhibitor",
            "质子泵抑制剂",
            ("40", "80"),
            "240 mg",
        ),
    ],
}
ADVERBS = {
    "dev": ["correctly ", "", "accurately "],
    "heldout": ["correctly ", "", "explicitly ", "clearly "],
    "heldout2": ["correctly ", "", "accurately ", "explicitly ", "clearly "],
}
ZH_ADVERB = {"correctly ": "正确", "accurately ": "准确", "explicitly ": "明确", "clearly ": "明确", "": ""}
CITE_VERBS = {
    "dev": ["cites", "states"],
    "heldout": ["cites", "reports", "gives"],
    "heldout2": ["cites", "states", "reports", "gives"],
}
ZH_INTERPRET = ["解读为", "解释为", "判读为"]
ZH_ROUTE = {"oral": "口服", "IV": "静脉", "subcutaneous": "皮下"}
ZH_FREQ = {"BID": "BID", "daily": "每日一次"}


@dataclass
class Item:
    id: str
    split: str
    task_type: str
    family: str
    expect: str  # check | judgement
    en: str
    zh: str
    gold_en: str = ""
    gold_zh: str = ""
    wrong_en: str = ""
    wrong_zh: str = ""
    gold_write: dict[str, Any] = field(default_factory=dict)
    wrong_write: dict[str, Any] = field(default_factory=dict)


def _status(value: str, low: str, high: str) -> str:
    v = float(value)
    return "high" if v > float(high) else "low" if v < float(low) else "normal"


STATUS_EN = {"high": "above the normal range", "low": "below the normal range", "normal": "within the normal range"}
STATUS_ZH = {"high": "高于正常范围", "low": "低于正常范围", "normal": "在正常范围内"}
STATUS_WORD_EN = {"high": "elevated", "low": "low", "normal": "normal"}
STATUS_WORD_ZH = {"high": "偏高", "low": "偏低", "normal": "正常"}
FLIP = {"high": "normal", "low": "normal", "normal": "high"}


def _perturb(value: str) -> str:
    decimals = len(value.split(".")[1]) if "." in value else 0
    return f"{float(value) * 1.37 + 1:.{decimals}f}"


def _lab_sentence(lab: tuple, *, wrong: bool) -> tuple[str, str]:
    en, zh, unit, value, low, high = lab
    status = _status(value, low, high)
    if wrong:
        value, status = _perturb(value), FLIP[status]
    return (
        f"The latest {en} is {value} {unit}, {STATUS_WORD_EN[status]} ({STATUS_EN[status]} of {low}–{high} {unit}).",
        f"最近一次{zh}为{value} {unit}，{STATUS_WORD_ZH[status]}（{STATUS_ZH[status]}，{low}–{high} {unit}）。",
    )


def _cite(rng: random.Random, split: str, lab: tuple) -> tuple[str, str]:
    en, zh, unit, value, _low, _high = lab
    adv = rng.choice(ADVERBS[split])
    verb = rng.choice(CITE_VERBS[split])
    form = rng.choice(["as", "value as", "of", "is"])
    if form == "as":
        text = f"The answer {adv}{verb} {en} as {value} {unit}"
    elif form == "value as":
        text = f"The answer {adv}{verb} the {en} value as {value} {unit}"
    elif form == "of":
        text = f"The answer {adv}{verb} the {en} level of {value} {unit}"
    else:
        text = f"The answer {adv}{verb} that the latest {en} is {value} {unit}"
    # the release's ZH rubric prompt writes "引用了肌酐值0.9 mg/dL" (no 为); its translations also "…值为…"
    return text, rng.choice(
        [f"答案{ZH_ADVERB[adv]}引用了{zh}值为{value} {unit}", f"答案{ZH_ADVERB[adv]}引用了{zh}值{value} {unit}"]
    )


def _interpret(rng: random.Random, split: str, lab: tuple) -> tuple[str, str]:
    en, zh, unit, value, low, high = lab
    status = _status(value, low, high)
    adv = rng.choice(ADVERBS[split])
    return (
        f"The answer {adv}interprets {en} as {STATUS_EN[status]} ({low}–{high} {unit})",
        # "interprets … as" translates as 解读为, 解释为 or 判读为 (the release translates each item separately)
        f"答案{ZH_ADVERB[adv]}将{zh}{rng.choice(ZH_INTERPRET)}{STATUS_ZH[status]}（{low}–{high} {unit}）",
    )


def _conclude_status(rng: random.Random, split: str, lab: tuple) -> tuple[str, str]:
    en, zh, _unit, value, low, high = lab
    status = _status(value, low, high)
    adv = rng.choice(ADVERBS[split])
    return (
        f"The answer {adv}concludes that {en} is {STATUS_WORD_EN[status]}",
        rng.choice(
            [
                f"答案{ZH_ADVERB[adv]}得出{zh}{STATUS_WORD_ZH[status]}的结论",
                f"答案{ZH_ADVERB[adv]}得出结论：{zh}{STATUS_WORD_ZH[status]}",
            ]
        ),
    )


def _judgement(rng: random.Random, lab: tuple, other: tuple) -> tuple[str, str]:
    en, zh = lab[0], lab[1]
    o_en, o_zh = other[0], other[1]
    return rng.choice(
        [
            (f"The answer relates the {en} result to the {o_en} result", f"答案将{zh}结果与{o_zh}结果联系起来"),
            (f"The answer explains why {en} matters for the next step", f"答案解释了{zh}对下一步的意义"),
            (
                f"The answer correctly reasons that the {en} trend and the {o_en} together change the plan",
                f"答案正确推理出{zh}趋势与{o_zh}共同改变了方案",
            ),
        ]
    )


def _drug_items(rng: random.Random, split: str, drug: tuple) -> list[tuple[str, str, str, str]]:
    """(family, expect, en, zh) of a CR turn about ``drug``."""
    name, zh, dose, _route, _freq, ind, ind_zh, _cls, _cls_zh, _rng, unsafe = drug
    adv = rng.choice(ADVERBS[split])
    d_zh = dose.replace(" mg", "毫克")
    return [
        (
            "cite_dose",
            "check",
            f"The answer {adv}cites the {name.lower()} dose as {dose}",
            f"答案{ZH_ADVERB[adv]}引用了{zh}剂量为{d_zh}",
        ),
        (
            "name_indication",
            "check",
            f"The answer {adv}identifies {ind} as the indication for {name.lower()}",
            f"答案{ZH_ADVERB[adv]}指出{ind_zh}是{zh}的适应证",
        ),
        rng.choice(
            [
                (
                    "safety",
                    "check",
                    f"The answer does not recommend increasing {name.lower()} to {unsafe} given the findings",
                    f"答案未鉴于上述结果建议将{zh}增至{unsafe.replace(' mg', '毫克')}",
                ),
                (
                    "safety",
                    "check",
                    f"The answer does not recommend reducing the {name.lower()} dose given the findings",
                    f"答案未因上述结果而建议减少{zh}剂量",
                ),
            ]
        ),
        (
            "conclude_no_change",
            "check",
            f"The answer {adv}concludes that no {name.lower()} dose adjustment is needed",
            rng.choice(
                [f"答案{ZH_ADVERB[adv]}得出无需调整{zh}剂量的结论", f"答案{ZH_ADVERB[adv]}得出结论：无需调整{zh}剂量"]
            ),
        ),
        (
            "reasoning",
            "judgement",
            f"The answer explains how the findings bear on the {name.lower()} dose",
            f"答案解释了上述结果如何影响{zh}剂量",
        ),
    ]


def _write_items(rng: random.Random, split: str, drug: tuple) -> list[tuple[str, str, str, str]]:
    name, zh, dose, route, freq, ind, ind_zh, cls, cls_zh, (lo, hi), unsafe = drug
    d_zh, u_zh = dose.replace(" mg", "毫克"), unsafe.replace(" mg", "毫克")
    r_zh, f_zh = ZH_ROUTE[route], ZH_FREQ[freq]
    prose = [
        (
            "orders",
            "check",
            f"The answer orders {name} at {dose} {freq} for {ind}",
            f"答案开具{zh}{d_zh} {f_zh}用于{ind_zh}",
        ),
        (
            "route_freq",
            "check",
            f"The answer specifies the route as {route} and the frequency as {freq}",
            f"答案指定给药途径为{r_zh}，频次为{f_zh}",
        ),
        ("indication", "check", f"The answer documents {ind} as the indication", f"答案记录{ind_zh}为适应证"),
        (
            "class_range",
            "judgement",
            f"The answer orders a {cls} ({name} or equivalent) at {lo}–{hi} mg {freq}",
            f"答案开具{cls_zh}（{zh}或等效药物）{lo}–{hi}毫克 {f_zh}",
        ),
        # "…does NOT order <contraindicated drug/dose>" (semantics file §3, the prose safety item)
        ("does_not_order", "check", f"The answer does NOT order {name.lower()} {unsafe}", f"答案未开具{zh}{u_zh}"),
    ]
    field_style = [
        (
            "field_medication",
            "check",
            f"The `medication` field equals '{name}' (case-insensitive)",
            f"`medication`字段等于'{name}'（不区分大小写）",
        ),
        (
            "field_dose",
            "check",
            f"The `dose` field equals exactly '{dose}' (not {unsafe})",
            f"`dose`字段严格等于'{dose}'（不是{unsafe}）",
        ),
        (
            "field_route",
            "check",
            f"The `route` field is '{route}' (or one of: 'PO', 'by mouth')"
            if route == "oral"
            else f"The `route` field is '{route}'",
            f"`route`字段为'{route}'",
        ),
        ("field_frequency", "check", f"The `frequency` field is '{freq}'", f"`frequency`字段为'{freq}'"),
        # the release's field-style prompt: the call item and exactly one negative safety bound; a write_call check
        # states one value of one call, so neither can be compiled (expect: stays unscored)
        (
            "field_call",
            "judgement",
            "The write call invokes `MedicationRequest.create` (no other write tool is called).",
            "写工具调用为`MedicationRequest.create`（且没有调用其他写工具）。",
        ),
        ("field_safety", "judgement", f"Safety: the `dose` is NOT >= {unsafe}", f"安全性：`dose`不为≥{unsafe}"),
    ]
    return rng.sample(prose, 3) + rng.sample(field_style, 2)


def turn_items(rng: random.Random, split: str, n: int) -> list[Item]:
    labs, drugs = LABS[split], DRUGS[split]
    task = ["Information Lookup", "Data Gathering", "Clinical Reasoning", "Write/Update"][n % 4]
    lab, other = rng.sample(labs, 2)
    drug = rng.choice(drugs)
    rows: list[tuple[str, str, str, str]] = []
    gold = [_lab_sentence(lab, wrong=False)]
    wrong = [_lab_sentence(lab, wrong=True)]
    if task == "Information Lookup":
        rows = [
            ("cite", "check", *_cite(rng, split, lab)),
            ("interpret", "check", *_interpret(rng, split, lab)),
            ("conclude", "check", *_conclude_status(rng, split, lab)),
        ]
    elif task == "Data Gathering":
        rows = [
            ("cite", "check", *_cite(rng, split, lab)),
            ("cite", "check", *_cite(rng, split, other)),
            ("relation", "judgement", *_judgement(rng, lab, other)),
            ("conclude", "check", *_conclude_status(rng, split, other)),
        ]
        gold.append(_lab_sentence(other, wrong=False))
        wrong.append(_lab_sentence(other, wrong=True))
    elif task == "Clinical Reasoning":
        rows = [("cite", "check", *_cite(rng, split, lab)), *_drug_items(rng, split, drug)]
    else:
        rows = _write_items(rng, split, drug)
    name, zh, dose, route, freq, ind, ind_zh = drug[:7]
    d_zh, wrong_dose = dose.replace(" mg", "毫克"), f"{_perturb(dose.split()[0])} mg"
    if task != "Information Lookup" and task != "Data Gathering":
        gold.append(
            (
                f"{name} {dose} {freq} is ordered for {ind}; no change is needed.",
                f"{zh}{d_zh} {ZH_FREQ[freq]}用于{ind_zh}；无需调整。",
            )
        )
        wrong.append(
            (
                f"{name} {wrong_dose} {freq} is ordered for {ind}; increase it to {drug[10]}.",
                f"{zh}{wrong_dose} {ZH_FREQ[freq]}用于{ind_zh}；建议增至{drug[10]}。",
            )
        )
    write = {
        "tool": "MedicationRequest.create",
        "arguments": {"medication": name, "dose": dose, "route": route, "frequency": freq, "indication": ind},
    }
    bad = {"tool": "MedicationRequest.create", "arguments": {**write["arguments"], "dose": wrong_dose}}
    out = []
    for i, (family, expect, en, zh_text) in enumerate(rows):
        out.append(
            Item(
                id=f"{split}-{n}-{i}",
                split=split,
                task_type=task,
                family=family,
                expect=expect,
                en=en,
                zh=zh_text,
                gold_en=" ".join(g[0] for g in gold),
                gold_zh="".join(g[1] for g in gold),
                wrong_en=" ".join(w[0] for w in wrong),
                wrong_zh="".join(w[1] for w in wrong),
                gold_write=write if task == "Write/Update" else {},
                wrong_write=bad if task == "Write/Update" else {},
            )
        )
    return out


def generate(*, split: str, turns: int, seed: int) -> list[Item]:
    rng = random.Random(f"{split}-{seed}")
    return [item for n in range(turns) for item in turn_items(rng, split, n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("split", choices=sorted(LABS))
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for item in generate(split=args.split, turns=args.turns, seed=args.seed):
        sys.stdout.write(json.dumps(asdict(item), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
