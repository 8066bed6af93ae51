"""``croissant.json``: Croissant 1.0 metadata (JSON-LD, MLCommons) of a snapshot folder or an export.

What a reader of a dataset submission expects: the files with their SHA-256 (``distribution``), record sets
that say how to read them (``turns``: the flat rows, one per turn and language, from ``turns.jsonl`` or
``turns.parquet``; ``sessions``: one PhysAssistBench session per line of the ``<scenario>.jsonl`` files),
licence and data-use terms (MIMIC-derived content: the PhysioNet credentialed licence and DUA), and the
Responsible-AI fields (``rai:*``) filled from what the card states (counts, review and agreement,
generation, data use). Same snapshot and files, same bytes: the only clock is the snapshot's creation.

The ``@context`` is Croissant 1.0's own, inline: ``mlcroissant`` reads the file without fetching anything,
and local ``contentUrl`` paths are resolved beside the file (hashes checked when a record set is read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotations.models import Snapshot
from annotations.snapshots import card
from annotations.snapshots.exporters.parquet import SCHEMA
from annotations.snapshots.rows import COLUMNS

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
ENCODING = {
    "pab": "application/jsonlines",
    "jsonl": "application/jsonlines",
    "parquet": "application/x-parquet",
}
PAB_FILES = "pab-files"  # the FileSet of the <scenario>.jsonl files
_ARROW_TYPES = {"string": "sc:Text", "bool": "sc:Boolean", "int8": "sc:Integer", "int16": "sc:Integer"}
_ARROW_TYPES |= {"int32": "sc:Integer", "int64": "sc:Integer"}
# Columns of the flat rows, in words (see annotations.snapshots.rows).
_TURN_DESCRIPTIONS = {
    "record_id": "PhysAssistBench record id of the session",
    "session_id": "id the tools take as session_id",
    "turn_index": "turn number within the session (0-3)",
    "language": "language of this row's texts (en or zh)",
    "current_date": "the session's current date: EHR data from this date on is invisible",
    "source": "generated (PhysReview's pipeline) or imported (PhysAssistBench release)",
    "task_type": "IL information lookup, DG data gathering, CR clinical reasoning, WU write/update",
    "is_implicit": "whether the request given to the assistant is the implicit form",
    "subtype": "implicitness subtype: NA nominal anaphora, PE predicate ellipsis, AE abstract anaphora",
    "tool_source": "ehr, patient, mixed or write",
    "request": "the physician's request as the assistant is given it",
    "request_explicit": "the explicit form of the request",
    "answer": "the physician-reviewed gold answer",
    "rubric": "binary rubric items of the turn, with whether each is a safety item",
    "gold_calls_json": "gold tool calls as JSON text: [{tool, arguments}, ...]",
    "turn_version": "version of the turn that physicians approved",
    "reviewers": "physicians whose review of the turn was submitted",
    "adjudicator": "the adjudicator who settled a disagreement, if any",
}
# Session fields read from the PAB lines (the full layout: formats/physassistbench-session.md).
_SESSION_FIELDS = (
    ("id", "sc:Text", False, "record id"),
    ("session_id", "sc:Text", False, "id the tools take as session_id"),
    ("subject_id", "sc:Integer", False, "MIMIC-IV-shaped patient id"),
    ("hadm_id", "sc:Integer", False, "admission id"),
    ("current_date", "sc:Date", False, "the session's current date"),
    ("clinical_scenario", "sc:Text", False, "diagnostic_workup, med_safety, treatment_response, discharge_planning"),
    ("difficulty_level", "sc:Integer", False, "tier 1-3"),
    ("tasks", "sc:Text", True, "implicit requests per turn, English"),
    ("tasks_explicit", "sc:Text", True, "explicit requests per turn, English"),
    ("tasks_zh", "sc:Text", True, "implicit requests per turn, Chinese"),
    ("tasks_zh_explicit", "sc:Text", True, "explicit requests per turn, Chinese"),
    ("task_types", "sc:Text", True, "task type label per turn"),
    ("tool_sources", "sc:Text", True, "tool source per turn"),
)


def _field(*, record_set: str, name: str, data_type: str, source: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": name,
        "dataType": data_type,
        "source": source,
        **extra,
    }


def _turn_fields(*, file_id: str) -> list[dict[str, Any]]:
    """The flat rows' columns, typed from the Parquet schema (one source of truth for both files)."""
    out = []
    for name in COLUMNS:
        arrow = SCHEMA.field(name).type
        described = {"description": _TURN_DESCRIPTIONS[name]} if name in _TURN_DESCRIPTIONS else {}
        source = {"fileObject": {"@id": file_id}, "extract": {"column": name}}
        if name == "rubric":
            subfields = [
                _field(
                    record_set="turns/rubric",
                    name=sub,
                    data_type=data_type,
                    source={**source, "transform": {"jsonPath": sub}},
                )
                for sub, data_type in (("text", "sc:Text"), ("is_safety", "sc:Boolean"))
            ]
            out.append(
                {"@type": "cr:Field", "@id": "turns/rubric", "name": name, **described}
                | {"repeated": True, "subField": subfields}
            )
            continue
        if name == "reviewers":
            out.append(
                _field(record_set="turns", name=name, data_type="sc:Text", source=source, repeated=True, **described)
            )
            continue
        data_type = "sc:Date" if name == "current_date" else _ARROW_TYPES[str(arrow)]
        out.append(_field(record_set="turns", name=name, data_type=data_type, source=source, **described))
    return out


def _session_fields() -> list[dict[str, Any]]:
    out = []
    for name, data_type, repeated, description in _SESSION_FIELDS:
        source = {"fileSet": {"@id": PAB_FILES}, "extract": {"column": name}}
        extra = {"repeated": True} if repeated else {}
        out.append(
            _field(
                record_set="sessions", name=name, data_type=data_type, source=source, description=description, **extra
            )
        )
    return out


def _distribution(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    objects = [
        {
            "@type": "cr:FileObject",
            "@id": f["name"],
            "name": f["name"],
            "description": f"{f['rows']} rows ({f['format']})",
            "contentUrl": f["name"],
            "contentSize": f"{f['bytes']} B",
            "encodingFormat": ENCODING[f["format"]],
            "sha256": f["sha256"],
        }
        for f in files
    ]
    pab = [f["name"] for f in files if f["format"] == "pab"]
    if pab:
        objects.append(
            {
                "@type": "cr:FileSet",
                "@id": PAB_FILES,
                "name": PAB_FILES,
                "description": "PhysAssistBench session files, one per scenario (each checksummed above)",
                "encodingFormat": "application/jsonlines",
                "includes": pab,
            }
        )
    return objects


def _record_sets(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = {f["name"] for f in files}
    flat = next((n for n in ("turns.jsonl", "turns.parquet") if n in names), None)
    out = []
    if flat:
        out.append(
            {
                "@type": "cr:RecordSet",
                "@id": "turns",
                "name": "turns",
                "description": f"One row per turn and language ({flat}; turns.parquet holds the same rows).",
                "key": [{"@id": "turns/record_id"}, {"@id": "turns/turn_index"}, {"@id": "turns/language"}],
                "field": _turn_fields(file_id=flat),
            }
        )
    if any(f["format"] == "pab" for f in files):
        out.append(
            {
                "@type": "cr:RecordSet",
                "@id": "sessions",
                "name": "sessions",
                "description": "One PhysAssistBench session per line (English and Chinese); tools, conversations, "
                "gold tool calls and rubrics are further fields of the same lines "
                "(formats/physassistbench-session.md).",
                "key": {"@id": "sessions/id"},
                "field": _session_fields(),
            }
        )
    return out


def _section(markdown: str, title: str) -> str:
    """The text under ``## title`` in the card (up to the next ``## ``), tables kept as written."""
    body = card.split_front_matter(markdown)[1]
    _, found, rest = body.partition(f"\n## {title}\n")
    return rest.split("\n## ", 1)[0].strip() if found else ""


def _approvers_per_turn(snapshot: Snapshot) -> str:
    approvals = (snapshot.manifest or {}).get("approvals") or []
    counts = [len(a.get("approvers") or []) for a in approvals if isinstance(a, dict)]
    if not counts:
        return "not recorded"
    mean = sum(counts) / len(counts)
    return f"{mean:.2f} approving physicians per turn on average (min {min(counts)}, max {max(counts)})"


def _rai(*, snapshot: Snapshot, mimic: bool) -> dict[str, Any]:
    counts = (snapshot.manifest or {}).get("counts") or {}
    markdown = snapshot.card_markdown or ""
    provenance = (snapshot.filters or {}).get("ehr_provenance", "undeclared")
    generation = _section(markdown, "Generation")
    origin = (
        "MIMIC-IV-derived EHR records (or a store whose origin was not declared, treated as such)"
        if mimic
        else "a synthetic MIMIC-IV-shaped cohort (no real patient)"
    )
    return {
        "rai:dataCollection": (
            f"{counts.get('sessions', 0)} sessions ({counts.get('turns', 0)} turns) of a physician working with an "
            f"assistant, built from {origin} (EHR provenance declared: {provenance}; session sources: "
            f"{json.dumps(counts.get('sources', {}), sort_keys=True)}). Each session comes from one admission with a "
            "current date; requests, gold tool calls, gold answers and rubrics were generated (or imported from "
            "the PhysAssistBench release) and every turn was approved in physician review."
        ),
        "rai:dataCollectionType": [
            "Secondary data analysis" if mimic else "Synthetic data generation",
            "Expert annotation (physician review)",
        ],
        "rai:dataPreprocessingProtocol": [
            "Frozen at approval: each session's PhysAssistBench line is stored as approved and exported byte for "
            "byte; flat rows are derived from it (one per turn and language).",
        ],
        "rai:dataAnnotationProtocol": [
            "Blind double review in the browser: two physicians review each turn (request, implicitness labels, "
            "gold tool calls, answer, rubric items) without seeing each other's review; disagreements are settled "
            "by an adjudicator. Only finally approved turns enter a snapshot.",
        ],
        "rai:dataAnnotationPlatform": ["PhysReview (Django web application)"],
        "rai:dataAnnotationAnalysis": [_section(markdown, "Review") or "not recorded"],
        "rai:annotationsPerItem": _approvers_per_turn(snapshot),
        "rai:annotatorDemographics": ["Physicians with reviewer accounts; demographics are not recorded."],
        "rai:machineAnnotationTools": [generation or "not recorded"],
        "rai:dataBiases": [
            "Sessions per scenario and tier are not balanced: "
            + json.dumps(counts.get("grid", {}), sort_keys=True)
            + ("; MIMIC-IV is one US academic centre's ICU and hospital population." if mimic else "")
            + " Chinese texts are translations of English ones; the English form was generated and reviewed first.",
        ],
        "rai:dataLimitations": [
            "Patient answers are replayed from reviewed gold answers, not simulated freely; rubric items not "
            "machine-checkable need an LLM judge or physicians; "
            + ("synthetic records lack the noise of real charts." if not mimic else "dates are MIMIC's shifted dates."),
        ],
        "rai:dataUseCases": [
            "Evaluating LLM assistants on clinical sessions: EHR tool calls, patient interviews, underspecified "
            "requests, in English and Chinese. Not for clinical decision making or training clinical models on "
            "patient data outside the licence.",
        ],
        "rai:dataSocialImpact": (
            "Measures whether clinical assistants look up the record before answering and avoid unsafe "
            "recommendations; a high score does not certify a model for clinical use."
        ),
        "rai:personalSensitiveInformation": [
            "De-identified health records (MIMIC-IV): no direct identifiers, shifted dates; re-identification is "
            "forbidden by the PhysioNet DUA."
            if mimic
            else "None: the records are synthetic."
        ],
        "rai:dataReleaseMaintenancePlan": (
            "Immutable, versioned snapshots (vN) with content checksums; a corrected set is a new version, "
            "and diff_snapshots lists what changed between versions."
        ),
    }


def croissant_metadata(*, snapshot: Snapshot, files: list[dict[str, Any]]) -> dict[str, Any]:
    """The Croissant JSON-LD of a folder holding ``files`` (entries as ``write_files`` returns them)."""
    counts = (snapshot.manifest or {}).get("counts") or {}
    provenance = (snapshot.filters or {}).get("ehr_provenance", "undeclared")
    mimic = card.mimic_derived(sources=counts.get("sources", {}), ehr_provenance=provenance)
    license_: Any = (
        card.PHYSIONET_LICENSE
        if mimic
        else {"@type": "sc:CreativeWork", "name": "No licence declared: choose one before publishing"}
    )
    data_use = card.MIMIC_NOTE if mimic else card.SYNTHETIC_NOTE
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"physreview-{snapshot.label}",
        "description": (
            f"PhysReview curated set {snapshot.label}: {counts.get('sessions', 0)} physician-approved clinical "
            f"sessions ({counts.get('turns', 0)} turns) in the PhysAssistBench format, English and Chinese. "
            f"Data use: {data_use}. The card (card.md) and manifest.json sit beside this file."
        ),
        "version": f"{snapshot.version}.0.0",
        "datePublished": snapshot.created.date().isoformat(),
        "license": license_,
        "conditionsOfAccess": data_use,
        "isAccessibleForFree": not mimic,
        "inLanguage": ["en", "zh"],
        "keywords": ["clinical", "EHR", "FHIR", "tool use", "agents", "benchmark", "physician review"],
        "citeAs": (
            f"@misc{{physreview_{snapshot.label}, title={{PhysReview curated set {snapshot.label}}}, "
            f"note={{content sha256 {snapshot.content_sha256}}}}}"
        ),
        "distribution": _distribution(files),
        "recordSet": _record_sets(files),
        **_rai(snapshot=snapshot, mimic=mimic),
    }


def write_croissant(*, folder: Path, snapshot: Snapshot, files: list[dict[str, Any]]) -> Path:
    path = folder / "croissant.json"
    text = json.dumps(croissant_metadata(snapshot=snapshot, files=files), ensure_ascii=False, indent=2)
    path.write_text(text + "\n", encoding="utf-8")
    return path
