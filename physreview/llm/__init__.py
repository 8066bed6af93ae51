"""LLM access: the one place that talks to OpenAI-compatible endpoints.

Typical use::

    from physreview.llm import get_client, role_config

    config = role_config(role="judge")          # LLM_JUDGE_* from the environment
    if config.backend == "rules":
        ...                                     # the deterministic implementation, not an LLM
    else:
        result = get_client(config=config).chat(messages=[{"role": "user", "content": "..."}])

See :mod:`physreview.llm.config` for the environment variables.
"""

from physreview.llm.accounting import CallLog, UsageAccumulator, UsageTotals, track_calls
from physreview.llm.client import LLMClient, get_client
from physreview.llm.config import KNOWN_ROLES, LLMConfig, env_var_names, role_config
from physreview.llm.errors import LLMConfigError, LLMError, LLMRequestError, LLMResponseError, RulesBackendError
from physreview.llm.preflight import ServerInfo, preflight, require_tools
from physreview.llm.prices import PriceTable, load_prices
from physreview.llm.result import ChatResult, ToolCall, Usage
from physreview.llm.retry import RetryPolicy
from physreview.llm.toolnames import api_safe_name

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
