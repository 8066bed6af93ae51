"""runeval under the data-use rule (issue 38, DUA-safe routing), against two scripted servers on 127.0.0.1.

The rule's cases come from PhysioNet's responsible-use guidance for credentialed data with LLMs: MIMIC-derived
sessions (imported release records, or an EHR store declared ``mimic``) go only to allowed endpoints, refused
before any request reaches another one; synthetic data has no rule. The manifest records the rule in force.
"""

import pytest
from django.core.management.base import CommandError

from evaluation.models import EvalRun
from scenarios.models import Session, Source
from tests.evaluation.runeval_helpers import responder, runeval_summary
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def two_servers(monkeypatch):
    monkeypatch.setenv("DUA_FAKE_KEY", "sk-fake-dua-123456")
    with FakeOpenAIServer(responder=responder(0.0)) as allowed, FakeOpenAIServer(responder=responder(0.0)) as other:
        monkeypatch.setenv("LLM_ALLOWED_ENDPOINTS", allowed.base_url)
        yield allowed, other


def _runeval(tmp_path, *args):
    return runeval_summary(tmp_path, "--api-key-env", "DUA_FAKE_KEY", "--sessions", "all", "--limit", "1", *args)


def _nothing_reached(server):
    return server.requests == [] and server.probes == []


@pytest.mark.parametrize("origin", ["store declared mimic", "imported release records"])
def test_every_role_is_refused_before_the_other_server_hears_anything(
    sessions, tmp_path, two_servers, settings, origin
):
    allowed, other = two_servers
    if origin == "imported release records":
        settings.EHR_PROVENANCE = "synthetic"
        Session.objects.update(source=Source.IMPORTED)
    else:
        settings.EHR_PROVENANCE = "undeclared"
    with pytest.raises(CommandError) as caught:  # the model under test on the other server
        _runeval(tmp_path / "a", "--model", "m", "--base-url", other.base_url)
    assert "role 'model_under_test'" in str(caught.value) and "data-use rule" in str(caught.value)
    assert other.base_url.removesuffix("/v1") in str(caught.value) and allowed.base_url in str(caught.value)
    with pytest.raises(CommandError) as caught:  # the judge on the other server, the model on the allowed one
        _runeval(
            tmp_path / "b",
            "--model",
            "m",
            "--base-url",
            allowed.base_url,
            "--judge",
            "j",
            "--judge-base-url",
            other.base_url,
        )
    assert "role 'judge'" in str(caught.value)
    assert _nothing_reached(other) and _nothing_reached(allowed)  # refused while building, before the preflight
    assert not EvalRun.objects.exists()


def test_allowed_endpoints_run_and_the_manifest_records_the_rule(sessions, tmp_path, two_servers, settings):
    allowed, other = two_servers
    settings.EHR_PROVENANCE = "undeclared"
    summary = _runeval(tmp_path, "--model", "m", "--base-url", allowed.base_url)
    data_use = EvalRun.objects.get(pk=summary["run_id"]).manifest["llm"]["data_use"]
    assert data_use["origin"] == "mimic"
    rule = data_use["roles"]["model_under_test"]
    assert rule["rule"] == "allowlist" and rule["variable"] == "LLM_ALLOWED_ENDPOINTS"
    assert allowed.requests and _nothing_reached(other)


def test_synthetic_sessions_may_go_anywhere_and_say_so(sessions, tmp_path, two_servers, settings, monkeypatch):
    _allowed, other = two_servers
    settings.EHR_PROVENANCE = "synthetic"
    summary = _runeval(tmp_path, "--model", "m", "--base-url", other.base_url)
    data_use = EvalRun.objects.get(pk=summary["run_id"]).manifest["llm"]["data_use"]
    assert data_use["origin"] == "synthetic" and data_use["roles"]["model_under_test"]["rule"] == "none"
    assert other.requests


def test_mimic_default_is_loopback_only(sessions, tmp_path, settings, monkeypatch):
    """No allowlist: a non-loopback endpoint is refused at once (no connection attempt, no 5 s timeout)."""
    settings.EHR_PROVENANCE = "undeclared"
    monkeypatch.delenv("LLM_ALLOWED_ENDPOINTS", raising=False)
    monkeypatch.setenv("DUA_FAKE_KEY", "sk-fake-dua-123456")
    with pytest.raises(CommandError) as caught:
        _runeval(tmp_path, "--model", "m", "--base-url", "http://10.255.255.1:9/v1")
    assert "loopback endpoints only" in str(caught.value) and "unreachable" not in str(caught.value)
