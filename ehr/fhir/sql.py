"""Running the tools' hand-written hot queries.

On PostgreSQL the query goes through a server-side-binding psycopg cursor on Django's own
connection (same transaction, same query logging) and is run as a prepared statement. Django's
default cursor binds parameters on the client and Django turns psycopg's automatic preparation off
(for transaction-mode poolers), so every call would be parsed and planned again: that was about
0.3 ms of a 0.5 ms ``Observation.search`` in bench/tool_latency.py. Preparing only these few
fixed-shape queries is safe without a pooler and with PgBouncer >= 1.21 (protocol-level prepared
statements); set ``PREPARE = False`` for an older transaction-mode pooler. SQLite uses Django's cursor.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils.dateparse import parse_date, parse_datetime

PREPARE = True


@cache
def _preparing_cursor_class() -> type:
    # Imported late: the PostgreSQL backend module needs psycopg, which SQLite-only setups may lack.
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None):
            prepare = PREPARE if prepare is None else prepare
            conn = self.connection
            saved = conn.prepare_threshold
            # Django sets prepare_threshold=None, which makes psycopg ignore prepare=True; lift it for
            # this statement only (Django's own client-binding cursors never prepare anyway).
            if prepare and saved is None:
                conn.prepare_threshold = 5
            try:
                return super().execute(query, params, prepare=prepare, binary=binary)
            finally:
                conn.prepare_threshold = saved

    return PreparingCursor


@cache
def _fast_timestamptz_loader() -> type:
    """psycopg's own (C) timestamptz loader. Django registers a Python subclass of the pure-Python loader on its
    connections (it only swaps the tzinfo for an equal UTC one), which parses each value in Python: ~0.3 ms of a
    50-row search in bench/tool_latency.py --ehr-tools. Same instants, tz-aware, in the session's UTC."""
    from psycopg import postgres
    from psycopg.pq import Format

    return postgres.adapters.get_loader(postgres.types["timestamptz"].oid, Format.TEXT)


def _new_cursor(raw_connection: Any) -> Any:
    cursor = _preparing_cursor_class()(raw_connection)
    cursor.adapters.register_loader("timestamptz", _fast_timestamptz_loader())
    return cursor


def fetch_all(sql: str, params: list[Any]) -> list[tuple]:
    """``sql`` uses ``%s`` placeholders; text parameters compared with functions need ``CAST(%s AS TEXT)``."""
    db = connections[DEFAULT_DB_ALIAS]  # the proxy's thread-local lookup once, not at every attribute
    if db.vendor != "postgresql":
        with db.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    db.ensure_connection()
    if db.queries_logged or db.execute_wrappers:
        # Wrapped like Django's own cursors when someone watches (DEBUG, tests, instrumentation).
        raw = _new_cursor(db.connection)
        with db.make_debug_cursor(raw) if db.queries_logged else db.make_cursor(raw) as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    # Nobody watches: a bare cursor, made once per database connection and reused (its creation and loader set-up
    # were ~15 us of a ~170 us Patient.read; Django's per-call wrapping another ~20 us). Errors surface as psycopg
    # exceptions; execute_tool turns any exception into an error dict.
    cursor = getattr(db, "_physreview_tool_cursor", None)
    if cursor is None or cursor.closed or cursor.connection is not db.connection:
        cursor = db._physreview_tool_cursor = _new_cursor(db.connection)
    cursor.execute(sql, params)
    return cursor.fetchall()


def db_datetime(value: Any) -> Any:
    """A datetime parameter as the backend expects it (aware on PostgreSQL, naive UTC text on SQLite)."""
    return value if connection.vendor == "postgresql" else connection.ops.adapt_datetimefield_value(value)


def db_date(value: Any) -> Any:
    """A date parameter as the backend expects it (a date on PostgreSQL, ISO text on SQLite)."""
    return value if connection.vendor == "postgresql" else connection.ops.adapt_datefield_value(value)


def parse_db_datetime(value: Any) -> Any:
    """A computed datetime column (e.g. ``COALESCE``): SQLite returns it as text, naive UTC."""
    return parse_datetime(value) if isinstance(value, str) else value


def parse_db_date(value: Any) -> Any:
    """A date column read with a hand-written query: SQLite returns it as ISO text."""
    return parse_date(value) if isinstance(value, str) else value


def startswith(text: str) -> tuple[str, str]:
    """Django's ``startswith`` as (SQL with a ``{column}`` slot, parameter), for this backend."""
    pattern = f"{connection.ops.prep_for_like_query(text)}%"
    if connection.vendor == "postgresql":
        return "{column}::text LIKE %s", pattern
    return "{column} LIKE %s ESCAPE '\\'", pattern


def icontains(text: str) -> tuple[str, str]:
    """Django's ``icontains`` as (SQL with a ``{column}`` slot, parameter), for this backend."""
    pattern = f"%{connection.ops.prep_for_like_query(text)}%"
    if connection.vendor == "postgresql":
        return "UPPER({column}::text) LIKE UPPER(CAST(%s AS TEXT))", pattern
    return "{column} LIKE %s ESCAPE '\\'", pattern


def fits_integer(*values: int | None) -> bool:
    """Whether every non-null value fits an ``IntegerField`` column here. The ORM answers "no rows"
    without querying otherwise; a hand-written query must too (SQLite cannot bind ints past 64 bits)."""
    low, high = connection.ops.integer_field_range("IntegerField")
    return all(v is None or low <= v <= high for v in values)
