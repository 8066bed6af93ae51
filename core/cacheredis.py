"""Django's Redis cache, with one redis-py client per connection pool and reads ahead in one round trip.

Django's ``RedisCacheClient.get_client`` makes a new ``redis.Redis`` for every cache call, and each one
builds its table of ~170 response callbacks: on the review screen (about ten cache calls) that was
1-3 ms of CPU per request. A ``redis.Redis`` is safe to share between threads (each command takes a
connection from the pool), so it is made once per pool and reused.

:func:`read_ahead`: a screen that knows the keys it will read (its header, guidelines, rendered
fragments) fetches them with one ``MGET`` instead of one ``GET`` each. Under load every round trip is
also a wait for the GIL and for a core, so the review screen's nine reads cost more than their bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_MISS = object()  # read ahead and not in Redis: a later get() returns its default without asking again


class _ReusedClients(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}
        # Values read ahead, by full key; None outside read_ahead. Plain state, not a ContextVar: Django
        # gives every thread its own cache backend, and with it its own client.
        self._ahead: dict[str, Any] | None = None

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client

    @contextmanager
    def reading_ahead(self, keys: list[str]) -> Iterator[None]:
        outer = self._ahead
        found = super().get_many(keys) if keys else {}
        self._ahead = {**(outer or {}), **{key: found.get(key, _MISS) for key in keys}}
        try:
            yield
        finally:
            self._ahead = outer

    def get(self, key, default):
        if self._ahead is not None and key in self._ahead:
            value = self._ahead[key]
            return default if value is _MISS else value
        return super().get(key, default)

    # Every write forgets what was read ahead of the keys it touches: a read after it goes to Redis.
    def _forget(self, keys: Iterable[str]) -> None:
        if self._ahead:
            for key in keys:
                self._ahead.pop(key, None)

    def add(self, key, value, timeout):
        self._forget([key])
        return super().add(key, value, timeout)

    def set(self, key, value, timeout):
        self._forget([key])
        return super().set(key, value, timeout)

    def touch(self, key, timeout):
        self._forget([key])
        return super().touch(key, timeout)

    def delete(self, key):
        self._forget([key])
        return super().delete(key)

    def incr(self, key, delta):
        self._forget([key])
        return super().incr(key, delta)

    def set_many(self, data, timeout):
        self._forget(data)
        return super().set_many(data, timeout)

    def delete_many(self, keys):
        self._forget(keys)
        return super().delete_many(keys)

    def clear(self):
        if self._ahead is not None:
            self._ahead = {}
        return super().clear()


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _ReusedClients

    def read_ahead(self, keys: Iterable[str], version: int | None = None) -> AbstractContextManager[None]:
        return self._cache.reading_ahead([self.make_and_validate_key(key, version=version) for key in keys])


def read_ahead(keys: Iterable[str], *, alias: str = "default") -> AbstractContextManager[None]:
    """Within the block, ``get`` of one of ``keys`` is answered from one ``MGET`` made on entry (a key
    written in the block is read anew). A no-op for backends without network round trips (memory, database)."""
    reader = getattr(caches[alias], "read_ahead", None)
    return reader(keys) if reader is not None else nullcontext()
