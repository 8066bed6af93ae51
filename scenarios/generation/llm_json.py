"""Strict JSON answers from an LLM: parse, validate against a small schema, re-ask a bounded number of times.

A malformed or off-schema reply is never an exception for the caller: after the re-asks it returns
``None`` with the problems, and the caller turns that into a gate failure. Request failures of the
LLM client (endpoint down, retries exhausted) do propagate: they are not the model's output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from physreview.llm import UsageAccumulator
from scenarios.generation.prompts import REASK, Prompt

# Schema: key → "str" (non-empty) | "str?" (optional: any string, null or absent) | "bool"
# | ("list", n) (exactly n non-empty strings) | {nested schema}.
Schema = dict[str, Any]
Validator = Callable[[dict[str, Any]], list[str]]

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_MAX_PROBLEMS = 6


@dataclass
class JsonAnswer:
    data: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)
    calls: int = 0


def parse_json_object(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object in ``text`` (a ```json fence around it is tolerated), or the reason it is not one."""
    if not text or not text.strip():
        return None, "the reply is empty"
    match = _FENCE.match(text)
    raw = match.group(1) if match else text.strip()
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if not isinstance(value, dict):
        return None, f"the reply is JSON {type(value).__name__}, not an object"
    return value, None


def schema_problems(*, value: dict[str, Any], schema: Schema, where: str = "") -> list[str]:
    problems: list[str] = []
    for extra in sorted(set(value) - set(schema)):
        problems.append(f"unexpected key {where}{extra!r}")
    for key, kind in schema.items():
        name = f"{where}{key}"
        if key not in value:
            if kind != "str?":
                problems.append(f"missing key {name!r}")
            continue
        got = value[key]
        if isinstance(kind, dict):
            if not isinstance(got, dict):
                problems.append(f"{name!r} must be an object")
            else:
                problems.extend(schema_problems(value=got, schema=kind, where=f"{name}."))
        elif kind == "bool" and not isinstance(got, bool):
            problems.append(f"{name!r} must be true or false")
        elif kind == "str" and not (isinstance(got, str) and got.strip()):
            problems.append(f"{name!r} must be a non-empty string")
        elif kind == "str?" and not (got is None or isinstance(got, str)):
            problems.append(f"{name!r} must be a string or null")
        elif isinstance(kind, tuple):
            _, length = kind
            if not isinstance(got, list) or not all(isinstance(x, str) and x.strip() for x in got):
                problems.append(f"{name!r} must be a list of non-empty strings")
            elif len(got) != length:
                problems.append(f"{name!r} must have exactly {length} items, got {len(got)}")
    return problems


def ask_json(
    *,
    client: Any,
    prompt: Prompt,
    payload: dict[str, Any],
    schema: Schema,
    validate: Validator | None,
    usage: UsageAccumulator,
    max_reasks: int,
    temperature: float | None = None,
    cache_salt: str = "",
) -> JsonAnswer:
    """Ask for a JSON object; on a bad reply show the model its problems and ask again (``max_reasks`` times)."""
    messages: list[dict[str, str]] = prompt.messages(payload=payload)
    answer = JsonAnswer(data=None)
    for _ in range(max_reasks + 1):
        result = client.chat(
            messages=messages, response_format={"type": "json_object"}, temperature=temperature, cache_salt=cache_salt
        )
        usage.add(result)
        answer.calls += 1
        data, error = parse_json_object(result.content)
        problems = [error] if error else schema_problems(value=data, schema=schema)
        if not problems and validate is not None:
            problems = validate(data)
        if not problems:
            answer.data, answer.problems = data, []
            return answer
        answer.problems = problems[:_MAX_PROBLEMS]
        # The model sees its own reply and what is wrong with it, so the re-ask can converge.
        messages = [
            *messages,
            {"role": "assistant", "content": result.content or ""},
            {"role": "user", "content": REASK.format(problems="; ".join(answer.problems))},
        ]
    return answer
