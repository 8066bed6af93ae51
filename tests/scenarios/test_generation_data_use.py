"""Generation under the data-use rule (issue 38, DUA-safe routing): each role of ``generate --backend openai``
(generator, translator, judge) is refused before any request reaches an endpoint the rule does not allow.

Cases: PhysioNet's responsible-use guidance for credentialed data with LLMs (MIMIC-derived text only to allowed
services); the EHR store is undeclared (treated as MIMIC, the default) or declared ``synthetic``
(PHYSREVIEW_EHR_PROVENANCE).
"""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from scenarios.generation.llm_roles import LLMRoles
from scenarios.models import GenerationRun, Session
from tests.fakes.openai_server import FakeOpenAIServer
from tests.scenarios.test_generation_openai import KEY, MODEL, FakeModel


@pytest.fixture
def servers(monkeypatch):
    with FakeOpenAIServer(responder=FakeModel()) as allowed, FakeOpenAIServer(responder=FakeModel()) as other:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("LLM_BACKEND", "openai")
        monkeypatch.setenv("LLM_BASE_URL", allowed.base_url)
        monkeypatch.setenv("LLM_MODEL", MODEL)
        monkeypatch.setenv("LLM_TIMEOUT", "2")
        monkeypatch.setenv("LLM_ALLOWED_ENDPOINTS", allowed.base_url)
        yield allowed, other


def _generate() -> str:
    out = StringIO()
    call_command("generate", "--backend", "openai", "--n", "1", "--quiet", stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("role", ["generator", "translator", "judge"])
def test_a_role_on_another_endpoint_is_refused_before_any_work(demo_cohort, servers, monkeypatch, settings, role):
    _allowed, other = servers
    settings.EHR_PROVENANCE = "undeclared"
    monkeypatch.setenv(f"LLM_{role.upper()}_BASE_URL", other.base_url)
    with pytest.raises(CommandError) as caught:
        _generate()
    message = str(caught.value)
    assert f"role {role!r}" in message and "data-use rule" in message and KEY not in message
    assert other.requests == [] and other.probes == []
    assert not GenerationRun.objects.exists() and not Session.objects.exists()
    with pytest.raises(Exception) as built:  # the clients themselves refuse too (a caller that skips the check)
        LLMRoles.from_env()
    assert f"role {role!r}" in str(built.value)
    assert other.requests == []


def test_a_synthetic_store_may_use_any_endpoint(demo_cohort, servers, monkeypatch, settings):
    allowed, other = servers
    settings.EHR_PROVENANCE = "synthetic"
    monkeypatch.setenv("LLM_JUDGE_BASE_URL", other.base_url)
    assert "1 made" in _generate()
    assert other.requests and allowed.requests
