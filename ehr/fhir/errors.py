"""Errors a model can read: every bad call becomes ``{"error": ..., "hint": ...}``, never an exception."""

from __future__ import annotations


class ToolError(Exception):
    """Raised inside tool code for a problem the caller can fix; ``execute_tool`` turns it into a dict."""

    def __init__(self, error: str, hint: str) -> None:
        super().__init__(error)
        self.error = error
        self.hint = hint

    def as_dict(self) -> dict[str, str]:
        return {"error": self.error, "hint": self.hint}
