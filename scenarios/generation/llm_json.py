"""Strict JSON answers from an LLM: parse, validate against a small schema, re-ask a bounded number of times.

A malformed or off-schema reply is never an exception for the caller: after the re-asks it returns
``None`` with the problems, and the caller turns that into a gate failure. Request failures of the
LLM client (endpoint down, retries exhausted) do propagate: they are not the model's output. The one
exception is a server that says it could not parse the model's own output (``unparseable``): that is
the model's failure and is re-asked like a bad reply.

Real instruction models wrap the object in deviations that are not content errors; these are accepted:
a ```json fence (anywhere in the reply), prose or a <think> block before the object, prose after it,
keys in another case or spelling style (``Request_Explicit``, ``requestExplicit``). Trailing commas are
not repaired (no well-kept parser for them here): they are refused, named as such. Everything else is
refused with a reason that names the cause (parse error with its position and the text there, cut off
at the output limit, refusal, missing/extra keys, wrong types).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.llm import LLMRequestError, UsageAccumulator
from scenarios.generation.prompts import REASK, Prompt

# Schema: key → "str" (non-empty) | "str?" (optional: any string, null or absent) | "bool"
# | ("list", n) (exactly n non-empty strings) | {nested schema}.
Schema = dict[str, Any]
Validator = Callable[[dict[str, Any]], list[str]]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n`]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_JSON_FENCE_LABELS = ("", "json", "jsonc", "json5")
# The start of a JSON object: a brace then a quoted key or the closing brace (prose braces such as
# "{patient}" are not). The first such brace is the outermost object.
_OBJECT_START = re.compile(r"\{\s*[\"}]")
_REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry|i can(?:no|')t|i cannot|i won'?t|i am unable|i'?m unable|"
    r"i'?m not able|as an ai|unfortunately)",
    re.IGNORECASE,
)
# Reasoning models served without a reasoning parser put their thinking in the content first.
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_MAX_PROBLEMS = 6
QUOTE_CHARS = 80


@dataclass
class JsonAnswer:
    data: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    # Problems of every try, in order (the last one is ``problems``): a reason to report, not to re-ask.
    history: list[list[str]] = field(default_factory=list)


def quote(text: str, *, limit: int = QUOTE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (the cut is marked), for a reason message."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _decode_problem(*, text: str, exc: json.JSONDecodeError) -> str:
    """A parse error with its position and the text there; a trailing comma is named as such."""
    where = f"line {exc.lineno} column {exc.colno}"
    rest = text[exc.pos :].lstrip()
    if text[: exc.pos].rstrip().endswith(",") and rest[:1] in ("}", "]"):
        return f"the reply is not valid JSON (trailing comma before {rest[:1]!r}, {where})"
    near = text[max(0, exc.pos - 30) : exc.pos + 30]
    if not rest:
        return f"the reply is not valid JSON ({exc.msg}, {where}: the text ends there, after {quote(near)})"
    return f"the reply is not valid JSON ({exc.msg}, {where}, near {quote(near)})"


def parse_json_object(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object in ``text`` (fenced, or with prose around it), or the reason there is none."""
    if not text or not text.strip():
        return None, "the reply is empty"
    if not (text := _THINK.sub("", text).strip()):
        return None, "the reply is only a <think> block, without an answer"
    # The bodies to try, best first: the whole reply, JSON fences, the first object in prose.
    bodies: list[str] = [text]
    bodies += [m.group(2).strip() for m in _FENCE.finditer(text) if m.group(1).lower() in _JSON_FENCE_LABELS]
    decoder = json.JSONDecoder()
    first_error: str | None = None
    for body in bodies:
        start = _OBJECT_START.search(body)
        # No object start: a brace that opens a broken object ({request: ...}) still gives its parse error.
        begin = start.start() if start else body.find("{")
        if begin < 0:
            continue
        try:
            value, _ = decoder.raw_decode(body, begin)
        except json.JSONDecodeError as exc:
            first_error = first_error or _decode_problem(text=body, exc=exc)
            continue
        if isinstance(value, dict):
            return value, None
    if first_error:
        return None, first_error
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        if _REFUSAL.match(text):
            return None, f"the model declined instead of answering: {quote(text)}"
        return None, f"the reply has no JSON object; it reads {quote(text)}"
    return None, f"the reply is JSON {type(value).__name__}, not an object"


def _key_form(key: str) -> str:
    return re.sub(r"[^0-9a-z]", "", key.casefold())


def normalize_keys(*, value: dict[str, Any], schema: Schema) -> tuple[dict[str, Any], list[str]]:
    """``value`` with keys that differ from the schema's only in case or separators renamed
    (``Request_Explicit``, ``requestExplicit`` → ``request_explicit``), nested objects too.
    Two keys that would both become the same key are a problem, not a guess."""
    forms = {_key_form(k): k for k in schema}
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    problems: list[str] = []
    for key, item in value.items():
        target = key if key in schema else forms.get(_key_form(key), key)
        if target in out:
            problems.append(f"keys {given[target]!r} and {key!r} both mean {target!r}")
            continue
        given[target] = key
        kind = schema.get(target)
        if isinstance(kind, dict) and isinstance(item, dict):
            item, nested = normalize_keys(value=item, schema=kind)
            problems += [f"in {target!r}: {p}" for p in nested]
        out[target] = item
    return out, problems


def schema_problems(*, value: dict[str, Any], schema: Schema, where: str = "") -> list[str]:
    problems: list[str] = []
    for extra in sorted(set(value) - set(schema), key=str):
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
                problems.append(f"{name!r} must be an object, got {_type(got)}")
            else:
                problems.extend(schema_problems(value=got, schema=kind, where=f"{name}."))
        elif kind == "bool" and not isinstance(got, bool):
            problems.append(f"{name!r} must be true or false, got {_type(got)}")
        elif kind == "str" and not (isinstance(got, str) and got.strip()):
            problems.append(f"{name!r} must be a non-empty string, got {_type(got)}")
        elif kind == "str?" and not (got is None or isinstance(got, str)):
            problems.append(f"{name!r} must be a string or null, got {_type(got)}")
        elif isinstance(kind, tuple):
            _, length = kind
            if not isinstance(got, list) or not all(isinstance(x, str) and x.strip() for x in got):
                problems.append(f"{name!r} must be a list of non-empty strings, got {_type(got)}")
            elif len(got) != length:
                problems.append(f"{name!r} must have exactly {length} items, got {len(got)}")
    return problems


def _type(value: Any) -> str:
    """What a wrong value is, as a reason names it (JSON type names; an empty string is named)."""
    if isinstance(value, str):
        return "an empty string" if not value.strip() else f"string {quote(value, limit=40)}"
    if isinstance(value, list):
        bad = [i for i, x in enumerate(value) if not (isinstance(x, str) and x.strip())]
        return f"a list whose item {bad[0]} is {_type(value[bad[0]])}" if bad else "a list"
    names = {bool: "a boolean", int: "a number", float: "a number", dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def reply_problems(*, result: Any, role: str = "") -> tuple[dict[str, Any] | None, list[str]]:
    """The reply's JSON object, or why it cannot be used: refusal, truncation, content filter, parse error."""
    message = _message(result)
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        return None, [f"the model refused: {quote(refusal)}"]
    data, error = parse_json_object(result.content)
    if error is None:
        return data, []
    if result.finish_reason == "length":
        tokens = result.usage.completion_tokens if result.usage else None
        after = f" after {tokens} completion tokens" if tokens else ""
        hint = f"; LLM_{role.upper()}_MAX_TOKENS sets the limit" if role else ""
        return None, [f"the reply was cut off at the output limit (finish_reason=length{after}{hint}): {error}"]
    if result.finish_reason == "content_filter":
        return None, [f"the provider's content filter stopped the reply (finish_reason=content_filter): {error}"]
    return None, [error]


def _message(result: Any) -> dict[str, Any]:
    raw = getattr(result, "raw", None)
    try:
        message = raw["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return {}
    return message if isinstance(message, dict) else {}


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
        answer.calls += 1
        try:
            result = client.chat(
                messages=messages,
                response_format={"type": "json_object"},
                temperature=temperature,
                cache_salt=cache_salt,
            )
        except LLMRequestError as exc:
            if not getattr(exc, "unparseable", False):
                raise  # endpoint trouble, not the model's output
            # The server could not parse what the model produced: the model's failure, asked again as is.
            answer.problems = [f"the server rejected the model's output ({exc.kind}): {quote(_detail(exc))}"]
            answer.history.append(answer.problems)
            continue
        usage.add(result)
        data, problems = reply_problems(result=result, role=getattr(getattr(client, "config", None), "role", ""))
        if data is not None:
            data, problems = normalize_keys(value=data, schema=schema)
            problems = problems or schema_problems(value=data, schema=schema)
        if not problems and validate is not None:
            problems = validate(data)
        if not problems:
            answer.data, answer.problems = data, []
            return answer
        answer.problems = problems[:_MAX_PROBLEMS]
        answer.history.append(answer.problems)
        # The model sees its own reply and what is wrong with it, so the re-ask can converge.
        messages = [
            *messages,
            {"role": "assistant", "content": result.content or ""},
            {"role": "user", "content": REASK.format(problems="; ".join(answer.problems))},
        ]
    return answer


def _detail(exc: LLMRequestError) -> str:
    """The server's own words from the client's message (which also names role, model and endpoint)."""
    text = str(exc)
    marker = f"failed with {exc.kind}"
    if exc.kind and marker in text:
        text = text.split(marker, 1)[1].lstrip(": ")
        text = text.split("; not retried", 1)[0].split("; gave up", 1)[0]
    return text.strip() or exc.kind


def unusable(*, role: str, answer: JsonAnswer) -> str:
    """The ``llm_output`` gate message: the last try's problems, and the other problems earlier tries had."""
    last = "; ".join(answer.problems)
    earlier = [p for problems in answer.history[:-1] for p in problems if p not in answer.problems]
    earlier = list(dict.fromkeys(earlier))[:3]
    tail = f" (earlier tries: {'; '.join(earlier)})" if earlier else ""
    return f"{role} output unusable after {answer.calls} tries: {last}{tail}"
