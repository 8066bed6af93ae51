"""Preflight (GET /models, llama.cpp /props), the server fingerprint in the cache key, and cache writes
that survive concurrent writers on SQLite."""

import threading
import time

import pytest
from django.db import connection, transaction

from core.llm import LLMClient, LLMConfigError, preflight, role_config
from core.llm import cache as response_cache
from core.models import LLMCacheEntry
from tests.fakes.openai_server import FakeOpenAIServer, completion

ENV = {"FAKE_KEY": "sk-fake-preflight-0123456789"}
ASK = [{"role": "user", "content": "Latest creatinine?"}]
LLAMA = {"id": "qwen2.5-7b-instruct-q4_k_m.gguf", "owned_by": "llamacpp", "meta": {"n_params": 7615616512}}


def _client(server, *, model="qwen2.5-7b-instruct-q4_k_m.gguf", cache=False):
    config = role_config(
        role="model_under_test",
        environ={},
        backend="openai",
        model=model,
        base_url=server.base_url,
        api_key_env="FAKE_KEY",
        cache=cache,
    )
    return LLMClient(config=config, environ=ENV)


def test_served_model_gives_a_fingerprint_that_ignores_per_request_fields():
    with FakeOpenAIServer(models=[{**LLAMA, "created": 1}, "other-model"]) as server:
        first = preflight(client=_client(server))
        # llama.cpp and vLLM stamp "created" with the time of the request
        server.models = [{**LLAMA, "created": 2}, "other-model"]
        again = preflight(client=_client(server))
        probes = list(server.probes)
    assert first.models == ("other-model", "qwen2.5-7b-instruct-q4_k_m.gguf")
    assert first.entry == {**LLAMA, "object": "model"}
    assert len(first.fingerprint) == 64 and again.fingerprint == first.fingerprint
    assert first.as_dict()["fingerprint"] == first.fingerprint
    assert probes == ["/v1/models", "/props"] * 2


def test_a_model_the_endpoint_does_not_serve_is_refused_with_the_served_names():
    with FakeOpenAIServer(models=[LLAMA, "other-model"]) as server, pytest.raises(LLMConfigError) as caught:
        preflight(client=_client(server, model="qwen2.5-7b"))
    message = str(caught.value)
    assert "model 'qwen2.5-7b' is not served by http://127.0.0.1:" in message
    assert "it serves: other-model, qwen2.5-7b-instruct-q4_k_m.gguf" in message


def test_an_endpoint_without_a_model_list_is_no_error():
    with FakeOpenAIServer() as server:  # answers 404 on GET /v1/models
        client = _client(server, model="anything")
        info = preflight(client=client)
    assert (info.models, info.fingerprint, client.server_fingerprint) == (None, "", "")


@pytest.mark.django_db
def test_the_cache_does_not_survive_a_change_of_template_behind_the_same_url_and_model():
    with FakeOpenAIServer(
        models=[LLAMA],
        props={"chat_template": "{{ messages }} v1", "build_info": "b1"},
        responder=lambda p: completion(content="A"),
    ) as server:
        client = _client(server, cache=True)
        preflight(client=client)
        first = client.chat(messages=ASK)
        assert client.chat(messages=ASK).cached  # same server: the stored answer
        server.props = {"chat_template": "{{ messages }} v2 with tools", "build_info": "b1"}
        before = client.server_fingerprint
        preflight(client=client)
        changed = client.chat(messages=ASK)
        chat_requests = len(server.requests)
    assert client.server_fingerprint != before
    assert not changed.cached and changed.request_hash != first.request_hash
    assert chat_requests == 2
    assert LLMCacheEntry.objects.get(request_hash=changed.request_hash).request["server"] == client.server_fingerprint


@pytest.mark.django_db(transaction=True)
def test_cache_writes_wait_for_another_writer_instead_of_being_lost():
    """Another connection holds a write transaction while 4 threads store responses (SQLite: one writer)."""
    held, release = threading.Event(), threading.Event()

    def writer():
        try:
            with transaction.atomic():
                LLMCacheEntry.objects.create(request_hash="w" * 64, base_url="x", model="m", request={}, response={})
                held.set()
                release.wait(5)
        finally:
            connection.close()

    def store(i):
        try:
            response_cache.store(
                key=f"{i:064d}",
                base_url="http://llm.test/v1",
                model="m",
                request={"i": i},
                response={"choices": []},
                prompt_tokens=1,
                completion_tokens=1,
                cost_usd=None,
            )
        finally:
            connection.close()

    holder = threading.Thread(target=writer)
    holder.start()
    assert held.wait(5)
    stores = [threading.Thread(target=store, args=(i,)) for i in range(4)]
    for thread in stores:
        thread.start()
    time.sleep(0.3)  # the stores meet the held lock (on SQLite)
    release.set()
    for thread in [holder, *stores]:
        thread.join(10)
    assert LLMCacheEntry.objects.count() == 5
