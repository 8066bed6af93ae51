"""Values in a PhysAssistBench record: JSON type checks, dates and datetimes, NUL bytes; each refusal a
:class:`PabRecordError` naming the field."""

import re
from datetime import UTC, date, datetime
from typing import Any

from scenarios.pab.errors import PabRecordError


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "list", dict: "object"}.get(type(value), type(value).__name__)


def expect(value: Any, kind: str, name: str, *, nullable: bool = False) -> Any:
    if value is None and nullable:
        return value
    if type_name(value) != kind:
        raise PabRecordError(name, f"expected {kind}{' or null' if nullable else ''}, got {type_name(value)}")
    return value


def choice(value: Any, allowed: tuple[str, ...], name: str, *, nullable: bool = False) -> Any:
    expect(value, "string", name, nullable=nullable)
    if value is not None and value not in allowed:
        raise PabRecordError(name, f"unknown value {value!r} (expected one of: {', '.join(allowed)})")
    return value


def whole_number(value: Any, name: str) -> int:
    """An integer field; ``22444183.0`` counts as ``22444183`` because the release's pandas-written
    tables spell integer ids that way (the caller keeps the spelling for the export)."""
    if isinstance(value, float) and not isinstance(value, bool):
        if not value.is_integer():
            raise PabRecordError(name, f"expected integer, got {value!r} (not a whole number)")
        return int(value)
    return expect(value, "integer", name)


_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def iso_date(value: str) -> date:
    if not _DATE_RE.match(value):
        raise PabRecordError("current_date", f"{value!r} is not a date in the form YYYY-MM-DD")
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise PabRecordError("current_date", f"{value!r} is not a valid date ({exc})") from None


def parse_datetime(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise PabRecordError("generated_at", f"{value!r} is not an ISO datetime") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)  # naive = UTC wall time


def render_datetime(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


def has_nul(value: Any) -> bool:
    # PostgreSQL text and jsonb cannot hold U+0000; refuse it here rather than fail the file's transaction.
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    return False
