"""Gold audit (issue 13): are the stored gold calls, numbers and request premises borne out by the record?

Entry points: :func:`scenarios.audit.services.audit_sessions` (runs and stores), the readers of
:mod:`scenarios.audit.selectors`, and ``manage.py audit_gold`` (``annotations`` app, which also
resolves ``--snapshot``).
"""

from scenarios.audit.report import AuditReport, SessionResult, TurnResult, session_table, totals_line
from scenarios.audit.services import audit_sessions

__all__ = ["AuditReport", "SessionResult", "TurnResult", "audit_sessions", "session_table", "totals_line"]
