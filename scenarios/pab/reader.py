"""Reading a PhysAssistBench JSONL file line by line (constant memory, exact line numbers).

Lines are decoded one at a time so a bad byte or bad JSON is reported on its own line.
Blank lines are skipped; a UTF-8 byte-order mark on the first line is accepted.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarios.pab.errors import PabLineError


@dataclass(frozen=True)
class Line:
    number: int
    nbytes: int  # for progress bars
    value: Any = None
    error: PabLineError | None = None


def _reject_constant(name: str) -> Any:
    # NaN/Infinity are not JSON (and PostgreSQL's jsonb refuses them).
    raise ValueError(f"{name} is not allowed in JSON")


def decode_line(raw: bytes, *, first: bool) -> Any:
    """The JSON value of one line; raises :class:`PabLineError` saying what is wrong."""
    try:
        text = raw.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        raise PabLineError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise PabLineError(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    except ValueError as exc:
        raise PabLineError(f"not valid JSON: {exc}") from None


def read_lines(path: Path) -> Iterator[Line]:
    """One :class:`Line` per non-blank line: the decoded value, or the error."""
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = decode_line(raw.rstrip(b"\r\n"), first=number == 1)
                yield Line(number=number, nbytes=len(raw), value=value)
            except PabLineError as exc:
                yield Line(number=number, nbytes=len(raw), error=exc)
