"""The data-use rule of core.llm.data_use, unit by unit.

Cases come from PhysioNet's responsible-use guidance for credentialed data with LLMs (2025): MIMIC-derived text
only to services that neither keep nor train on it, local models recommended — so loopback by default, an
explicit allowlist otherwise, and no rule for synthetic data. URL forms are the ones users type in
``OPENAI_BASE_URL`` (with and without port, path, trailing slash, IPv6 loopback, credentials).
"""

import pytest

from core.llm import LLMConfigError, role_config
from core.llm.client import LLMClient
from core.llm.data_use import DataUseRefused, Endpoint, rule_for
from tests.fakes.openai_server import FakeOpenAIServer, completion


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/v1", "http://localhost:11434/v1/", "http://127.3.4.5/v1", "http://[::1]:8000/v1"],
)
def test_mimic_default_allows_loopback_only(url):
    assert rule_for(role="judge", origin="mimic", environ={}).permits(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com/v1",
        "http://10.0.0.5:8000/v1",
        "http://my-gpu-box.local:8000/v1",  # a name is not resolved: it must be listed
        "http://127.0.0.1.nip.io/v1",
        "not a url",
    ],
)
def test_mimic_default_refuses_everything_else(url):
    rule = rule_for(role="judge", origin="mimic", environ={})
    assert not rule.permits(url)
    with pytest.raises(DataUseRefused) as caught:
        rule.check(base_url=url)
    message = str(caught.value)
    assert "role 'judge'" in message and "loopback endpoints only" in message
    assert "LLM_JUDGE_ALLOWED_ENDPOINTS" in message


def test_an_allowlist_replaces_the_default_and_matches_scheme_host_port_and_path():
    env = {"LLM_ALLOWED_ENDPOINTS": "http://127.0.0.1:9001, https://gw.hospital.example/zdr/"}
    rule = rule_for(role="generator", origin="mimic", environ=env)
    assert rule.permits("http://127.0.0.1:9001/v1")
    assert rule.permits("https://gw.hospital.example:443/zdr/v1")
    assert not rule.permits("http://127.0.0.1:9002/v1")  # loopback, but not listed: a local proxy may forward
    assert not rule.permits("https://gw.hospital.example/other/v1")
    assert not rule.permits("https://gw.hospital.example/zdr-not/v1")  # a path prefix is a whole segment
    assert not rule.permits("http://gw.hospital.example/zdr/v1")  # plain http is another endpoint
    assert rule.manifest()["rule"] == "allowlist" and rule.manifest()["variable"] == "LLM_ALLOWED_ENDPOINTS"


def test_a_role_list_wins_over_the_list_for_every_role():
    env = {"LLM_ALLOWED_ENDPOINTS": "http://127.0.0.1:9001", "LLM_JUDGE_ALLOWED_ENDPOINTS": "http://127.0.0.1:9002"}
    assert rule_for(role="judge", origin="mimic", environ=env).permits("http://127.0.0.1:9002/v1")
    assert not rule_for(role="judge", origin="mimic", environ=env).permits("http://127.0.0.1:9001/v1")
    assert rule_for(role="patient", origin="mimic", environ=env).permits("http://127.0.0.1:9001/v1")


def test_synthetic_data_has_no_rule():
    rule = rule_for(role="model_under_test", origin="synthetic", environ={"LLM_ALLOWED_ENDPOINTS": "http://x:1"})
    assert rule.permits("https://api.openai.com/v1") and rule.manifest()["rule"] == "none"


@pytest.mark.parametrize(
    ("env", "origin", "needle"),
    [
        ({"LLM_ALLOWED_ENDPOINTS": "ftp://127.0.0.1"}, "mimic", "LLM_ALLOWED_ENDPOINTS"),
        ({"LLM_JUDGE_ALLOWED_ENDPOINTS": "127.0.0.1:8080"}, "mimic", "LLM_JUDGE_ALLOWED_ENDPOINTS"),
        ({}, "eicu", "data origin 'eicu'"),
    ],
)
def test_bad_settings_are_named(env, origin, needle):
    with pytest.raises(LLMConfigError) as caught:
        rule_for(role="judge", origin=origin, environ=env)
    assert needle in str(caught.value)


def test_endpoint_parse_normalises_default_ports_and_case():
    assert Endpoint.parse("HTTPS://API.Example.org/v1/") == Endpoint(
        scheme="https", host="api.example.org", port=443, path="/v1"
    )


def test_the_client_refuses_before_a_byte_leaves_and_names_no_secret():
    env = {"K": "sk-secret-123456"}
    with FakeOpenAIServer() as allowed, FakeOpenAIServer() as other:
        allowed.push(completion(content="ok"))
        rules = {"LLM_ALLOWED_ENDPOINTS": allowed.base_url}
        for role in ("model_under_test", "patient", "generator", "translator", "judge"):
            config = role_config(
                role=role, environ=env, backend="openai", model="m", base_url=other.base_url, api_key_env="K"
            )
            with pytest.raises(DataUseRefused) as caught:
                LLMClient(config=config, environ=env, data_use=rule_for(role=role, origin="mimic", environ=rules))
            assert f"role {role!r}" in str(caught.value) and other.base_url.removesuffix("/v1") in str(caught.value)
            assert "sk-secret" not in str(caught.value)
        config = role_config(
            role="judge", environ=env, backend="openai", model="m", base_url=allowed.base_url, api_key_env="K"
        )
        rule = rule_for(role="judge", origin="mimic", environ=rules)
        with LLMClient(config=config, environ=env, data_use=rule) as client:
            assert client.chat(messages=[{"role": "user", "content": "hi"}], cache=False).content == "ok"
            # an absolute URL on another endpoint is refused by the probe too
            with pytest.raises(DataUseRefused):
                client.get_json(path=other.base_url + "/models")
        assert other.requests == [] and other.probes == []
        assert len(allowed.requests) == 1
