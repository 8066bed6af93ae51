"""Executing one session's tool calls during a run: live EHR, simulated writes, replayed patient.

EHR reads run live against the record at the session's cutoff and write tools are simulated by the
tool layer; patient tools are answered from the reviewed gold replies (by arguments, or under the
release protocol by tool name and call order) or, with ``--live-patient``, by the record-grounded
rules patient. Every protocol plays its calls through :class:`ToolRunner`, so a call is classified
the same way everywhere: invalid (the model's fault), a tool fault (ours), or a replay hit or miss.
"""

from __future__ import annotations

import time
from typing import Any

from ehr.fhir import REGISTRY, ToolContext, canonical_name, execute_tool
from ehr.fhir.errors import ToolError
from ehr.fhir.execute import PATIENT_SCOPE_NAMES, parse_arguments
from ehr.fhir.params import clean_arguments
from evaluation.agents.base import AgentCall
from evaluation.dataset import EvalSession
from evaluation.replay import OrderReplayBook, ReplayBook
from scenarios.patient import make_patient_responder, public_view

_TOOL_FAULT_HINT = "problem of the tool"
# A tool layer error result: the error, how to fix it, and what was dropped from the call on the way.
_ERROR_KEYS = frozenset({"error", "hint", "warnings"})


class ToolRunner:
    """Executes one session's tool calls: live EHR, simulated writes, replayed patient."""

    def __init__(
        self,
        *,
        session: EvalSession,
        language: str,
        live_patient: bool = False,
        bounds: str = "strict",
        literacy: str | None = None,
    ) -> None:
        """``literacy`` set: the release's patient replay (by tool name and call order, that literacy
        variant; see :class:`~evaluation.replay.OrderReplayBook`); else replay keyed by arguments."""
        self.context = ToolContext.for_session(session, bounds=bounds)
        self.language = language
        self.book = ReplayBook.for_session(session)
        self.literacy = literacy
        self.order_book = OrderReplayBook.for_session(session, language=language) if literacy else None
        # --live-patient: the generator's record-grounded patient answers instead of the reviewed replay.
        self.live_patient = make_patient_responder(default_language=language) if live_patient else None

    def run(self, call: AgentCall) -> dict[str, Any]:
        """``{"name", "kind", "observation", "invalid", "tool_fault", "replay", "warnings", "tool_s"}``.

        ``warnings``: what the tool layer said it did to fit the call to the contract (unknown
        arguments dropped); the model sees them in the observation too.
        """
        started = time.perf_counter()
        canonical = canonical_name(call.name) if isinstance(call.name, str) else None
        kind = REGISTRY[canonical].kind if canonical else "unknown"
        record: dict[str, Any] = {"name": canonical or call.name, "kind": kind, "replay": None}
        if call.parse_error is not None:
            observation: Any = execute_tool(name=call.name, arguments=call.arguments_raw, context=self.context)
        elif kind == "patient":
            observation = self._patient(canonical, call)
            hit = observation.pop("_hit", False)
            record["language_fallback"] = observation.pop("_language_fallback", False)
            if self.order_book is not None:
                record["literacy_fallback"] = observation.pop("_literacy_fallback", False)
            record["replay"] = "live" if self.live_patient else ("hit" if hit else "miss")
        else:
            observation = execute_tool(name=call.name, arguments=call.arguments, context=self.context)
        is_error = isinstance(observation, dict) and "error" in observation and set(observation) <= _ERROR_KEYS
        warnings = observation.get("warnings") if isinstance(observation, dict) else None
        record["warnings"] = [str(w) for w in warnings] if isinstance(warnings, list) else []
        record["tool_fault"] = is_error and _TOOL_FAULT_HINT in str(observation.get("hint", ""))
        record["invalid"] = is_error and not record["tool_fault"]
        if is_error:
            record["replay"] = None
        record["observation"] = observation
        record["tool_s"] = round(time.perf_counter() - started, 6)
        return record

    def skip_patient_reply(self, *, tool: str) -> None:
        """Release replay on resume: a finished turn was served this tool's next gold answer."""
        if self.order_book is not None:
            self.order_book.advance(tool=tool)

    def _patient(self, tool: str, call: AgentCall) -> dict[str, Any]:
        try:
            # As execute_tool does: the harness knows the patient, whatever the model passed for it.
            raw = {
                k: v
                for k, v in parse_arguments(tool=tool, arguments=call.arguments).items()
                if k not in PATIENT_SCOPE_NAMES
            }
            raw["subject_id"], raw["session_id"] = self.context.subject_id, self.context.session_id
            cleaned = clean_arguments(
                tool=REGISTRY[tool], arguments=raw, filled={"subject_id": self.context.subject_id}
            )
        except ToolError as exc:
            return exc.as_dict()
        args = {k: v for k, v in cleaned.args.items() if v is not None}
        warnings = {"warnings": list(cleaned.warnings)} if cleaned.warnings else {}
        if self.live_patient is not None:
            live = {**args, "language": self.language}
            try:
                answer = self.live_patient(tool=tool, arguments=live, context=self.context)
            except ToolError as exc:
                return exc.as_dict()
            # The model sees the patient's words only, as with a replayed answer (no facts or persona).
            seen = public_view(answer) if "answer" in answer and "language" in answer else answer
            return {**seen, **warnings}
        if self.order_book is not None:
            by_order, literacy_fallback = self.order_book.reply(
                tool=tool, language=self.language, literacy=self.literacy or "high"
            )
            return {
                **by_order.observation,
                **warnings,
                "_hit": by_order.hit,
                "_language_fallback": by_order.language_fallback,
                "_literacy_fallback": literacy_fallback,
            }
        replayed = self.book.reply(tool=tool, arguments=args, language=self.language)
        return {
            **replayed.observation,
            **warnings,
            "_hit": replayed.hit,
            "_language_fallback": replayed.language_fallback,
        }
