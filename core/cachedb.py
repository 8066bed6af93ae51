"""Django's database cache with an atomic ``incr`` (the login throttle's counters live in it).

Django's ``DatabaseCache.incr`` is ``get`` then ``set``: two processes can read the same value, and the
``set`` also moves the key's expiry. Here the increment locks the row with a write before reading it,
on PostgreSQL (row lock) and SQLite (database write lock) alike, and keeps the expiry.
"""

from __future__ import annotations

import base64
import pickle

from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router, transaction
from django.utils import timezone


class AtomicDatabaseCache(DatabaseCache):
    def incr(self, key, delta=1, version=None):
        key = self.make_and_validate_key(key, version=version)
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        table = connection.ops.quote_name(self._table)
        now = connection.ops.adapt_datetimefield_value(timezone.now().replace(microsecond=0))
        with transaction.atomic(using=db), connection.cursor() as cursor:
            # The write comes first so that a concurrent increment waits here, before it reads the value.
            cursor.execute(f"UPDATE {table} SET expires = expires WHERE cache_key = %s AND expires > %s", [key, now])
            if cursor.rowcount == 0:
                raise ValueError(f"Key '{key}' not found")
            cursor.execute(f"SELECT value FROM {table} WHERE cache_key = %s", [key])
            # The cache table is written only by this cache (as in Django's DatabaseCache.get).
            value = pickle.loads(base64.b64decode(cursor.fetchone()[0].encode())) + delta  # noqa: S301
            pickled = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
            cursor.execute(f"UPDATE {table} SET value = %s WHERE cache_key = %s", [pickled, key])
        return value
