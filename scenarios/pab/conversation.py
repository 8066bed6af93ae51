"""The gold conversation (``messages``, ``messages_en``, ``messages_zh``) and how it maps to turns.

A conversation is a list of ``{"role", "content"}`` dicts with one plain string (a line of ``=``)
between turns. Rule: the turns are the source of truth. Turn *i*'s segment is rebuilt as
``[{"role": "user", "content": <implicit request>}, {"role": "assistant", "content": <answer>}]``
(the implicit form is what the assistant was given, PAB's ``tasks``). An imported segment that
differs from that rebuild (extra system/tool messages, several assistant messages, other keys) is
kept verbatim on the turn and exported as long as the turn's request and answer are unchanged; the
whole list is kept the same way when its shape differs beyond the segments (another separator, a
trailing separator). See :mod:`scenarios.pab.verbatim`.

The release also writes conversations (``messages_zh`` in particular) with no separator at all: then
the list is user/assistant pairs only, two entries per turn, and :func:`split` says so by returning
``None`` as the separator.
"""

from typing import Any

from scenarios.pab.errors import PabRecordError

DEFAULT_SEPARATOR = "=" * 50


def split(*, messages: list[Any], n_turns: int, field: str) -> tuple[list[list[dict[str, Any]]], str | None]:
    """Segments (one per turn) and the separator used (``None``: a list of pairs without separators);
    raises when the turns cannot be told apart."""
    segments: list[list[dict[str, Any]]] = [[]]
    separator: str | None = None
    for i, element in enumerate(messages):
        if isinstance(element, str):
            separator = element if separator is None else separator
            segments.append([])
        elif isinstance(element, dict) and isinstance(element.get("role"), str):
            segments[-1].append(element)
        else:
            raise PabRecordError(f"{field}[{i}]", "expected a {role, content} object or a separator string")
    if separator is None and n_turns > 1:
        return _pairs(messages=messages, n_turns=n_turns, field=field), None
    if len(segments) == n_turns + 1 and not segments[-1]:
        segments.pop()  # trailing separator; the exact list is kept verbatim by the caller
    if len(segments) != n_turns:
        raise PabRecordError(
            field, f"{len(segments)} turn(s) separated by plain strings, expected {n_turns} (one per turn)"
        )
    return segments, separator or DEFAULT_SEPARATOR


def _pairs(*, messages: list[dict[str, Any]], n_turns: int, field: str) -> list[list[dict[str, Any]]]:
    # Without separators nothing else tells the turns apart, so the shape must be exact.
    if len(messages) != 2 * n_turns:
        raise PabRecordError(
            field,
            f"{len(messages)} entries and no turn separator: expected {2 * n_turns} "
            f"(a user and an assistant message for each of the {n_turns} turns)",
        )
    for i, message in enumerate(messages):
        expected = "assistant" if i % 2 else "user"
        if message["role"] != expected:
            raise PabRecordError(
                f"{field}[{i}]",
                f"role {message['role']!r}, expected {expected!r} (without turn separators the list is "
                "user/assistant pairs)",
            )
    return [messages[i : i + 2] for i in range(0, len(messages), 2)]


def without_separators(messages: list[Any]) -> list[Any]:
    """The separator-less layout of an assembled conversation."""
    return [m for m in messages if not isinstance(m, str)]


def answer_of(*, segment: list[dict[str, Any]], field: str, turn: int) -> str:
    """The gold answer: the text of the turn's last assistant message."""
    for message in reversed(segment):
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    raise PabRecordError(field, f"turn {turn} has no assistant message with text content")


def rebuild_segment(*, request: str, answer: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": request}, {"role": "assistant", "content": answer}]


def assemble(*, segments: list[list[dict[str, Any]]], separator: str) -> list[Any]:
    out: list[Any] = []
    for i, segment in enumerate(segments):
        if i:
            out.append(separator)
        out.extend(segment)
    return out
