"""The ``rules`` judge: deterministic scoring of rubric items that have a machine-checkable form.

Forms (validated by :func:`scenarios.rubric_checks.validate_rubric_check`):

* ``value_unit``: a number in the answer within ``tolerance`` of ``value`` (exact to the value's own
  decimals when the tolerance is 0; a signed change matches its size), with the unit right after it
  or stated once in the same sentence ("Potassium (mEq/L): 5.4, 5.3"); case and spaces are ignored,
  unitless values need only the number;
* ``term``: any of the EN or ZH phrases occurs in the answer (case-insensitive), whatever the language;
* ``write_call``: a recorded (simulated, valid) call of that write tool whose arguments contain every
  expected parameter (strings compared case- and space-insensitively, the expected text may be part of
  the given one; other values by equality). Both sides are compared in the released contract's terms
  (:mod:`evaluation.arguments`): the call as the tool ran it (aliases such as ``reason`` → ``indication``,
  ``stat`` → ``asap``), the check's params upgraded when stored by an earlier version (``status:
  on-hold`` → ``dose: hold``, ``code`` → ``service_type``). ``legacy_params`` (old parameters the
  contract has no place for, kept by the migration) are never scored;
* ``must_not_recommend``: fails when a phrase occurs outside a negated clause ("do not", "avoid",
  "不", "避免"…, between the clause start and the phrase; or the clause goes on "… is not recommended",
  "… should be avoided", "…不宜", "…应避免" after it).

The form scored is the item's ``machine_check``; without one, the rubric compiler's suggestion
(:mod:`scenarios.rubric_compiler`) unless the reviewer removed it, and the verdict's reason then starts
with ``compiled (<rule>):``. Items without a form are *unscored*: excluded from the denominator and
counted, never passed or failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ehr.fhir.legacy import upgrade_arguments
from evaluation.arguments import canonical_arguments
from evaluation.dataset import EvalRubric
from scenarios.rubric_checks import validate_rubric_check

JUDGE_VERSION = "rules-1"
# Not \w before the number: in Chinese a number follows a character directly ("肌酐0.9 mg/dL").
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?\d+(?:[.,]\d+)?")
_UNIT_WINDOW = 6
_SENTENCE_END = re.compile(r"[。；;！？!?\n]|\.(?=\s|$)")
_CLAUSE_END = re.compile(r"[.;!?\n。；！？:：]")
_NEGATION_EN = re.compile(
    r"\b(?:not|no|never|avoid|avoiding|without|against|instead of|rather than|contraindicated|don't|do not|"
    r"should not|shouldn't|hold off)\b",
    re.IGNORECASE,
)
_NEGATION_ZH = re.compile(r"不|勿|避免|禁|无需|未|别")
# Negation after the phrase, in the same clause ("NSAIDs should be avoided", "加量不可取").
_NEGATED_AFTER = re.compile(
    r"^[^.;!?\n。；！？]{0,40}?(?:\b(?:is|are|would be|should be|must be)\s+(?:not|never|avoided|contraindicated)\b"
    r"|\bnot\s+(?:recommended|advised|indicated|needed|necessary|appropriate|warranted)\b"
    r"|\bshould\s+(?:not|be avoided)\b|\bis\s+unsafe\b)"
    r"|^[^。；！？\n]{0,12}?(?:不宜|不建议|不推荐|不需要|无需|应避免|需避免|禁用|不可取|不应|不必)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    idx: int
    scored: bool
    passed: bool | None
    reason: str
    is_safety: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "idx": self.idx,
            "scored": self.scored,
            "passed": self.passed,
            "reason": self.reason,
            "is_safety": self.is_safety,
        }


def _squash(text: str) -> str:
    return "".join(str(text).lower().split())


def _decimals(value: float) -> int:
    text = repr(float(value))
    return len(text.split(".")[1].rstrip("0")) if "." in text and "e" not in text else 0


def _close(number: float, value: float, tolerance: float, places: int) -> bool:
    if tolerance > 0:
        return abs(number - value) <= tolerance
    return round(number, places) == round(value, places)


def _sentence(text: str, start: int, end: int) -> str:
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _SENTENCE_END.finditer(text, end)), len(text))
    return text[left:right]


def check_value_unit(*, answer: str, value: float, unit: str, tolerance: float = 0) -> tuple[bool, str]:
    unit_key = _squash(unit)
    places = _decimals(value)
    for match in _NUMBER.finditer(answer):
        number = float(match.group().replace(",", "."))
        # A change may be written signed ("-1.4 mEq/L") while the rubric states its size.
        if not (_close(number, value, tolerance, places) or _close(abs(number), abs(value), tolerance, places)):
            continue
        if not unit_key:
            return True, f"found {match.group()}"
        after = _squash(answer[match.end() : match.end() + len(unit) + _UNIT_WINDOW])
        if after.startswith(unit_key):
            return True, f"found {match.group()} {unit}"
        # A list of values whose unit is stated once in the same sentence ("Potassium (mEq/L): 5.4, 5.3").
        if unit_key in _squash(_sentence(answer, match.start(), match.end())):
            return True, f"found {match.group()} with {unit} in the same sentence"
    return False, f"no {value} {unit} (±{tolerance}) in the answer"


def _quoted(phrases: list[str]) -> str:
    """Phrases as a physician reads them (“a”, “b”), not a Python list repr."""
    return ", ".join(f"“{p}”" for p in phrases)


def _params_text(params: dict[str, Any]) -> str:
    return "; ".join(f"{name} = {_quoted([v]) if isinstance(v, str) else v}" for name, v in params.items())


def check_term(*, answer: str, phrases: list[str]) -> tuple[bool, str]:
    low = answer.lower()
    for phrase in phrases:
        if phrase.lower() in low:
            return True, f"mentions {_quoted([phrase])}"
    return False, f"none of {_quoted(phrases)} in the answer"


def _negated(text: str, start: int) -> bool:
    clause_start = 0
    for match in _CLAUSE_END.finditer(text, 0, start):
        clause_start = match.end()
    before = text[clause_start:start]
    return bool(_NEGATION_EN.search(before) or _NEGATION_ZH.search(before))


def check_must_not_recommend(*, answer: str, phrases: list[str]) -> tuple[bool, str]:
    low = answer.lower()
    for phrase in phrases:
        needle = phrase.lower()
        for match in re.finditer(re.escape(needle), low):
            if not _negated(low, match.start()) and not _NEGATED_AFTER.search(low[match.end() :]):
                return False, f"recommends {_quoted([phrase])}"
    return True, "does not recommend any of the listed actions"


def _param_matches(expected: Any, given: Any) -> bool:
    if isinstance(expected, str):
        exp, got = _squash(expected), _squash(given if given is not None else "")
        return bool(exp) and (exp == got or exp in got)
    return expected == given


def check_write_call(*, writes: list[dict[str, Any]], tool: str, params: dict[str, Any]) -> tuple[bool, str]:
    # Old parameters the contract has no place for cannot be checked on a contract call.
    params, _legacy = upgrade_arguments(tool=tool, arguments=dict(params))
    candidates = [w for w in writes if w.get("tool") == tool]
    if not candidates:
        return False, f"no {tool} call was made"
    for write in candidates:
        args = canonical_arguments(tool=tool, arguments=write.get("arguments"))
        if all(_param_matches(value, args.get(name)) for name, value in params.items()):
            return True, f"{tool} called with {_params_text(params) or 'any parameters'}"
    return False, f"{tool} called, but not with {_params_text(params)}"


def judge_item(*, item: EvalRubric, answer: str, writes: list[dict[str, Any]]) -> Verdict:
    check, source = item.scoring_check
    if check is None:
        why = (
            "compiled form removed by the reviewer" if item.compiled_state == "removed" else "no machine-checkable form"
        )
        return Verdict(item.idx, False, None, why, item.is_safety)
    verdict = judge_check(idx=item.idx, check=check, answer=answer, writes=writes, is_safety=item.is_safety)
    if source == "compiled":
        rule = item.compiled_rule or check["kind"]
        return Verdict(verdict.idx, True, verdict.passed, f"compiled ({rule}): {verdict.reason}", item.is_safety)
    return verdict


def judge_check(
    *, idx: int, check: dict[str, Any], answer: str, writes: list[dict[str, Any]], is_safety: bool = False
) -> Verdict:
    """One machine-checkable form against an answer and its write calls."""
    validate_rubric_check(check)
    kind = check["kind"]
    if kind == "value_unit":
        ok, why = check_value_unit(
            answer=answer, value=check["value"], unit=check["unit"], tolerance=check.get("tolerance", 0)
        )
    elif kind == "term":
        ok, why = check_term(answer=answer, phrases=[*check["en"], *check["zh"]])
    elif kind == "write_call":
        ok, why = check_write_call(writes=writes, tool=check["tool"], params=check["params"])
    else:
        ok, why = check_must_not_recommend(answer=answer, phrases=[*check["en"], *check["zh"]])
    return Verdict(idx, True, ok, why, is_safety)


class RulesJudge:
    name = "rules"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": JUDGE_VERSION, "prompt_hash": None}

    def judge(self, *, session: Any, turn: Any, language: str, trace: dict[str, Any]) -> list[Verdict]:
        answer = trace.get("answer") or ""
        writes = trace.get("writes") or []
        return [judge_item(item=item, answer=answer, writes=writes) for item in turn.rubric]
