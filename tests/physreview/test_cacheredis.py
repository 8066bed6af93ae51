"""The Redis cache backend that reuses its redis-py clients, against the local Redis of CI."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import pytest

from core.cacheredis import ReusedClientRedisCache
from tests.physreview.startup import print_settings


@pytest.fixture
def redis_cache(broker_url):
    # The broker's Redis server, another database: the cache is flushed here, the broker's queue is not.
    url = urlunsplit(urlsplit(broker_url)._replace(path="/13"))
    backend = ReusedClientRedisCache(url, {"KEY_PREFIX": "test-cacheredis"})
    backend.clear()
    yield backend
    backend.clear()


def test_one_client_serves_every_call_and_the_values_round_trip(redis_cache):
    client = redis_cache._cache.get_client("a")
    assert redis_cache._cache.get_client("b", write=True) is client
    redis_cache.set("a", {"turn": 1, "texts": ["胸痛", "chest pain"]}, 60)
    redis_cache.set_many({"b": 2, "c": 3}, 60)
    assert redis_cache.get("a") == {"turn": 1, "texts": ["胸痛", "chest pain"]}
    assert redis_cache.get_many(["b", "c", "missing"]) == {"b": 2, "c": 3}
    assert redis_cache.incr("b") == 3
    redis_cache.delete_many(["a", "b"])
    assert redis_cache.get("a") is None and redis_cache.get("b") is None and redis_cache.get("c") == 3


def test_reading_ahead_answers_gets_from_one_mget_and_writes_are_read_anew(redis_cache, monkeypatch):
    redis_cache.set_many({"header": {"age": 67}, "fragment": "<p>肌酐</p>", "kept": 1}, 60)
    client = redis_cache._cache.get_client()
    commands = []
    execute = client.execute_command
    monkeypatch.setattr(client, "execute_command", lambda *a, **k: commands.append(a[0]) or execute(*a, **k))
    with redis_cache.read_ahead(["header", "fragment", "missing", "kept"]):
        assert redis_cache.get("header") == {"age": 67} and redis_cache.get("fragment") == "<p>肌酐</p>"
        assert redis_cache.get("missing", "default") == "default"  # known absent: not asked again
        assert redis_cache.get_or_set("missing", lambda: "made", 60) == "made"
        assert redis_cache.get("missing") == "made"
        redis_cache.set("header", {"age": 68}, 60)
        assert redis_cache.get("header") == {"age": 68}  # written in the block: read anew
        redis_cache.delete_many(["kept"])
        assert redis_cache.get("kept") is None
        assert redis_cache.get("other") is None  # not read ahead: an ordinary GET
    # get_or_set's add (SET NX) forgets the key: its own read-back and the next get go to Redis.
    assert commands == ["MGET", "SET", "GET", "GET", "SET", "GET", "DEL", "GET", "GET"]
    assert redis_cache.get("fragment") == "<p>肌酐</p>" and commands[-1] == "GET"  # after the block: Redis


def test_read_ahead_is_a_no_op_without_redis(settings):
    from django.core.cache import caches

    from core.cacheredis import read_ahead

    caches["default"].set("k", "v")
    with read_ahead(["k", "absent"]):
        assert caches["default"].get("k") == "v" and caches["default"].get("absent") is None


def test_sessions_are_read_from_the_cache_only_when_it_is_redis(tmp_path):
    expression = "s.CACHES['default']['BACKEND'], s.SESSION_ENGINE"
    shared = print_settings(expression, env={"CACHE_URL": "redis://127.0.0.1:6379/13"}, var_dir=tmp_path)
    assert shared.returncode == 0, shared.stderr
    assert shared.stdout.split() == [
        "core.cacheredis.ReusedClientRedisCache",
        "django.contrib.sessions.backends.cached_db",
    ]
    local = print_settings(expression, env={"CACHE_URL": "locmem://"}, var_dir=tmp_path)
    assert local.stdout.split() == [
        "django.core.cache.backends.locmem.LocMemCache",
        "django.contrib.sessions.backends.db",
    ]


@pytest.mark.parametrize(
    "url",
    ["redis://127.0.0.1:6379/13", "redis://:s3cret@cache.internal:6380/2", "rediss://user:pw@cache.example:6379/0"],
)
def test_settings_accept_a_redis_cache_url(tmp_path, url):
    """Issue 36, F10: a deployment with several server processes shares the cache through Redis (CACHE_URL);
    the URL, password and database included, is handed to Django's Redis cache as it is."""
    expression = "s.CACHES['default']['BACKEND'], s.CACHES['default']['LOCATION']"
    result = print_settings(expression, env={"CACHE_URL": url}, var_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["core.cacheredis.ReusedClientRedisCache", url]
