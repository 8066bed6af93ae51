"""SQLite, the embedded default (``make demo``, ``make test`` with no ``DATABASE_URL``), tuned for a server.

Write-ahead logging lets readers go on while one writer commits (the rollback journal makes every reader wait
for a writer and a writer for every reader), which is what a dev server with several reviewers, the live-server
threads of the browser tests and forked ``runeval --processes`` workers need. ``synchronous=NORMAL`` is the
setting SQLite recommends with WAL: still crash-safe, one fsync per checkpoint instead of per commit.
Django 5.2's SQLite backend has no ``init_command`` option, hence a ``connection_created`` receiver.
"""

from django.db.backends.signals import connection_created


def _tune_sqlite_connection(sender, connection, **kwargs) -> None:
    if connection.vendor != "sqlite" or connection.is_in_memory_db():
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")


def connect_sqlite_tuning() -> None:
    connection_created.connect(_tune_sqlite_connection, dispatch_uid="physreview.sqlite.tune")
