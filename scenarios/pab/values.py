"""Type checks of JSON values in a PhysAssistBench record, raising :class:`PabRecordError` naming the field."""

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
