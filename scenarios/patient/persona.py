"""The patient's persona: how they talk (literacy, anxiety) and how much they tell (completeness).

``choose_persona`` is a pure function of the seed and the memory. Rules on top of the draw:

* adherence follows the record when the record says something about it (a non-adherence
  statement → ``poor`` if it names a drug, else ``partial``; "as prescribed" / a pill box →
  ``good``); the seed decides only when the record is silent — a persona never contradicts it;
* ``critical_withheld`` needs a critical fact; the most safety-relevant one is chosen
  (non-adherence to a named drug, an interacting drug the patient takes, general non-adherence,
  an anticoagulant / high-risk home drug, an allergy). Without one the persona falls back to
  ``partial``. The fact is revealed only when a question names one of its trigger words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from scenarios.patient.facts import Fact, HealthMemory
from scenarios.patient.lexicon import DRUG_CLASSES, HIGH_RISK_DRUGS, INTERACTING_DRUGS, drug_zh

LITERACY = ("low", "medium", "high")
ADHERENCE = ("good", "partial", "poor")
ANXIETY = ("low", "medium", "high")
COMPLETENESS = ("full", "partial", "critical_withheld")
# Words that ask about missed doses in general (reveal a general non-adherence fact).
MISSED_DOSE_WORDS = ("miss", "skip", "forget", "forgot", "run out", "ran out", "afford", "cost", "漏服", "忘", "停药")
ALLERGY_WORDS = ("allerg", "reaction", "过敏")


@dataclass(frozen=True)
class Persona:
    health_literacy: str
    adherence: str
    anxiety_level: str
    info_completeness: str
    seed: str = ""
    critical_fact_id: str | None = None
    critical_triggers: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        for name, allowed in (
            ("health_literacy", LITERACY),
            ("adherence", ADHERENCE),
            ("anxiety_level", ANXIETY),
            ("info_completeness", COMPLETENESS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"persona {name}={getattr(self, name)!r}: expected one of {', '.join(allowed)}")

    def persona_config(self) -> dict[str, str]:
        """The PhysAssistBench ``persona_config`` object."""
        return {
            "health_literacy": self.health_literacy,
            "adherence": self.adherence,
            "anxiety_level": self.anxiety_level,
            "info_completeness": self.info_completeness,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.persona_config(),
            "seed": self.seed,
            "critical_fact_id": self.critical_fact_id,
            "critical_triggers": list(self.critical_triggers),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Persona:
        return cls(
            health_literacy=data["health_literacy"],
            adherence=data["adherence"],
            anxiety_level=data["anxiety_level"],
            info_completeness=data["info_completeness"],
            seed=str(data.get("seed") or ""),
            critical_fact_id=data.get("critical_fact_id"),
            critical_triggers=tuple(data.get("critical_triggers") or ()),
        )


def _drug_triggers(names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        low = name.casefold()
        out += [low, low.split()[0]]
        if zh := drug_zh(name):
            out.append(zh)
        out += [cls for cls, members in DRUG_CLASSES.items() if any(low.startswith(d) for d in members)]
    return out


def critical_candidates(memory: HealthMemory) -> list[tuple[int, Fact, list[str]]]:
    """(rank, fact, trigger words), most critical first (lower rank)."""
    home = [str(f.attrs.get("name", "")) for f in memory.of("medication", "home") if f.attrs.get("name")]
    out: list[tuple[int, Fact, list[str]]] = []
    for fact in memory.facts:
        drugs = [str(d) for d in fact.attrs.get("drugs") or []]
        name = str(fact.attrs.get("name") or "")
        if fact.category == "adherence" and fact.attrs.get("nonadherent") and drugs:
            out.append((0, fact, _drug_triggers(drugs)))
        elif fact.category == "medication" and fact.slot == "mentioned":
            hits = [d for d in drugs if any(d.casefold().startswith(i) for i in INTERACTING_DRUGS)]
            if hits:
                out.append((1, fact, _drug_triggers(hits)))
        elif fact.category == "adherence" and fact.attrs.get("nonadherent"):
            out.append((2, fact, [*MISSED_DOSE_WORDS, *_drug_triggers(home)]))
        elif fact.category == "medication" and fact.slot == "home" and name:
            if any(name.casefold().startswith(d) for d in HIGH_RISK_DRUGS):
                out.append((3, fact, _drug_triggers([name])))
        elif fact.category == "allergy" and fact.slot == "substance":
            words = [fact.value.casefold(), fact.value.casefold().rstrip("s")[:6], *ALLERGY_WORDS]
            out.append((4, fact, words))
    out.sort(key=lambda item: item[0])
    return out


def record_adherence(memory: HealthMemory) -> str | None:
    """The adherence the record states, if it states one."""
    facts = memory.of("adherence")
    if any(f.attrs.get("nonadherent") and f.attrs.get("drugs") for f in facts):
        return "poor"
    if any(f.attrs.get("nonadherent") for f in facts):
        return "partial"
    if facts:
        return "good"
    return None


def choose_persona(*, seed: int | str, memory: HealthMemory, overrides: dict[str, str] | None = None) -> Persona:
    """Deterministic persona for ``seed`` (same seed + memory → same persona); ``overrides`` pin fields."""
    rng = random.Random(f"persona:{seed}")
    draw = {
        "health_literacy": rng.choices(LITERACY, weights=(3, 4, 3))[0],
        "adherence": rng.choices(ADHERENCE, weights=(5, 3, 2))[0],
        "anxiety_level": rng.choices(ANXIETY, weights=(3, 4, 3))[0],
        "info_completeness": rng.choices(COMPLETENESS, weights=(3, 3, 4))[0],
    }
    stated = record_adherence(memory)
    if stated is not None:
        draw["adherence"] = stated
    draw.update(overrides or {})
    critical: tuple[Fact, list[str]] | None = None
    if draw["info_completeness"] == "critical_withheld":
        candidates = critical_candidates(memory)
        if candidates:
            best = [c for c in candidates if c[0] == candidates[0][0]]
            _, fact, triggers = best[rng.randrange(len(best))]
            critical = (fact, triggers)
        else:
            draw["info_completeness"] = "partial"
    triggers = tuple(dict.fromkeys(t for t in (critical[1] if critical else []) if t))
    return Persona(
        **draw,
        seed=str(seed),
        critical_fact_id=critical[0].id if critical else None,
        critical_triggers=triggers,
    )
