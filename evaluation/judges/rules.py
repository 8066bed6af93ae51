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
* ``all_of``: every part (a check of the kinds above) passes; the reason names the first part that fails;
* ``must_not_recommend``: fails when a phrase occurs outside a negated clause ("do not", "avoid",
  "不", "避免"…, between the clause start and the phrase; or the clause goes on "… is not recommended",
  "… should be avoided", "…不宜", "…应避免" after it).

The form scored is the item's ``machine_check``; without one, the rubric compiler's suggestion
(:mod:`scenarios.rubric_compiler`) unless the reviewer removed it, and the verdict's reason then starts
with ``compiled (<rule>):``. Reasons are stored in English (:mod:`scenarios.rubric_reasons` shows them in
the UI language). Items without a form are *unscored*: excluded from the denominator and
counted, never passed or failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ehr.fhir.legacy import upgrade_arguments
from evaluation.arguments import canonical_arguments
from evaluation.dataset import EvalRubric
from scenarios.rubric_checks import validate_rubric_check
from scenarios.rubric_match import (
    check_must_not_recommend,
    check_term,
    check_value_unit,
    params_text,
    squash,
)
from scenarios.rubric_reasons import PART_SEPARATOR, reason

JUDGE_VERSION = "rules-1"


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


def _param_matches(expected: Any, given: Any) -> bool:
    if isinstance(expected, str):
        exp, got = squash(expected), squash(given if given is not None else "")
        if not exp:
            return False
        # part of the given text, but never part of a number: "5mg" is not in "2.5mg" nor in "15mg"
        return exp == got or any(
            not (exp[:1].isdigit() and i and (got[i - 1].isdigit() or got[i - 1] == "."))
            and not (exp[-1:].isdigit() and got[i + len(exp) : i + len(exp) + 1].isdigit())
            for i in _occurrences(got, exp)
        )
    return expected == given


def _occurrences(text: str, part: str) -> list[int]:
    out, start = [], text.find(part)
    while start >= 0:
        out.append(start)
        start = text.find(part, start + 1)
    return out


def check_write_call(*, writes: list[dict[str, Any]], tool: str, params: dict[str, Any]) -> tuple[bool, str]:
    # Old parameters the contract has no place for cannot be checked on a contract call.
    params, _legacy = upgrade_arguments(tool=tool, arguments=dict(params))
    candidates = [w for w in writes if w.get("tool") == tool]
    if not candidates:
        return False, reason("no_call", tool=tool)
    for write in candidates:
        args = canonical_arguments(tool=tool, arguments=write.get("arguments"))
        if all(_param_matches(value, args.get(name)) for name, value in params.items()):
            shown = params_text(params)
            return True, reason("called_with", tool=tool, params=shown) if shown else reason("called_any", tool=tool)
    return False, reason("called_not_with", tool=tool, params=params_text(params))


def judge_item(*, item: EvalRubric, answer: str, writes: list[dict[str, Any]]) -> Verdict:
    check, source = item.scoring_check
    if check is None:
        why = reason("compiled_removed" if item.compiled_state == "removed" else "no_form")
        return Verdict(item.idx, False, None, why, item.is_safety)
    verdict = judge_check(idx=item.idx, check=check, answer=answer, writes=writes, is_safety=item.is_safety)
    if source == "compiled":
        rule = item.compiled_rule or check["kind"]
        return Verdict(
            verdict.idx, True, verdict.passed, reason("compiled", rule=rule, reason=verdict.reason), item.is_safety
        )
    return verdict


def judge_check(
    *, idx: int, check: dict[str, Any], answer: str, writes: list[dict[str, Any]], is_safety: bool = False
) -> Verdict:
    """One machine-checkable form against an answer and its write calls."""
    validate_rubric_check(check)
    kind = check["kind"]
    if kind == "all_of":
        parts = check["checks"]
        verdicts = [judge_check(idx=idx, check=part, answer=answer, writes=writes) for part in parts]
        failed = next((i for i, v in enumerate(verdicts) if not v.passed), None)
        if failed is None:
            ok, why = (
                True,
                reason("all_of_held", count=len(parts), reason=PART_SEPARATOR.join(v.reason for v in verdicts)),
            )
        else:
            ok, why = False, reason("all_of_failed", part=failed + 1, count=len(parts), reason=verdicts[failed].reason)
    elif kind == "value_unit":
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
