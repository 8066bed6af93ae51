"""Reading a PhysAssistBench JSONL file line by line (constant memory, exact line numbers).

Lines are decoded one at a time so a bad byte or bad JSON is reported on its own line.
Blank lines are skipped; a UTF-8 byte-order mark on the first line is accepted.
The line's own text of each top-level value is kept as well (:attr:`Line.texts`, in the line's order),
so that fields unchanged since import can be written back byte for byte, in their order.
"""

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios.pab.errors import PabLineError


@dataclass(frozen=True)
class Line:
    number: int
    nbytes: int  # for progress bars
    value: Any = None
    error: PabLineError | None = None
    texts: dict[str, str] = field(default_factory=dict)  # top-level field → its JSON text, in line order


def _reject_constant(name: str) -> Any:
    # NaN/Infinity are not JSON (and PostgreSQL's jsonb refuses them).
    raise ValueError(f"{name} is not allowed in JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_WS = re.compile(r"[ \t\n\r]*")


def _text(raw: bytes, *, first: bool) -> str:
    try:
        return raw.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        raise PabLineError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None


# No PhysAssistBench record comes near this; deeper values are refused before anything walks them recursively.
MAX_DEPTH = 64


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _loads(text: str) -> Any:
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise PabLineError(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    except ValueError as exc:
        raise PabLineError(f"not valid JSON: {exc}") from None
    except RecursionError:  # the parser's own limit (about 1,000 levels)
        raise PabLineError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if _too_deep(value):
        raise PabLineError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def decode_line(raw: bytes, *, first: bool) -> Any:
    """The JSON value of one line; raises :class:`PabLineError` saying what is wrong."""
    return _loads(_text(raw, first=first))


def member_texts(text: str) -> dict[str, str]:
    """The text of each member value of the JSON object ``text`` (already known to be valid JSON).

    A repeated key keeps its last text, as ``json.loads`` keeps its last value.
    """
    out: dict[str, str] = {}
    i = _WS.match(text).end()
    if text[i : i + 1] != "{":
        return out
    i = _WS.match(text, i + 1).end()
    while text[i] != "}":
        key, i = json.decoder.scanstring(text, i + 1)  # text[i] is the key's opening quote
        i = _WS.match(text, _WS.match(text, i).end() + 1).end()  # past the colon
        _, end = _DECODER.raw_decode(text, i)
        out[key] = text[i:end]
        i = _WS.match(text, end).end()
        if text[i] == ",":
            i = _WS.match(text, i + 1).end()
    return out


def read_lines(path: Path, *, known: Collection[str] | None = None) -> Iterator[Line]:
    """One :class:`Line` per non-blank line: the decoded value, or the error.

    With ``known`` (any collection: the caller reads records), each record also gets its members' texts.
    """
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                text = _text(raw.rstrip(b"\r\n"), first=number == 1)
                value = _loads(text)
            except PabLineError as exc:
                yield Line(number=number, nbytes=len(raw), error=exc)
                continue
            # every member's own text (issue 33): the export writes a field unchanged since import as it was read
            texts = member_texts(text) if known is not None and isinstance(value, dict) else {}
            yield Line(number=number, nbytes=len(raw), value=value, texts=texts)
