"""Per-role LLM configuration from the environment: defaults, overrides, clear errors, no key kept."""

import pytest

from core.llm import (
    LLMClient,
    LLMConfigError,
    RulesBackendError,
    env_var_names,
    get_client,
    role_config,
)

KEY = "sk-test-CONFIG-0123456789abcdef"


def test_defaults_are_the_offline_rules_backend():
    config = role_config(role="generator", environ={})
    assert config.backend == "rules"
    assert config.base_url == "https://api.openai.com/v1"
    assert config.api_key_env == "OPENAI_API_KEY"
    assert (config.model, config.temperature) == (None, None)
    assert (config.timeout_s, config.max_concurrency, config.max_retries, config.cache) == (60.0, 4, 5, True)


def test_role_variables_override_global_ones_and_openai_base_url():
    env = {
        "OPENAI_BASE_URL": "http://10.0.0.5:8000/v1",
        "LLM_BACKEND": "openai",
        "LLM_MODEL": "global-model",
        "LLM_JUDGE_MODEL": "judge-model",
        "LLM_JUDGE_TEMPERATURE": "0.2",
        "LLM_JUDGE_TIMEOUT": "12.5",
        "LLM_JUDGE_MAX_CONCURRENCY": "8",
        "LLM_JUDGE_MAX_RETRIES": "2",
        "LLM_JUDGE_API_KEY_ENV": "JUDGE_KEY",
        "LLM_JUDGE_CACHE": "off",
    }
    judge = role_config(role="judge", environ=env)
    assert judge.backend == "openai"
    assert judge.model == "judge-model"
    assert judge.base_url == "http://10.0.0.5:8000/v1"
    assert judge.temperature == 0.2
    assert judge.timeout_s == 12.5
    assert (judge.max_concurrency, judge.max_retries, judge.cache) == (8, 2, False)
    assert judge.api_key_env == "JUDGE_KEY"
    patient = role_config(role="patient", environ=env)
    assert patient.model == "global-model"
    assert patient.api_key_env == "OPENAI_API_KEY"


def test_arbitrary_role_from_explicit_arguments():
    config = role_config(
        role="model_under_test",
        environ={},
        backend="openai",
        model="qwen3-8b",
        base_url="http://127.0.0.1:8001/v1",
        temperature=0,
        max_retries=1,
        cache=False,
        timeout_s=None,  # None means "not given": the default stays
    )
    assert (config.role, config.backend, config.model) == ("model_under_test", "openai", "qwen3-8b")
    assert config.base_url == "http://127.0.0.1:8001/v1"
    assert (config.temperature, config.max_retries, config.cache, config.timeout_s) == (0.0, 1, False, 60.0)
    assert env_var_names(role="model_under_test")["model"] == "LLM_MODEL_UNDER_TEST_MODEL"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("LLM_JUDGE_BACKEND", "gpt", "LLM_JUDGE_BACKEND='gpt' is invalid for LLM role 'judge': expected one of"),
        ("LLM_JUDGE_BASE_URL", "localhost:8000", "LLM_JUDGE_BASE_URL='localhost:8000' is invalid"),
        ("LLM_JUDGE_API_KEY_ENV", "my-key", "LLM_JUDGE_API_KEY_ENV='my-key' is invalid"),
        ("LLM_JUDGE_TEMPERATURE", "hot", "LLM_JUDGE_TEMPERATURE='hot' is invalid for LLM role 'judge': not a valid"),
        ("LLM_JUDGE_TEMPERATURE", "2.5", "LLM_JUDGE_TEMPERATURE='2.5' is invalid for LLM role 'judge': expected"),
        ("LLM_JUDGE_TIMEOUT", "0", "LLM_JUDGE_TIMEOUT='0' is invalid"),
        ("LLM_JUDGE_TIMEOUT", "soon", "LLM_JUDGE_TIMEOUT='soon' is invalid"),
        ("LLM_JUDGE_MAX_CONCURRENCY", "0", "LLM_JUDGE_MAX_CONCURRENCY='0' is invalid"),
        ("LLM_JUDGE_MAX_CONCURRENCY", "2.5", "LLM_JUDGE_MAX_CONCURRENCY='2.5' is invalid"),
        ("LLM_JUDGE_MAX_RETRIES", "-1", "LLM_JUDGE_MAX_RETRIES='-1' is invalid"),
        ("LLM_JUDGE_CACHE", "maybe", "LLM_JUDGE_CACHE='maybe' is invalid"),
        ("LLM_MAX_RETRIES", "many", "LLM_MAX_RETRIES='many' is invalid"),
        ("OPENAI_BASE_URL", "api.example", "OPENAI_BASE_URL='api.example' is invalid"),
    ],
)
def test_bad_value_names_the_variable(name, value, expected):
    with pytest.raises(LLMConfigError) as caught:
        role_config(role="judge", environ={name: value})
    assert expected in str(caught.value)
    assert caught.value.__cause__ is None


def test_bad_argument_names_the_argument():
    with pytest.raises(LLMConfigError, match=r"argument max_concurrency='-3' is invalid"):
        role_config(role="model_under_test", environ={}, max_concurrency=-3)
    with pytest.raises(TypeError, match="unknown setting"):
        role_config(role="judge", environ={}, api_key="nope")


def test_openai_backend_needs_a_model():
    with pytest.raises(LLMConfigError, match="set LLM_TRANSLATOR_MODEL"):
        role_config(role="translator", environ={"LLM_TRANSLATOR_BACKEND": "openai"})


@pytest.mark.parametrize("role", ["Judge", "judge-1", "", "x" * 41])
def test_invalid_role_name(role):
    with pytest.raises(LLMConfigError, match="not a valid role name"):
        role_config(role=role, environ={})


def test_rules_role_has_no_llm_client():
    with pytest.raises(RulesBackendError) as caught:
        get_client(role="generator", environ={"OPENAI_API_KEY": KEY})
    message = str(caught.value)
    assert "'rules' backend" in message
    assert "rules implementation" in message
    assert "LLM_GENERATOR_BACKEND=openai" in message


def test_missing_key_fails_before_any_call():
    env = {"LLM_JUDGE_BACKEND": "openai", "LLM_JUDGE_MODEL": "m", "LLM_JUDGE_API_KEY_ENV": "JUDGE_KEY"}
    with pytest.raises(LLMConfigError) as caught:
        get_client(role="judge", environ=env)
    assert "JUDGE_KEY" in str(caught.value)
    assert "LLM_JUDGE_API_KEY_ENV" in str(caught.value)
    with pytest.raises(LLMConfigError):
        get_client(role="judge", environ={**env, "JUDGE_KEY": "   "})


def test_config_and_client_never_show_the_key_or_url_credentials():
    env = {
        "LLM_JUDGE_BACKEND": "openai",
        "LLM_JUDGE_MODEL": "m",
        "LLM_JUDGE_BASE_URL": "https://user:hunter2secret@llm.example/v1",
        "OPENAI_API_KEY": KEY,
    }
    config = role_config(role="judge", environ=env)
    client = LLMClient(config=config, environ=env)
    try:
        for text in (repr(config), str(config), repr(client), str(client), config.endpoint, repr(vars(client))):
            assert KEY not in text
            assert "hunter2secret" not in text
        assert "api_key" not in {f for f in vars(config)}
        assert config.endpoint == "https://llm.example/v1/chat/completions"
    finally:
        client.close()
