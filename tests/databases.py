"""What the test database can do: a newcomer's run uses a SQLite file, CI's second run PostgreSQL."""

from django.db import connection


def serves_concurrent_connections() -> bool:
    """Several threads or processes can each open their own connection to the test database (PostgreSQL, or
    the SQLite test *file* that settings configure: not Django's in-memory default, which one connection owns)."""
    return connection.vendor == "postgresql" or (connection.vendor == "sqlite" and not connection.is_in_memory_db())
