"""One rubric item → its machine-checkable form: each language's wording through the rules, then combined.

Rule order per language: negated recommendation, write call (Write/Update turns or a named write tool),
judgement verbs (explains, links, recommends … → unscored), date, value with unit, named entity or
status. The two languages must agree (same kind, same value, compatible parameters); when only one
compiles, its check is used and the other language's phrases come from the lexicon where it has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scenarios.rubric_checks import validate_rubric_check, write_call_contract_problems
from scenarios.rubric_compiler import (
    rules_conjunction,
    rules_facts,
    rules_negation,
    rules_prose_write,
    rules_status,
    rules_write,
)
from scenarios.rubric_compiler.types import Candidate, Compiled, Outcome, Skip
from scenarios.rubric_compiler.verbs import is_judgement, normalise_zh
from scenarios.rubric_match import check_must_not_recommend, check_term, check_value_unit

LANGS = ("en", "zh")
# Skip reasons that say what an item asks for is more than a check: the other language's check cannot stand.
OBJECTIONS = frozenset(
    {"partial", "judgement", "several values", "several facts", "comparison", "negated conduct", "conflict"}
)
WRITE_TOOLS = ("MedicationRequest.create", "ServiceRequest.create", "Flag.create")


def gold_writes_of(steps: Sequence[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The write calls among gold steps (objects with ``tool``/``arguments`` or dicts of them)."""
    out = []
    for s in steps or ():
        tool = s.get("tool") if isinstance(s, dict) else getattr(s, "tool", None)
        args = s.get("arguments") if isinstance(s, dict) else getattr(s, "arguments", None)
        if tool in WRITE_TOOLS:
            out.append((tool, dict(args or {})))
    return out


def attempt_language(
    text: str, *, lang: str, task_type: str, gold_writes: Sequence[tuple[str, dict[str, Any]]]
) -> Candidate | Skip:
    text = (text or "").strip()
    if not text:
        return Skip("empty", "no text in this language")
    if lang == "zh":
        text = normalise_zh(text)
    for rule in (
        lambda: rules_negation.negation_rule(text, lang=lang),
        lambda: rules_prose_write.prose_write_rule(text, lang=lang, task_type=task_type, gold_writes=gold_writes),
        lambda: rules_write.write_rule(text, lang=lang, task_type=task_type, gold_writes=gold_writes),
        # a value with its interpretation ("cites X as 9.8 g/dL, below the normal range") before the status
        # rule, which would read the value as what its status check misses
        lambda: rules_conjunction.value_status_rule(text, lang=lang),
        lambda: rules_status.status_rule(text, lang=lang),
        lambda: rules_status.no_change_rule(text, lang=lang),
    ):
        if (found := rule()) is not None:
            return found
    if is_judgement(text, lang=lang):
        return Skip(
            "judgement", "asks for reasoning, advice or conduct: a reader must judge it (route to an LLM judge)"
        )
    for rule in (
        lambda: rules_facts.date_rule(text, lang=lang),
        lambda: rules_conjunction.values_rule(text, lang=lang),
        lambda: rules_conjunction.dose_frequency_rule(text, lang=lang),
        lambda: rules_facts.value_rule(text, lang=lang),
        lambda: rules_facts.term_rule(text, lang=lang),
    ):
        if (found := rule()) is not None:
            return found
    return Skip("no pattern", "matches no compilable pattern")


def _union(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _part_key(check: dict[str, Any]) -> tuple[str, str]:
    """What a part of an ``all_of`` states, for comparing the two languages' parts (a term by its phrase list)."""
    if check["kind"] == "value_unit":
        return ("value", f"{check['value']:g} {check['unit'].casefold()}")
    return (check["kind"], repr(sorted([*check.get("en", []), *check.get("zh", [])])))


def _combine(en: Candidate, zh: Candidate) -> Candidate | Skip:
    a, b = en.check, zh.check
    if a["kind"] != b["kind"]:
        return Skip("languages disagree", f"EN compiles to {a['kind']}, ZH to {b['kind']}")
    kind = a["kind"]
    if kind == "all_of":
        # the translation states the same values (in its own order): every part must agree
        pairs = [sorted(_part_key(c) for c in x["checks"]) for x in (a, b)]
        if pairs[0] != pairs[1]:
            return Skip("languages disagree", "EN and ZH state different sets of values")
        return Candidate(a, en.rule, min(0.99, en.confidence + 0.1), en.explanation)
    if kind == "value_unit":
        if a["value"] != b["value"] or a["unit"].casefold() != b["unit"].casefold():
            return Skip("languages disagree", f"EN states {a['value']} {a['unit']}, ZH {b['value']} {b['unit']}")
        return Candidate(a, en.rule, min(0.99, en.confidence + 0.1), en.explanation)
    if kind == "write_call":
        if a["tool"] != b["tool"]:
            return Skip("languages disagree", f"EN names {a['tool']}, ZH {b['tool']}")
        params = dict(b["params"])
        for name, value in a["params"].items():
            other = params.get(name)
            if (
                other is not None
                and str(other).casefold() not in str(value).casefold()
                and str(value).casefold() not in str(other).casefold()
            ):
                return Skip("languages disagree", f"EN sets {name} {value!r}, ZH {other!r}")
            params[name] = value  # the English form: models call tools with English values
        check = {**a, "params": params}
        rule = "write_call/param" if params else "write_call/tool"
        return Candidate(check, rule, min(0.99, max(en.confidence, zh.confidence) + 0.05), en.explanation)
    check = {"kind": kind, "en": _union(a["en"], b["en"]), "zh": _union(a["zh"], b["zh"])}
    if kind == "term" and en.rule != zh.rule and "date" in (en.rule + zh.rule):
        return Skip("languages disagree", f"EN compiles by {en.rule}, ZH by {zh.rule}")
    return Candidate(check, en.rule, min(0.99, max(en.confidence, zh.confidence) + 0.05), en.explanation)


def _gold_fails(check: dict[str, Any], gold_answers: dict[str, str]) -> str | None:
    """Why the turn's gold answer fails a text check (None: it passes, or the check is not on the text)."""
    if check["kind"] == "all_of":
        return next((why for part in check["checks"] if (why := _gold_fails(part, gold_answers))), None)
    for lang, answer in gold_answers.items():
        if not (answer or "").strip():
            continue
        if check["kind"] == "value_unit":
            ok, why = check_value_unit(
                answer=answer, value=check["value"], unit=check["unit"], tolerance=check.get("tolerance", 0)
            )
        elif check["kind"] == "term":
            ok, why = check_term(answer=answer, phrases=[*check["en"], *check["zh"]])
        elif check["kind"] == "must_not_recommend":
            ok, why = check_must_not_recommend(answer=answer, phrases=[*check["en"], *check["zh"]])
        else:
            continue
        if not ok:
            return f"the gold answer ({lang.upper()}) fails the derived check ({why}): a reviewer must look"
    return None


def attempt(
    *,
    text_en: str,
    text_zh: str,
    task_type: str,
    gold_steps: Sequence[Any] | None = None,
    gold_answers: dict[str, str] | None = None,
) -> Outcome:
    """The item's :class:`Outcome`: its check (or None) with the rule, confidence and explanation.

    ``gold_answers`` (``{"en": …, "zh": …}``, the turn's gold answer): a text check the gold answer fails is
    not compiled (either the check or the gold is wrong, and the rules judge must not score on either).
    """
    writes = gold_writes_of(gold_steps or ())
    per = {
        lang: attempt_language(text, lang=lang, task_type=task_type, gold_writes=writes)
        for lang, text in (("en", text_en), ("zh", text_zh))
    }
    en, zh = per["en"], per["zh"]
    if isinstance(en, Candidate) and isinstance(zh, Candidate):
        chosen, languages = _combine(en, zh), ("en", "zh")
    elif isinstance(en, Candidate) or isinstance(zh, Candidate):
        # One wording compiles. The release's Chinese item translates the English one (semantics file §3): when
        # the other wording says the item asks for more than the check (partial, judgement …), they disagree
        # and the strict reading wins; a wording our lexicon cannot read ("no pattern") does not object.
        other, lang = (zh, "zh") if isinstance(en, Candidate) else (en, "en")
        if other.reason in OBJECTIONS:
            reason = f"the {lang.upper()} wording objects ({other.reason}: {other.explanation})"
            return Outcome(None, "languages disagree", reason, per)
        chosen, languages = (en, ("en",)) if isinstance(en, Candidate) else (zh, ("zh",))
    else:
        first = en if en.reason != "empty" else zh
        return Outcome(None, first.reason, first.explanation, per)
    if isinstance(chosen, Skip):
        return Outcome(None, chosen.reason, chosen.explanation, per)
    check = chosen.check
    try:
        validate_rubric_check(check)
    except ValueError as exc:
        return Outcome(None, "invalid", f"derived an invalid check ({exc})", per)
    if problems := write_call_contract_problems(check):
        return Outcome(None, "conflict", "; ".join(problems), per)
    if gold_answers and (why := _gold_fails(check, gold_answers)):
        return Outcome(None, "gold fails", why, per)
    compiled = Compiled(
        check=check,
        rule=chosen.rule,
        confidence=round(chosen.confidence if len(languages) == 2 else chosen.confidence - 0.05, 2),
        explanation=chosen.explanation,
        languages=languages,
    )
    return Outcome(compiled, "compiled", chosen.explanation, per)


def compile_item(
    *, text_en: str, text_zh: str = "", task_type: str, gold_steps: Sequence[Any] | None = None
) -> Compiled | None:
    """The machine-checkable form of a natural-language rubric item, or None (it stays unscored)."""
    return attempt(text_en=text_en, text_zh=text_zh, task_type=task_type, gold_steps=gold_steps).compiled
