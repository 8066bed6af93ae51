"""Exceptions of the MIMIC importer.

Two kinds: bad arguments (the whole run cannot start) and a table that cannot be imported
(the run stops there; the message is the ``FILE:LINE: what is wrong`` line the user reads).
"""


class ImportArgumentError(ValueError):
    """The import cannot start: missing directory, unknown table name, empty subject list..."""


class TableImportError(Exception):
    """One table cannot be imported; its transaction is rolled back. ``str(exc)`` is the user message."""


class RowError(ValueError):
    """One record is invalid; the message names the column and value but not the file/line."""
