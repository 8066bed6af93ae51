"""Price table (USD per 1M tokens) and the cost of one call.

The table is data, not code: ``core/llm/prices.json`` by default, or the JSON file named by
``LLM_PRICES_FILE``. A model that matches no entry has an unknown cost (``None``), never 0, so a
run summary cannot under-report spending.
"""

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from core.llm.errors import LLMConfigError
from core.llm.result import Usage

DEFAULT_PRICES_FILE = Path(__file__).with_name("prices.json")
PRICES_FILE_ENV = "LLM_PRICES_FILE"


@dataclass(frozen=True, kw_only=True)
class ModelPrice:
    input: float
    output: float
    cached_input: float | None = None


class PriceTable:
    """Model prices looked up by exact name, else by the longest key that prefixes the model name."""

    def __init__(self, *, prices: Mapping[str, ModelPrice], source: str) -> None:
        self._prices = dict(prices)
        self.source = source

    def __repr__(self) -> str:
        return f"PriceTable(source={self.source!r}, models={len(self._prices)})"

    def price_for(self, *, model: str) -> ModelPrice | None:
        if model in self._prices:
            return self._prices[model]
        # Dated snapshots ("gpt-4o-mini-2024-07-18") match their family; the longest prefix is the
        # most specific one, so "gpt-4o-mini-…" is not priced as "gpt-4o".
        matches = [key for key in self._prices if model.startswith(key)]
        return self._prices[max(matches, key=len)] if matches else None

    def cost_usd(self, *, model: str, usage: Usage | None) -> float | None:
        """Cost of one call, or ``None`` when the model or the token counts are unknown."""
        price = self.price_for(model=model)
        if price is None or usage is None:
            return None
        cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
        cached_rate = price.input if price.cached_input is None else price.cached_input
        total = (
            (usage.prompt_tokens - cached) * price.input + cached * cached_rate + usage.completion_tokens * price.output
        )
        return round(total / 1_000_000, 10)


def load_prices(*, path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> PriceTable:
    """Read the price table from ``path``, else ``LLM_PRICES_FILE``, else the bundled file."""
    env = os.environ if environ is None else environ
    if path is None:
        path, source = env.get(PRICES_FILE_ENV) or DEFAULT_PRICES_FILE, PRICES_FILE_ENV
    else:
        source = "price table"
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        prices = _parse_table(data)
    except (OSError, ValueError) as exc:
        raise LLMConfigError(f"{source}: cannot use price file {str(path)!r}: {exc}") from None
    return PriceTable(prices=prices, source=str(path))


def _parse_table(data: object) -> dict[str, ModelPrice]:
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ValueError('expected an object with a "models" object')
    prices: dict[str, ModelPrice] = {}
    for name, entry in models.items():
        if not isinstance(entry, dict) or not {"input", "output"} <= entry.keys():
            raise ValueError(f'model {name!r} needs "input" and "output" prices per 1M tokens')
        values = {key: entry.get(key) for key in ("input", "output", "cached_input")}
        for key, value in values.items():
            if value is None and key == "cached_input":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"model {name!r}: {key} must be a non-negative number, got {value!r}")
        prices[name] = ModelPrice(
            input=float(values["input"]),
            output=float(values["output"]),
            cached_input=None if values["cached_input"] is None else float(values["cached_input"]),
        )
    return prices
