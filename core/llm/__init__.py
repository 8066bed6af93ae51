"""LLM access: the one place that talks to OpenAI-compatible endpoints.

Typical use::

    from core.llm import get_client, role_config

    config = role_config(role="judge")          # LLM_JUDGE_* from the environment
    if config.backend == "rules":
        ...                                     # the deterministic implementation, not an LLM
    else:
        result = get_client(config=config).chat(messages=[{"role": "user", "content": "..."}])

See :mod:`core.llm.config` for the environment variables.
"""

from core.llm.accounting import CallLog, UsageAccumulator, UsageTotals, track_calls
from core.llm.client import LLMClient, get_client
from core.llm.config import KNOWN_ROLES, LLMConfig, env_var_names, role_config
from core.llm.errors import LLMConfigError, LLMError, LLMRequestError, LLMResponseError, RulesBackendError
from core.llm.preflight import ServerInfo, preflight, require_tools
from core.llm.prices import PriceTable, load_prices
from core.llm.result import ChatResult, ToolCall, Usage
from core.llm.retry import RetryPolicy
from core.llm.toolnames import api_safe_name

__all__ = [
    "KNOWN_ROLES",
    "CallLog",
    "ChatResult",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "LLMRequestError",
    "LLMResponseError",
    "PriceTable",
    "RetryPolicy",
    "RulesBackendError",
    "ServerInfo",
    "ToolCall",
    "Usage",
    "UsageAccumulator",
    "UsageTotals",
    "api_safe_name",
    "env_var_names",
    "get_client",
    "load_prices",
    "preflight",
    "require_tools",
    "role_config",
    "track_calls",
]
