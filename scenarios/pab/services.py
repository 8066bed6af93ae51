"""Import and export of PhysAssistBench JSONL files.

Import: one transaction per file. Every record of the file is validated (up to ``max_errors``
errors are reported, as ``FILE:LINE: field 'x': what is wrong``); if any is bad the file's
transaction is rolled back, so nothing from it stays, and the next file is still imported.
A loaded file gets a :class:`~scenarios.models.GenerationRun` with backend ``import``.

Export: streams sessions (chunked queryset iterator) to a temporary file next to the target,
then renames it over the target, so readers never see a half-written file.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import DatabaseError, transaction
from django.db.models import ProtectedError
from django.utils import timezone
from tqdm import tqdm

from scenarios.gold_answer import apply_gold_answer
from scenarios.models import (
    Backend,
    GenerationRun,
    GoldStep,
    RubricItem,
    RunStatus,
    Scenario,
    Session,
    SessionStatus,
    Source,
    Turn,
)
from scenarios.pab.errors import PabArgumentError, PabRecordError
from scenarios.pab.layout import KNOWN_FIELDS
from scenarios.pab.parsed import ParsedRecord
from scenarios.pab.reader import read_lines
from scenarios.pab.schema import parse_record
from scenarios.pab.writer import dumps_record, session_to_record
from scenarios.rubric_compiler.report import Coverage
from scenarios.rubric_compiler.services import compile_parsed
from scenarios.selectors import sessions_for_export

EXPORT_CHUNK = 100  # sessions fetched (with their turns) per query while exporting


@dataclass
class FileImport:
    path: Path
    loaded: int = 0
    replaced: int = 0
    errors: list[str] = field(default_factory=list)
    run_id: int | None = None
    compile: bool = True
    # The rubric compiler's outcomes on the loaded items (scenarios.rubric_compiler.report.Coverage).
    coverage: Coverage = field(default_factory=Coverage)
    # Turns whose prepare_to_answer observation differed from the conversation's answer and was set to it
    # ("<id> turn <n> (en|zh)"): the answer is the source of truth (scenarios.gold_answer).
    aligned: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


class _Rollback(Exception):
    pass


def import_pab_files(
    *,
    paths: Iterable[Path],
    replace: bool = False,
    progress: bool = False,
    max_errors: int = 20,
    compile_rubrics: bool = True,
) -> list[FileImport]:
    """Import each file in its own transaction; a bad file does not stop the others."""
    return [
        import_pab_file(
            path=Path(p), replace=replace, progress=progress, max_errors=max_errors, compile_rubrics=compile_rubrics
        )
        for p in paths
    ]


def import_pab_file(
    *, path: Path, replace: bool = False, progress: bool = False, max_errors: int = 20, compile_rubrics: bool = True
) -> FileImport:
    """Load every record of ``path`` or none. ``replace``: a record whose ``id`` exists replaces it
    (the old session, its turns, steps and rubric items are deleted). ``compile_rubrics``: items of
    records without our extension's rubric data (official records) get the rubric compiler's suggestion
    (:mod:`scenarios.rubric_compiler`); our own records keep exactly what they carry."""
    result = FileImport(path=path, compile=compile_rubrics)
    if not path.is_file():
        result.errors.append(f"{path}: no such file")
        return result
    bar = tqdm(
        total=path.stat().st_size, desc=path.name, unit="B", unit_scale=True, disable=not progress, file=sys.stderr
    )
    try:
        with bar, transaction.atomic():
            run = GenerationRun.objects.create(
                backend=Backend.IMPORT, status=RunStatus.RUNNING, parameters={"file": str(path), "replace": replace}
            )
            _load(path=path, run=run, replace=replace, result=result, bar=bar, max_errors=max_errors)
            if not result.errors and not result.loaded:
                result.errors.append(f"{path}: no session records (the file is empty or holds only blank lines)")
            if result.errors:
                raise _Rollback
            run.status, run.finished_at = RunStatus.FINISHED, timezone.now()
            run.requested = run.made = result.loaded
            run.save()
            result.run_id = run.pk
    except _Rollback:
        pass
    except (DatabaseError, ProtectedError) as exc:
        result.errors.append(f"{path}: database error, file rolled back: {exc}")
    if result.errors:
        result.loaded = result.replaced = 0
        result.coverage = Coverage()
    return result


def _load(*, path: Path, run: GenerationRun, replace: bool, result: FileImport, bar: tqdm, max_errors: int) -> None:
    seen: dict[tuple[str, str], int] = {}  # (field, value) → line, for duplicates within the file
    for line in read_lines(path, known=KNOWN_FIELDS):
        bar.update(line.nbytes)
        if len(result.errors) >= max_errors:
            result.errors.append(f"{path}: stopped after {max_errors} errors")
            return
        if line.error is not None:
            result.errors.append(f"{path}:{line.number}: {line.error}")
            continue
        try:
            parsed = parse_record(line.value, texts=line.texts)
            existing = _check_identity(parsed=parsed, replace=replace, seen=seen, line=line.number)
        except PabRecordError as exc:
            result.errors.append(f"{path}:{line.number}: {exc}")
            continue
        if result.errors:
            continue  # the file will be rolled back: keep validating, stop writing
        if existing is not None:
            existing.delete()
            result.replaced += 1
        if result.compile:
            compile_parsed(parsed=parsed, raw=line.value, coverage=result.coverage)
        write_record(parsed=parsed, run=run, run_index=result.loaded, aligned=result.aligned)
        result.loaded += 1


def _check_identity(
    *, parsed: ParsedRecord, replace: bool, seen: dict[tuple[str, str], int], line: int
) -> Session | None:
    """The session this record replaces, if any; raises on a clash with the file or the database."""
    for name, value in (("id", parsed.record_id), ("session_id", parsed.session_id)):
        if (name, value) in seen:
            raise PabRecordError(name, f"{value!r} already appears on line {seen[(name, value)]} of this file")
        seen[(name, value)] = line
    existing = Session.objects.filter(record_id=parsed.record_id).first()
    if existing is not None and not replace:
        raise PabRecordError("id", f"record {parsed.record_id!r} already exists (use --replace to overwrite it)")
    other = Session.objects.filter(session_id=parsed.session_id).exclude(record_id=parsed.record_id).first()
    if other is not None:
        raise PabRecordError("session_id", f"{parsed.session_id!r} is already used by record {other.record_id!r}")
    return existing


def write_record(
    *, parsed: ParsedRecord, run: GenerationRun | None, run_index: int | None, aligned: list[str] | None = None
) -> Session:
    """Create the session, turns, steps and rubric items of a validated record (caller holds the transaction).
    ``aligned`` receives the turns whose prepare_to_answer observation was set to the conversation's answer."""
    session = Session.objects.create(run=run, run_index=run_index, source=Source.IMPORTED, **parsed.fields)
    steps: list[GoldStep] = []
    items: list[RubricItem] = []
    for index, parsed_turn in enumerate(parsed.turns):
        # One INSERT per turn (4 per session) so the pk is known on every database.
        turn = Turn(session=session, index=index, **parsed_turn.fields)
        turn_steps = [GoldStep(turn=turn, **vars(s)) for s in parsed_turn.steps]
        # The conversation's answer is the gold answer; the prepare_to_answer observations follow it.
        changed = apply_gold_answer(turn=turn, steps=turn_steps, answer_en=turn.answer_en, answer_zh=turn.answer_zh)
        if aligned is not None:
            langs = ["zh" if name.startswith("answer_list_zh") else "en" for name in changed if "observation" in name]
            aligned += [f"{parsed.record_id} turn {index + 1} ({lang})" for lang in langs]
        turn.save()
        steps += turn_steps
        items += [RubricItem(turn=turn, **vars(r)) for r in parsed_turn.rubric]
    GoldStep.objects.bulk_create(steps)
    RubricItem.objects.bulk_create(items)  # checks were validated by parse_record
    return session


# --- export ------------------------------------------------------------------------------------------


@dataclass
class ExportResult:
    path: Path
    sessions: int


def _check_filters(*, scenarios: list[str] | None, tiers: list[int] | None, statuses: list[str] | None) -> None:
    if bad := sorted(set(scenarios or []) - set(Scenario.values)):
        raise PabArgumentError(f"unknown scenario(s): {', '.join(bad)} (known: {', '.join(Scenario.values)})")
    if bad_tiers := sorted(set(tiers or []) - {1, 2, 3}):
        raise PabArgumentError(f"unknown tier(s): {', '.join(map(str, bad_tiers))} (tiers are 1, 2, 3)")
    if statuses:
        # Session statuses are plain strings (later apps add review states): known = this app's and those in use.
        known = {SessionStatus.DRAFT, SessionStatus.REJECTED_BY_GATE}
        known |= set(Session.objects.values_list("status", flat=True).distinct())
        if bad_statuses := sorted(set(statuses) - known):
            raise PabArgumentError(f"unknown status(es): {', '.join(bad_statuses)} (known: {', '.join(sorted(known))})")


def export_pab(
    *,
    out: Path,
    scenarios: list[str] | None = None,
    tiers: list[int] | None = None,
    statuses: list[str] | None = None,
    progress: bool = False,
    serialize: Callable[[Session], str] | None = None,
    extension: bool = True,
) -> ExportResult:
    """Write the matching sessions to ``out`` (one JSON object per line, UTF-8), atomically.

    ``serialize`` replaces the record serializer (tests use it to fail half-way). ``extension=False`` leaves
    out PhysReview's ``physreview`` member: an unedited imported line is then written byte for byte.
    """
    _check_filters(scenarios=scenarios, tiers=tiers, statuses=statuses)
    out = Path(out)
    if not out.parent.is_dir():
        raise PabArgumentError(f"{out.parent}: no such directory")
    serialize = serialize or (lambda s: dumps_record(session_to_record(s, extension=extension)))
    qs = sessions_for_export(scenarios=scenarios, tiers=tiers, statuses=statuses)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    tmp = Path(tmp_name)
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            with tqdm(total=qs.count(), desc=out.name, unit="session", disable=not progress, file=sys.stderr) as bar:
                for session in qs.iterator(chunk_size=EXPORT_CHUNK):
                    handle.write(serialize(session) + "\n")
                    count += 1
                    bar.update(1)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(0o644)  # mkstemp makes it 0600; an export is meant to be shared
        tmp.replace(out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return ExportResult(path=out, sessions=count)
