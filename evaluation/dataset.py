"""What a run evaluates: frozen, database-free copies of sessions, from the DB or from a snapshot.

The agent loop, judges and metrics only see these dataclasses, so a run does not care whether its
sessions came from live rows (tests, the demo: :func:`from_sessions`) or from a curated, immutable
snapshot (:func:`from_snapshot`, which reads the frozen PhysAssistBench line of each session).

Gold patient answers are the gold steps that call a ``patient.*`` tool: during a run the patient
is replayed from them (see :mod:`evaluation.replay`), never generated live.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

LANGUAGES = ("en", "zh")
VARIANTS = ("implicit", "explicit")


@dataclass(frozen=True)
class EvalStep:
    tool: str
    arguments: dict[str, Any]
    observation: Any


@dataclass(frozen=True)
class EvalRubric:
    idx: int
    text_en: str
    text_zh: str
    is_safety: bool
    machine_check: dict[str, Any] | None
    # The rubric compiler's suggestion and the reviewer's decision on it (scenarios.rubric_compiler).
    compiled_check: dict[str, Any] | None = None
    compiled_rule: str = ""
    compiled_state: str = ""

    def text(self, language: str) -> str:
        return (self.text_zh or self.text_en) if language == "zh" else self.text_en

    @property
    def scoring_check(self) -> tuple[dict[str, Any] | None, str]:
        """(check the rules judge scores, its source): ``machine`` (stored), ``compiled`` (a suggestion
        not removed) or ``none``; as ``scenarios.models.RubricItem.scoring_check``."""
        if self.machine_check is not None:
            return self.machine_check, "machine"
        if self.compiled_check is not None and self.compiled_state not in ("", "removed"):
            return self.compiled_check, "compiled"
        return None, "none"


@dataclass(frozen=True)
class EvalTurn:
    index: int
    task_type: str
    subtype: str | None
    tool_source: str
    # {"implicit": {"en": ..., "zh": ...}, "explicit": {...}}
    requests: dict[str, dict[str, str]]
    gold_steps: tuple[EvalStep, ...]
    answers: dict[str, str]
    rubric: tuple[EvalRubric, ...]
    # The Chinese run's own gold steps (a release record's ``answer_list_zh``); None: ``gold_steps``.
    gold_steps_zh: tuple[EvalStep, ...] | None = None

    def steps_for(self, language: str) -> tuple[EvalStep, ...]:
        """The gold steps of a run in ``language`` (as the released runner picks them)."""
        return self.gold_steps_zh if language == "zh" and self.gold_steps_zh is not None else self.gold_steps

    def request(self, *, variant: str, language: str) -> str:
        """The physician's request; an empty form falls back to the other variant (turn 0 has one form)."""
        other = "explicit" if variant == "implicit" else "implicit"
        return self.requests[variant][language] or self.requests[other][language]

    @property
    def gold_calls(self) -> tuple[EvalStep, ...]:
        """Gold tool calls without the closing ``prepare_to_answer``."""
        return tuple(s for s in self.gold_steps if s.tool != "prepare_to_answer")

    @property
    def patient_answers(self) -> tuple[EvalStep, ...]:
        return tuple(s for s in self.gold_steps if s.tool.startswith("patient."))


@dataclass(frozen=True)
class EvalSession:
    session_id: str
    record_id: str
    subject_id: int
    hadm_id: int
    current_date: dt.date
    age: int | None
    sex: str | None
    scenario: str
    tier: int
    turns: tuple[EvalTurn, ...]
    # What the release gives the model: the record's environment text and its own tool schemas.
    env_info: str = ""
    tools: tuple[dict[str, Any], ...] = ()
    tools_zh: tuple[dict[str, Any], ...] | None = None

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    @property
    def request_forms(self) -> tuple[tuple[int, frozenset[tuple[str, str]]], ...]:
        """Per turn, ``(index, {(variant, language) with a non-blank request})``: what
        :func:`evaluation.setup.check_requests` needs, kept on a streamed session's reference."""
        return tuple(
            (
                t.index,
                frozenset(
                    (v, lang) for v in VARIANTS for lang in LANGUAGES if t.request(variant=v, language=lang).strip()
                ),
            )
            for t in self.turns
        )

    def load(self) -> EvalSession:
        """A held session is already loaded (a streamed one's reference loads it: evaluation.session_stream)."""
        return self

    @property
    def patient_answers(self) -> tuple[EvalStep, ...]:
        """Every gold patient answer of the session (a later turn may repeat an earlier question)."""
        return tuple(a for t in self.turns for a in t.patient_answers)

    def patient_steps(self, language: str) -> tuple[EvalStep, ...]:
        """The gold patient steps of a run in ``language``, in session order (release replay by order)."""
        return tuple(s for t in self.turns for s in t.steps_for(language) if s.tool.startswith("patient."))

    def tool_schemas(self, language: str) -> tuple[dict[str, Any], ...]:
        """The session's stored schemas for ``language``: ``tools_zh`` for Chinese when present, else
        ``tools`` (as :func:`scenarios.selectors.session_tool_schemas`); empty when none are stored."""
        if language == "zh" and self.tools_zh is not None:
            return self.tools_zh
        return self.tools


@dataclass(frozen=True)
class EvalDataset:
    """``source`` is ``snapshot`` or ``db``; ``label`` e.g. ``v3`` or ``db:approved``."""

    source: str
    label: str
    snapshot_id: int | None
    checksum: str
    # A tuple, or a SessionStream (evaluation.session_stream) that loads sessions as they are iterated.
    sessions: Sequence[EvalSession] = field(repr=False)

    def limited(self, limit: int | None) -> EvalDataset:
        if limit is None:
            return self
        chosen = self.sessions[:limit]
        # A snapshot keeps its own checksum (the manifest lists the chosen ids); DB content is hashed as chosen.
        checksum = self.checksum if self.source == "snapshot" else content_checksum(chosen)
        return EvalDataset(
            source=self.source, label=self.label, snapshot_id=self.snapshot_id, checksum=checksum, sessions=chosen
        )

    def entries(self) -> tuple[Any, ...]:
        """What jobs are made of, without loading a streamed dataset's sessions: each has ``session_id``,
        ``n_turns`` and ``load()`` (an :class:`EvalSession` itself, or a streamed session's reference)."""
        refs = getattr(self.sessions, "refs", None)
        return refs if refs is not None else tuple(self.sessions)


def _plain(value: Any) -> Any:
    """``dataclasses.asdict`` for these dataclasses, without its deep copy of the JSON inside (the
    same JSON text, several times faster)."""
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple | list) and value and is_dataclass(value[0]):
        return [_plain(v) for v in value]
    return value


def session_json(session: EvalSession) -> str:
    """One session's canonical JSON, as an item of :func:`content_checksum`'s list."""
    return json.dumps(_plain(session), sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))


def content_checksum(sessions: Iterable[EvalSession]) -> str:
    """SHA-256 over the canonical JSON of the sessions (what a DB-sourced run evaluated), session by
    session (a streamed dataset is read once more, a chunk at a time)."""
    from evaluation.session_stream import Checksum

    checksum = Checksum()
    for session in sessions:
        checksum.add(session_json(session))
    return checksum.hexdigest()


def _demographics(*, subject_id: int, current_date: dt.date) -> tuple[int | None, str | None]:
    from ehr.models import Patient

    patient = Patient.objects.filter(subject_id=subject_id).first()
    if patient is None:
        return None, None
    age = patient.anchor_age + current_date.year - patient.anchor_year
    return age, {"M": "male", "F": "female"}.get(patient.gender, patient.gender)


def _steps(raw: list[Any]) -> tuple[EvalStep, ...]:
    return tuple(EvalStep(tool=s.tool, arguments=s.arguments or {}, observation=s.observation) for s in raw)


def _steps_zh(extra: dict[str, Any] | None, index: int) -> tuple[EvalStep, ...] | None:
    """A turn's ``answer_list_zh`` entry (kept in ``Turn.extra`` by the importer), if any."""
    if not extra:  # generated sessions: no need to load the release-format package (seconds at start-up)
        return None
    from scenarios.pab.layout import ANSWER_LIST_ZH
    from scenarios.pab.schema import parse_steps

    raw = (extra or {}).get(ANSWER_LIST_ZH)
    return None if raw is None else _steps(parse_steps(raw, f"answer_list_zh[{index}]"))


def _turn(
    *,
    index: int,
    fields: dict[str, Any],
    steps: list[EvalStep],
    rubric: list[EvalRubric],
    steps_zh: tuple[EvalStep, ...] | None = None,
) -> EvalTurn:
    return EvalTurn(
        index=index,
        task_type=fields["task_type"],
        subtype=fields.get("subtype"),
        tool_source=fields["tool_source"],
        requests={
            "implicit": {"en": fields["request_implicit_en"], "zh": fields["request_implicit_zh"]},
            "explicit": {"en": fields["request_explicit_en"], "zh": fields["request_explicit_zh"]},
        },
        gold_steps=tuple(steps),
        answers={"en": fields.get("answer_en", ""), "zh": fields.get("answer_zh", "")},
        rubric=tuple(rubric),
        gold_steps_zh=steps_zh,
    )


def _session(*, fields: dict[str, Any], turns: list[EvalTurn]) -> EvalSession:
    age, sex = _demographics(subject_id=fields["subject_id"], current_date=fields["current_date"])
    return EvalSession(
        session_id=fields["session_id"],
        record_id=fields["record_id"],
        subject_id=fields["subject_id"],
        hadm_id=fields["hadm_id"],
        current_date=fields["current_date"],
        age=age,
        sex=sex,
        scenario=fields["scenario"],
        tier=fields["tier"],
        turns=tuple(turns),
        env_info=fields.get("env_info") or "",
        tools=tuple(fields.get("tools") or ()),
        tools_zh=None if fields.get("tools_zh") is None else tuple(fields["tools_zh"]),
    )


def _steps_of(steps: Iterable[Any]) -> list[EvalStep]:
    """Gold steps (database rows or parsed record steps) as :class:`EvalStep`."""
    return [EvalStep(tool=s.tool, arguments=s.arguments or {}, observation=s.observation) for s in steps]


def _rubric_of(items: Iterable[Any]) -> list[EvalRubric]:
    """Rubric items (database rows or parsed record items) as :class:`EvalRubric`."""
    return [
        EvalRubric(
            idx=r.idx,
            text_en=r.text_en,
            text_zh=r.text_zh,
            is_safety=r.is_safety,
            machine_check=r.machine_check,
            compiled_check=r.compiled_check,
            compiled_rule=r.compiled_rule,
            compiled_state=r.compiled_state,
        )
        for r in items
    ]


def session_from_model(session: Any) -> EvalSession:
    """One ``scenarios.Session`` (with turns, steps and rubric prefetched or not) as an EvalSession."""
    turns = []
    for t in session.turns.all():
        steps = _steps_of(t.steps.all())
        rubric = _rubric_of(t.rubric_items.all())
        fields = {name: getattr(t, name) for name in TURN_FIELDS}
        steps_zh = _steps_zh(t.extra, t.index)
        turns.append(_turn(index=t.index, fields=fields, steps=steps, rubric=rubric, steps_zh=steps_zh))
    fields = {name: getattr(session, name) for name in SESSION_FIELDS}
    return _session(fields=fields, turns=turns)


TURN_FIELDS = (
    "task_type",
    "subtype",
    "tool_source",
    "request_implicit_en",
    "request_explicit_en",
    "request_implicit_zh",
    "request_explicit_zh",
    "answer_en",
    "answer_zh",
)
SESSION_FIELDS = (
    "session_id",
    "record_id",
    "subject_id",
    "hadm_id",
    "current_date",
    "scenario",
    "tier",
    "env_info",
    "tools",
    "tools_zh",
)


def from_sessions(queryset: Any, *, label: str = "db", limit: int | None = None) -> EvalDataset:
    """Sessions from the database, in ``record_id`` order (the first ``limit`` of them), streamed: the
    dataset holds a reference per session and loads a session while a job plays it."""
    from evaluation.session_stream import SessionStream, stream_sessions

    rows = queryset.order_by("record_id")
    refs, checksum = stream_sessions(rows if limit is None else rows[:limit])
    return EvalDataset(source="db", label=label, snapshot_id=None, checksum=checksum, sessions=SessionStream(refs))


def approved_sessions() -> Any:
    """Sessions every turn of which is approved (a partly approved session would break the 4-turn arc)."""
    from django.db.models import Count, F, Q

    from scenarios.models import Session

    return (
        Session.objects.annotate(n=Count("turns"), ok=Count("turns", filter=Q(turns__status="approved")))
        .filter(n__gt=0, n=F("ok"))
        .order_by("record_id")
    )


def session_from_record(record: dict[str, Any]) -> EvalSession:
    """One frozen PhysAssistBench record (a snapshot line) as an EvalSession."""
    from scenarios.pab import parse_record

    parsed = parse_record(record)
    turns = []
    for index, t in enumerate(parsed.turns):
        steps = _steps_of(t.steps)
        rubric = _rubric_of(t.rubric)
        steps_zh = _steps_zh(t.fields.get("extra"), index)
        turns.append(_turn(index=index, fields=t.fields, steps=steps, rubric=rubric, steps_zh=steps_zh))
    return _session(fields=parsed.fields, turns=turns)


def snapshots_available() -> bool:
    try:
        from annotations.models import Snapshot  # noqa: F401
        from annotations.snapshots import selectors  # noqa: F401
    except ImportError:
        return False
    return True


def from_snapshot(snapshot: Any) -> EvalDataset:
    """The frozen sessions of a ready snapshot (``annotations.Snapshot``), checksum = its content checksum;
    streamed like :func:`from_sessions`: a reference per frozen item, a session parsed while a job plays it."""
    from evaluation.session_stream import SessionStream, stream_snapshot

    refs, checksum = stream_snapshot(snapshot, checksum=not snapshot.content_sha256)
    return EvalDataset(
        source="snapshot",
        label=snapshot.label,
        snapshot_id=snapshot.pk,
        checksum=snapshot.content_sha256 or checksum,
        sessions=SessionStream(refs),
    )


def resolve_snapshot(ref: str) -> Any:
    """``latest`` / ``vN`` → a ready Snapshot; raises ``ValueError`` with a clear message."""
    if not snapshots_available():
        raise ValueError("snapshots are not available in this installation; use --snapshot none")
    from annotations.snapshots.errors import SnapshotError
    from annotations.snapshots.selectors import get_snapshot

    try:
        return get_snapshot(ref=ref)
    except SnapshotError as exc:
        raise ValueError(str(exc)) from None
