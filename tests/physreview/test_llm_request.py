"""The wire body and cache key of a chat request (core.llm.request), and what the client sends."""

import hashlib
import json

import httpx2

from core.llm import LLMClient, role_config
from core.llm.request import CACHE_KEY_VERSION, ToolsCache, build_request, canonical_json, prepare_tools
from tests.fakes.openai_server import completion

TOOLS = (
    {"type": "function", "function": {"name": "Observation.search", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "patient.get_pain_assessment", "description": "疼痛评估"}},
)
PARAMS = {"model": "m", "messages": [{"role": "user", "content": "Creatinine? 肌酐?"}], "temperature": 0.0}


def test_key_is_the_canonical_json_of_the_whole_request():
    tools = prepare_tools(TOOLS)
    wire = build_request(params=PARAMS, tools=tools, base_url="http://h/v1", extra_body={"top_k": 5}, salt="trial:0")
    expected = {
        "v": CACHE_KEY_VERSION,
        "endpoint": "chat.completions",
        "base_url": "http://h/v1",
        "params": PARAMS,
        "extra_body": {"top_k": 5},
        "salt": "trial:0",
        "tools_sha256": hashlib.sha256(canonical_json(tools.api_tools).encode()).hexdigest(),
    }
    assert wire.key == hashlib.sha256(canonical_json(expected).encode()).hexdigest()


def test_body_carries_params_extra_body_and_api_safe_tools():
    wire = build_request(params=PARAMS, tools=prepare_tools(TOOLS), base_url="u", extra_body={"top_k": 5}, salt="")
    body = json.loads(wire.body)
    assert body == {
        **PARAMS,
        "top_k": 5,
        "tools": [
            {"type": "function", "function": {"name": "Observation__search", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "patient__get_pain_assessment", "description": "疼痛评估"}},
        ],
    }
    assert "肌酐".encode() in wire.body  # Chinese sent as UTF-8 text


def test_no_tools_sends_no_tools_key():
    wire = build_request(params=PARAMS, tools=prepare_tools(None), base_url="u", extra_body=None, salt="")
    assert json.loads(wire.body) == PARAMS


def test_tools_change_the_key_salt_changes_the_key():
    keys = {
        build_request(params=PARAMS, tools=prepare_tools(t), base_url="u", extra_body=None, salt=s).key
        for t, s in ((TOOLS, ""), (TOOLS[:1], ""), (None, ""), (TOOLS, "trial:1"))
    }
    assert len(keys) == 4


def test_a_tuple_is_prepared_once_a_list_every_time():
    cache = ToolsCache()
    assert cache.get(TOOLS) is cache.get(TOOLS)
    as_list = list(TOOLS)
    assert cache.get(as_list) is not cache.get(as_list)  # a list may be changed by its owner between calls
    assert cache.get(as_list) == cache.get(TOOLS)


def test_client_sends_the_prepared_body_as_json():
    seen = []

    def handler(request):
        seen.append(request)
        return httpx2.Response(200, content=json.dumps(completion(content="ok").body))

    config = role_config(
        role="generator", environ={}, backend="openai", base_url="http://llm.test/v1", model="m", cache=False
    )
    client = LLMClient(
        config=config,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        environ={"OPENAI_API_KEY": "sk-test-0123456789"},
    )
    with client:
        for _ in range(2):
            result = client.chat(messages=PARAMS["messages"], tools=TOOLS, temperature=0.0)
    assert result.content == "ok"
    assert [r.headers["content-type"] for r in seen] == ["application/json"] * 2
    bodies = [json.loads(r.content) for r in seen]
    assert bodies[0] == bodies[1]
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == [
        "Observation__search",
        "patient__get_pain_assessment",
    ]
