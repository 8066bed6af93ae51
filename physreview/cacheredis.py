"""Django's Redis cache, with one redis-py client per connection pool instead of one per operation.

Django's ``RedisCacheClient.get_client`` makes a new ``redis.Redis`` for every cache call, and each one
builds its table of ~170 response callbacks: on the review screen (about ten cache calls) that was
1-3 ms of CPU per request. A ``redis.Redis`` is safe to share between threads (each command takes a
connection from the pool), so it is made once per pool and reused.
"""

from __future__ import annotations

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class _ReusedClients(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _ReusedClients
