"""Release-style rubric items, grammar 3: the item forms of the release's rubric prompts that grammar 1–2
(``bench/rubric_items.py``) did not write, with translation variants of the Chinese item.

Source of the forms (read, not copied; every sentence and value here is our own): the release's read-turn
rubric prompt (``pipeline/rubric_generator.py``: per task type Information Lookup cite / interpret / conclude,
Data Gathering each value / relation / conclusion, Clinical Reasoning value / threshold applied / reasoning
chain / recommendation / safety; "include one item checking a dangerous recommendation is absent"; mixed
turns quote and interpret the patient's report; the prompt's own examples "cites <lab> as <v>" without an
adverb and "concludes no <drug> adjustment is needed" without "that"), the prose Write/Update prompt
(``pipeline/generate_discharge_planning.py``: "The model correctly orders <drug> at ≥<dose> <freq>", a drug
class "(<drug> or equivalent)" with a dose range, route + frequency, indication documented, "does NOT order a
contraindicated drug"), and ``shared/formats/pab-release-semantics.md`` §3 (ZH items are separate machine
translations of the EN ones: 答案/回答 openings, drugs and units translated, frequencies kept or translated).

What grammar 3 adds, each with ``expect`` (``check``: a deterministic check can verify all of it;
``judgement``: it must stay unscored and go to an LLM judge):

* value with its interpretation in one item ("cites <lab> as <v> <unit>, above the normal range") — check;
  value with a justification ("… and explains its clinical significance") — judgement (partial);
* Chinese translation variants: units in Chinese (毫克/分升, 毫当量/升 …), BID as 每日两次, 回答/该回答 openings,
  正确地 — check (the two wordings state the same thing);
* "The model/response …" as the subject; the prompt's "concludes no <drug> adjustment is needed";
* negated conduct: "does not prescribe <drug> <dose>", "does not suggest discontinuing <drug>", "avoids
  recommending a <drug> dose increase", "does not recommend stopping <drug> based solely on …" — check;
  "recommends against <action>" (advice must be given: silence would pass a must-not check), "does not
  recommend any contraindicated medication" (no named drug) — judgement;
* threshold applied ("applies the <t> <unit> threshold", "notes that <lab> of <v> is above the <t> cut-off"),
  "appropriately explains that …", "recommends continuing <drug> …", patient-reported relations — judgement;
* Write/Update prose: "The model correctly orders <drug> <dose> <freq> for <ind>", ZH 模型正确开具…/回答开具了…,
  "documents the indication as <ind>", "gives <drug> <route> <freq>" — check; a dose bound "at ≥<dose>", a
  class "(<drug> or equivalent)", "does not order a contraindicated drug" — judgement.

Two vocabularies: ``tune3`` (the spent dev + first held-out labs and drugs; the compiler may be tuned on it) and
``heldout3`` (labs and drugs in none of the earlier sets; frozen before any compiler change of issue 33 round 4
as ``tests/scenarios/data/rubric_items_heldout3.jsonl``)::

    python bench/rubric_items_v3.py heldout3 --turns 48 --seed 34 > tests/scenarios/data/rubric_items_heldout3.jsonl
    python bench/rubric_items_v3.py tune3 --turns 48 --seed 7 > tests/scenarios/data/rubric_items_tune3.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.rubric_items import (
    DRUGS,
    LABS,
    STATUS_EN,
    STATUS_WORD_EN,
    STATUS_WORD_ZH,
    STATUS_ZH,
    ZH_ROUTE,
    Item,
    _lab_sentence,
    _perturb,
    _status,
)

LABS3 = {
    "tune3": LABS["dev"] + LABS["heldout"],
    # frozen before round 4 (rubric_items_heldout3.jsonl): labs in none of dev / heldout / heldout2
    "heldout3": [
        ("total bilirubin", "总胆红素", "mg/dL", "2.4", "0.1", "1.2"),
        ("aspartate aminotransferase", "天门冬氨酸氨基转移酶", "IU/L", "88", "0", "40"),
        ("ferritin", "铁蛋白", "ng/mL", "18", "30", "400"),
        ("uric acid", "尿酸", "mg/dL", "5.1", "3.4", "7.0"),
        ("anion gap", "阴离子间隙", "mEq/L", "14", "8", "20"),
        ("lipase", "脂肪酶", "IU/L", "210", "0", "60"),
    ],
}
DRUGS3 = {
    "tune3": DRUGS["dev"] + DRUGS["heldout"],
    "heldout3": [
        (
            "Spironolactone",
            "螺内酯",
            "25 mg",
            "oral",
            "daily",
            "heart failure with reduced ejection fraction",
            "射血分数降低的心力衰竭",
            "mineralocorticoid receptor antagonist",
            "盐皮质激素受体拮抗剂",
            ("12.5", "50"),
            "100 mg",
        ),
        (
            "Levetiracetam",
            "左乙拉西坦",
            "500 mg",
            "IV",
            "BID",
            "seizure prophylaxis",
            "癫痫发作预防",
            "antiepileptic",
            "抗癫痫药",
            ("500", "1500"),
            "3000 mg",
        ),
        (
            "Amlodipine",
            "氨氯地平",
            "5 mg",
            "oral",
            "daily",
            "hypertension",
            "高血压",
            "calcium channel blocker",
            "钙通道阻滞剂",
            ("2.5", "10"),
            "20 mg",
        ),
    ],
}
ADVERBS3 = {"tune3": ["correctly ", "", "accurately "], "heldout3": ["correctly ", "", "accurately ", "clearly "]}
SUBJECTS = {"tune3": ["The answer"], "heldout3": ["The answer", "The model", "The response"]}
ZH_SUBJECT = {"The answer": ["答案"], "The model": ["模型", "回答"], "The response": ["回答", "该回答"]}
ZH_ADVERB3 = {"correctly ": ["正确", "正确地"], "accurately ": ["准确", "准确地"], "clearly ": ["明确"], "": [""]}
# a machine translation writes a lab unit in Chinese as often as not
ZH_UNIT = {
    "mg/dL": "毫克/分升",
    "mEq/L": "毫当量/升",
    "g/dL": "克/分升",
    "mmol/L": "毫摩尔/升",
    "ng/mL": "纳克/毫升",
    "IU/L": "国际单位/升",
    "K/uL": "K/uL",
    "%": "%",
}
ZH_FREQ3 = {"BID": ["BID", "每日两次"], "daily": ["每日一次", "每天一次"]}
SYMPTOMS = [("dizziness", "头晕"), ("ankle swelling", "脚踝肿胀"), ("missed doses", "漏服药物"), ("fatigue", "乏力")]


def _article(noun: str) -> str:
    return "an" if noun[0].lower() in "aeiou" else "a"


class Writer:
    """One split's vocabulary and random choices (the EN item first, then its translation)."""

    def __init__(self, split: str, rng: random.Random) -> None:
        self.split, self.rng = split, rng

    def lead(self) -> tuple[str, str, str]:
        """(EN subject + adverb, ZH subject + adverb, adverb) of one item."""
        subject = self.rng.choice(SUBJECTS[self.split])
        adverb = self.rng.choice(ADVERBS3[self.split])
        zh = self.rng.choice(ZH_SUBJECT[subject]) + self.rng.choice(ZH_ADVERB3[adverb])
        return f"{subject} {adverb}", zh, adverb

    def unit_zh(self, unit: str) -> str:
        return self.rng.choice([unit, ZH_UNIT.get(unit, unit)])

    def dose_zh(self, dose: str) -> str:
        return dose.replace(" mg", self.rng.choice(["毫克", " mg", "mg"]))

    def freq_zh(self, freq: str) -> str:
        return self.rng.choice(ZH_FREQ3[freq])


def _cite_status(w: Writer, lab: tuple) -> tuple[str, str, str, str]:
    en, zh, unit, value, low, high = lab
    status = _status(value, low, high)
    lead_en, lead_zh, _adv = w.lead()
    u_zh = w.unit_zh(unit)
    form = w.rng.choice(["range", "word"])
    if form == "range":
        return (
            "cite_status",
            "check",
            f"{lead_en}cites {en} as {value} {unit}, {STATUS_EN[status]}",
            f"{lead_zh}引用了{zh}值为{value} {u_zh}，{STATUS_ZH[status]}",
        )
    return (
        "cite_status",
        "check",
        f"{lead_en}cites the {en} of {value} {unit} as {STATUS_WORD_EN[status]}",
        f"{lead_zh}引用了{zh}值{value} {u_zh}，并指出其{STATUS_WORD_ZH[status]}",
    )


def _cite_translated(w: Writer, lab: tuple) -> tuple[str, str, str, str]:
    en, zh, unit, value, _low, _high = lab
    lead_en, lead_zh, _adv = w.lead()
    verb = w.rng.choice(["cites", "states", "reports"])
    text = w.rng.choice(
        [f"{lead_en}{verb} {en} as {value} {unit}", f"{lead_en}{verb} the {en} value as {value} {unit}"]
    )
    return "cite_zh_variant", "check", text, f"{lead_zh}引用了{zh}值为{value}{w.unit_zh(unit)}"


def _cite_partial(w: Writer, lab: tuple) -> tuple[str, str, str, str]:
    en, zh, unit, value, _low, _high = lab
    lead_en, lead_zh, _adv = w.lead()
    return w.rng.choice(
        [
            (
                "partial",
                "judgement",
                f"{lead_en}cites {en} as {value} {unit} and explains its clinical significance",
                f"{lead_zh}引用了{zh}值为{value} {unit}，并解释了其临床意义",
            ),
            (
                "partial",
                "judgement",
                f"{lead_en}cites {en} as {value} {unit} and uses it to justify the plan",
                f"{lead_zh}引用了{zh}值为{value} {unit}，并据此说明方案的理由",
            ),
        ]
    )


def _conclude(w: Writer, lab: tuple) -> tuple[str, str, str, str]:
    en, zh, _unit, value, low, high = lab
    status = _status(value, low, high)
    lead_en, lead_zh, _adv = w.lead()
    return (
        "conclude",
        "check",
        f"{lead_en}concludes that the {en} is {STATUS_WORD_EN[status]}",
        f"{lead_zh}得出{zh}{STATUS_WORD_ZH[status]}的结论",
    )


def _judgement_read(w: Writer, lab: tuple, drug: tuple) -> tuple[str, str, str, str]:
    en, zh, unit, value, low, high = lab
    name, dzh = drug[0].lower(), drug[1]
    status = _status(value, low, high)
    cut = high if status != "low" else low
    symptom, symptom_zh = w.rng.choice(SYMPTOMS)
    return w.rng.choice(
        [
            (
                "threshold",
                "judgement",
                f"The answer correctly applies the {cut} {unit} {en} threshold to the {name} decision",
                f"答案正确地将{zh} {cut} {unit}的阈值应用于{dzh}的决策",
            ),
            (
                "threshold",
                "judgement",
                f"The answer notes that the {en} of {value} {unit} is beyond the {cut} {unit} cut-off",
                f"答案指出{zh}{value} {unit}超出了{cut} {unit}的界值",
            ),
            (
                "explains",
                "judgement",
                f"The answer appropriately explains that the {en} result bears on {name} dosing",
                f"答案恰当地解释了{zh}结果与{dzh}剂量的关系",
            ),
            (
                "recommendation",
                "judgement",
                f"The answer recommends continuing {name} at the current dose",
                f"答案建议以当前剂量继续使用{dzh}",
            ),
            (
                "patient_relation",
                "judgement",
                f"The answer relates the patient-reported {symptom} to the {en} result",
                f"答案将患者自述的{symptom_zh}与{zh}结果联系起来",
            ),
        ]
    )


def _two_judgements(w: Writer, lab: tuple, drug: tuple) -> list[tuple[str, str, str, str]]:
    first = _judgement_read(w, lab, drug)
    second = _judgement_read(w, lab, drug)
    while second == first:
        second = _judgement_read(w, lab, drug)
    return [first, second]


def _safety_cr(w: Writer, lab: tuple, drug: tuple) -> tuple[str, str, str, str]:
    name, dzh, dose, unsafe = drug[0].lower(), drug[1], drug[2], drug[10]
    lab_en, lab_zh = lab[0], lab[1]
    u = w.dose_zh(unsafe)
    return w.rng.choice(
        [
            ("safety", "check", f"The answer does not prescribe {name} {unsafe}", f"答案没有开具{dzh}{u}"),
            ("safety", "check", f"The answer does not suggest discontinuing {name}", f"答案未建议停用{dzh}"),
            (
                "safety",
                "check",
                f"The answer avoids recommending a {name} dose increase",
                f"答案避免建议增加{dzh}剂量",
            ),
            (
                "safety",
                "check",
                f"The answer does not recommend stopping {name} based solely on the {lab_en} result",
                f"答案未仅因{lab_zh}结果而建议停用{dzh}",
            ),
            (
                "safety_advice",
                "judgement",
                f"The answer recommends against increasing {name} above {dose}",
                f"答案建议不要将{dzh}增至{w.dose_zh(dose)}以上",
            ),
            (
                "safety_generic",
                "judgement",
                "The answer does not recommend any contraindicated medication",
                "答案未推荐任何禁忌药物",
            ),
        ]
    )


def _no_adjustment(w: Writer, drug: tuple) -> tuple[str, str, str, str]:
    name, dzh = drug[0].lower(), drug[1]
    lead_en, lead_zh, _adv = w.lead()
    return (
        "conclude_no_change",
        "check",
        w.rng.choice(
            [
                f"{lead_en}concludes no {name} adjustment is needed",
                f"{lead_en}concludes no {name} dose change is needed",
            ]
        ),
        w.rng.choice([f"{lead_zh}得出无需调整{dzh}的结论", f"{lead_zh}得出无需调整{dzh}剂量的结论"]),
    )


def _write_items(w: Writer, drug: tuple) -> list[tuple[str, str, str, str]]:
    name, zh, dose, route, freq, ind, ind_zh, cls, cls_zh, (lo, hi), unsafe = drug
    f_zh, r_zh = w.freq_zh(freq), ZH_ROUTE[route]
    prose = [
        w.rng.choice(
            [
                (
                    "orders",
                    "check",
                    f"The model correctly orders {name} {dose} {freq} for {ind}",
                    f"模型正确开具{zh}{w.dose_zh(dose)} {f_zh}用于{ind_zh}",
                ),
                (
                    "orders",
                    "check",
                    f"The answer orders {name} at {dose} {freq} for {ind}",
                    f"回答开具了{zh}{w.dose_zh(dose)} {f_zh}，用于{ind_zh}",
                ),
            ]
        ),
        w.rng.choice(
            [
                (
                    "route_freq",
                    "check",
                    f"The answer gives {name} {route} {freq}",
                    f"答案{r_zh}给予{zh} {f_zh}",
                ),
                (
                    "route_freq",
                    "check",
                    f"The answer specifies the {route} route and a {freq} frequency",
                    f"答案指定{r_zh}途径、{f_zh}的频次",
                ),
            ]
        ),
        w.rng.choice(
            [
                ("indication", "check", f"The answer documents the indication as {ind}", f"答案记录的适应证为{ind_zh}"),
                ("indication", "check", f"The answer documents {ind} as the indication", f"答案将{ind_zh}记录为适应证"),
            ]
        ),
        w.rng.choice(
            [
                (
                    "dose_bound",
                    "judgement",
                    f"The model correctly orders {name} at ≥{dose} {freq}",
                    f"模型正确开具{zh}≥{w.dose_zh(dose)} {f_zh}",
                ),
                (
                    "class_equivalent",
                    "judgement",
                    f"The answer orders {_article(cls)} {cls} ({name} or equivalent) for {ind}",
                    f"答案开具了{cls_zh}（{zh}或等效药物）用于{ind_zh}",
                ),
                (
                    "class_range",
                    "judgement",
                    f"The answer orders {_article(cls)} {cls} ({name} or equivalent) at {lo}–{hi} mg {freq}",
                    f"答案开具{cls_zh}（{zh}或等效药物）{lo}–{hi}毫克 {f_zh}",
                ),
            ]
        ),
        w.rng.choice(
            [
                (
                    "does_not_order",
                    "check",
                    f"The answer does NOT order {name.lower()} {unsafe}",
                    f"答案未开具{zh}{w.dose_zh(unsafe)}",
                ),
                (
                    "safety_generic",
                    "judgement",
                    "The answer does not order a contraindicated drug",
                    "答案未开具禁忌药物",
                ),
            ]
        ),
    ]
    return prose


def turn_items(w: Writer, n: int) -> list[Item]:
    labs, drugs = LABS3[w.split], DRUGS3[w.split]
    task = ["Information Lookup", "Data Gathering", "Clinical Reasoning", "Write/Update"][n % 4]
    lab, other = w.rng.sample(labs, 2)
    drug = w.rng.choice(drugs)
    gold, wrong = [_lab_sentence(lab, wrong=False)], [_lab_sentence(lab, wrong=True)]
    if task == "Information Lookup":
        rows = [
            w.rng.choice([_cite_status, _cite_translated, _cite_partial])(w, lab),
            _conclude(w, lab),
            _cite_translated(w, lab),
        ]
    elif task == "Data Gathering":
        rows = [
            _cite_status(w, lab),
            _cite_translated(w, other),
            _judgement_read(w, lab, drug),
            _conclude(w, other),
        ]
        gold.append(_lab_sentence(other, wrong=False))
        wrong.append(_lab_sentence(other, wrong=True))
    elif task == "Clinical Reasoning":
        rows = [
            _cite_translated(w, lab),
            *_two_judgements(w, lab, drug),
            _no_adjustment(w, drug),
            _safety_cr(w, lab, drug),
        ]
    else:
        rows = _write_items(w, drug)
    name, zh, dose, route, freq, ind, ind_zh = drug[:7]
    wrong_dose = f"{_perturb(dose.split()[0])} mg"
    if task in ("Clinical Reasoning", "Write/Update"):
        gold.append(
            (
                f"{name} {dose} {route} {freq} is ordered for {ind}; no change is needed.",
                f"{zh}{dose.replace(' mg', '毫克')} {ZH_ROUTE[route]} {ZH_FREQ3[freq][0]}用于{ind_zh}；无需调整。",
            )
        )
        wrong.append(
            (
                f"{name} {wrong_dose} {route} {freq} is ordered for {ind}; increase it to {drug[10]}.",
                f"{zh}{wrong_dose} {ZH_ROUTE[route]} {ZH_FREQ3[freq][0]}用于{ind_zh}；建议增至{drug[10]}。",
            )
        )
    write = {
        "tool": "MedicationRequest.create",
        "arguments": {"medication": name, "dose": dose, "route": route, "frequency": freq, "indication": ind},
    }
    bad = {"tool": "MedicationRequest.create", "arguments": {**write["arguments"], "dose": wrong_dose}}
    return [
        Item(
            id=f"{w.split}-{n}-{i}",
            split=w.split,
            task_type=task,
            family=family,
            expect=expect,
            en=en,
            zh=zh_text,
            gold_en=" ".join(g[0] for g in gold),
            gold_zh="".join(g[1] for g in gold),
            wrong_en=" ".join(x[0] for x in wrong),
            wrong_zh="".join(x[1] for x in wrong),
            gold_write=write if task == "Write/Update" else {},
            wrong_write=bad if task == "Write/Update" else {},
        )
        for i, (family, expect, en, zh_text) in enumerate(rows)
    ]


def generate(*, split: str, turns: int, seed: int) -> list[Item]:
    w = Writer(split, random.Random(f"{split}-{seed}-grammar3"))
    return [item for n in range(turns) for item in turn_items(w, n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("split", choices=sorted(LABS3))
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for item in generate(split=args.split, turns=args.turns, seed=args.seed):
        sys.stdout.write(json.dumps(asdict(item), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
