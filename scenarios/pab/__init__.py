"""PhysAssistBench JSONL interop: ``import_pab`` / ``export_pab`` (see ``shared/formats/physassistbench-session.md``).

Public API::

    from scenarios.pab import export_pab, import_pab_files, parse_record, session_to_record

Modules: :mod:`~scenarios.pab.schema` (field layout, validation), :mod:`~scenarios.pab.reader`
(JSONL lines), :mod:`~scenarios.pab.writer` (session → record), :mod:`~scenarios.pab.conversation`
(gold conversation ↔ turns), :mod:`~scenarios.pab.verbatim` (lossless re-export),
:mod:`~scenarios.pab.values` (JSON type checks), and
:mod:`~scenarios.pab.services` (the two jobs).
"""

from scenarios.pab.errors import PabArgumentError, PabLineError, PabRecordError
from scenarios.pab.schema import parse_record
from scenarios.pab.services import ExportResult, FileImport, export_pab, import_pab_file, import_pab_files
from scenarios.pab.writer import dumps_record, session_to_record

__all__ = [
    "ExportResult",
    "FileImport",
    "PabArgumentError",
    "PabLineError",
    "PabRecordError",
    "dumps_record",
    "export_pab",
    "import_pab_file",
    "import_pab_files",
    "parse_record",
    "session_to_record",
]
