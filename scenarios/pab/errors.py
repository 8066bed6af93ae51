"""Errors of the PhysAssistBench reader/importer/exporter.

A record error names the field; the importer prefixes ``FILE:LINE:`` so the user reads
``FILE:LINE: field 'x': what is wrong``.
"""


class PabRecordError(ValueError):
    """One record is malformed. ``str(exc)`` is ``field 'x': what is wrong``."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"field '{field}': {message}")


class PabLineError(ValueError):
    """A line is not a JSON record at all (bad UTF-8, bad JSON); no field to name."""


class PabArgumentError(ValueError):
    """Bad command arguments (unknown filter value, missing output folder); nothing was written."""
