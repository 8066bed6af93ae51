"""The dataset card (markdown) written with every snapshot.

Counts come from the frozen items (what the files hold); reviewer names and agreement statistics come
from the submitted reviews of the frozen turns; generation backends and models from each session's run
and generation report. The data-use note tells per session source which terms bind the content.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from annotations import agreement
from annotations.models import Decision, Review, Snapshot
from scenarios.models import Scenario, TaskType

# Who may use what. Imported records are PhysAssistBench's (MIMIC-IV derived); generated sessions are
# derived from whatever EHR store they were generated from, which the snapshot's maker declares.
PROVENANCE = ("mimic", "synthetic", "undeclared")
REVIEW_CHUNK = 500  # reviews held at a time while the agreement statistics are counted
MIMIC_NOTE = (
    "derived from MIMIC-IV: bound by the PhysioNet Credentialed Health Data Use Agreement "
    "(credentialed access only; no re-identification; no sharing with non-credentialed people)"
)
SYNTHETIC_NOTE = (
    "derived from a synthetic cohort (`synth_ehr`, the bundled demo cohort): not bound by the PhysioNet DUA"
)
UNDECLARED_NOTE = (
    "derived from the local EHR store, whose origin was not declared (`--ehr-provenance`): treat it as "
    "MIMIC-derived, i.e. bound by the PhysioNet Credentialed Health Data Use Agreement"
)


# Licences: MIMIC-derived content is PhysioNet's (credentialed licence + DUA); a synthetic-only set has
# no licence until its maker chooses one (we do not choose it for them).
PHYSIONET_LICENSE = "https://physionet.org/about/licenses/physionet-credentialed-health-data-license-150/"
PHYSIONET_LICENSE_NAME = "physionet-credentialed-health-data-license-1.5.0"
NO_LICENSE_NAME = "not-declared"
FRONT_MATTER = "---\n"


def mimic_derived(*, sources: Iterable[str], ehr_provenance: str) -> bool:
    """Whether any content is (or must be treated as) MIMIC-derived: imported release records, a store
    declared ``mimic``, or one whose origin was not declared (as :func:`data_use` treats it)."""
    return "imported" in set(sources) or ehr_provenance != "synthetic"


def size_category(n: int) -> str:
    """The dataset hubs' size bucket (Hugging Face ``size_categories``) of ``n`` rows."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def front_matter(*, snapshot: Snapshot, stats: dict[str, Any]) -> str:
    """The card's YAML header as dataset hubs read it (Hugging Face dataset cards): licence, languages,
    task categories, name, size, tags and the file configurations (flat rows, PhysAssistBench sessions)."""
    import yaml

    filters = snapshot.filters or {}
    provenance = filters.get("ehr_provenance", "undeclared")
    mimic = mimic_derived(sources=stats["sources"], ehr_provenance=provenance)
    names = [f["name"] for f in (snapshot.manifest or {}).get("files", [])]
    languages = list(filters.get("languages") or ["en", "zh"])
    flat_rows = stats["turns"] * len(languages)
    header: dict[str, Any] = {
        "pretty_name": f"PhysReview curated set {snapshot.label}",
        "license": "other",
        "license_name": PHYSIONET_LICENSE_NAME if mimic else NO_LICENSE_NAME,
    }
    if mimic:
        header["license_link"] = PHYSIONET_LICENSE
        header["extra_gated_prompt"] = f"This dataset is {MIMIC_NOTE}. Request access only as a credentialed user."
    header |= {
        "language": sorted({*languages, "en", "zh"}),  # PhysAssistBench files carry both
        "task_categories": ["question-answering", "text-generation"],
        "size_categories": [size_category(flat_rows)],
        "tags": ["medical", "clinical", "ehr", "fhir", "tool-use", "agents", "benchmark"]
        + (["mimic-iv"] if mimic else ["synthetic"]),
        "configs": [
            {"config_name": "turns", "data_files": [{"split": "test", "path": n} for n in names if n == "turns.jsonl"]},
            {
                "config_name": "sessions",
                "data_files": [
                    {"split": "test", "path": [n for n in names if n.endswith(".jsonl") and n != "turns.jsonl"]}
                ],
            },
        ],
    }
    text = yaml.safe_dump(header, allow_unicode=True, sort_keys=False, width=1000)
    return f"{FRONT_MATTER}{text}{FRONT_MATTER}\n"


def split_front_matter(markdown: str) -> tuple[dict[str, Any], str]:
    """(the YAML header as a dict, the card's body); ``({}, markdown)`` for a card without a header."""
    import yaml

    if not markdown.startswith(FRONT_MATTER):
        return {}, markdown
    head, sep, body = markdown[len(FRONT_MATTER) :].partition("\n" + FRONT_MATTER)
    if not sep:
        return {}, markdown
    try:
        header = yaml.safe_load(head)
    except yaml.YAMLError:  # not a header we wrote: leave the card as it is
        return {}, markdown
    return (header, body.lstrip("\n")) if isinstance(header, dict) else ({}, markdown)


def data_use(*, source: str, ehr_provenance: str) -> str:
    if source == "imported" or ehr_provenance == "mimic":
        return MIMIC_NOTE
    return SYNTHETIC_NOTE if ehr_provenance == "synthetic" else UNDECLARED_NOTE


def collect(items: Iterable[Any]) -> dict[str, Any]:
    """Counts over frozen items (objects with scenario, tier, source, record_json, review)."""
    grid: Counter[tuple[str, int]] = Counter()
    task_types: Counter[str] = Counter()
    subtypes: Counter[str] = Counter()
    tool_sources: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    generation: Counter[str] = Counter()
    turn_pks: list[int] = []
    sessions = turns = 0
    for item in items:
        record = json.loads(item.record_json)
        sessions += 1
        grid[(item.scenario, item.tier)] += 1
        sources[item.source] += 1
        for label, subtype, tool_source in zip(
            record["task_types"], record["turn_subtypes"], record["tool_sources"], strict=True
        ):
            turns += 1
            task_types[label] += 1
            subtypes[subtype or "none (explicit)"] += 1
            tool_sources[tool_source] += 1
        gen = item.review.get("generation") or {}
        models = ", ".join(f"{k}={v}" for k, v in sorted((gen.get("models") or {}).items())) or "—"
        generation[f"{gen.get('backend') or 'not recorded'}\t{models}"] += 1
        turn_pks += [t["turn_pk"] for t in item.review.get("turns", [])]
    return {
        "sessions": sessions,
        "turns": turns,
        "grid": {f"{s}|{t}": n for (s, t), n in sorted(grid.items())},
        "task_types": dict(sorted(task_types.items())),
        "subtypes": dict(sorted(subtypes.items())),
        "tool_sources": dict(sorted(tool_sources.items())),
        "sources": dict(sorted(sources.items())),
        "generation": dict(sorted(generation.items())),
        "turn_pks": turn_pks,
    }


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _agreement_lines(turn_pks: list[int]) -> list[str]:
    # Streamed in chunks: a review carries two full turn contents (base and proposal), and holding every review
    # of the set made the card the largest memory cost of make_snapshot (+257 MB at 1,500 sessions; bench/scale.py).
    reviews = (
        Review.objects.filter(turn_id__in=turn_pks, submitted_at__isnull=False)
        .select_related("reviewer")
        .order_by("turn_id", "pk")
    )
    reviewers: Counter[str] = Counter()

    def counted() -> Iterator[Review]:
        for review in reviews.iterator(chunk_size=REVIEW_CHUNK):
            reviewers[review.reviewer.get_username()] += 1
            yield review

    decisions, rubric = agreement.ratings_from_reviews(counted())
    if not reviewers:
        return ["No submitted reviews of these turns (nothing to measure agreement on)."]
    return agreement_text(reviewers=reviewers, decisions=decisions, rubric=rubric)


def agreement_text(*, reviewers: Counter, decisions: dict, rubric: dict) -> list[str]:
    """The card's review-agreement lines from the ratings (annotations.agreement shapes)."""
    fmt = agreement.format_statistic
    lines = ["Reviewers (turns reviewed): " + ", ".join(f"{u} ({n})" for u, n in sorted(reviewers.items())), ""]
    # A decision is approve or reject (pending reviews are not submitted): AC1 counts both as possible.
    pairs = agreement.pairwise(decisions, categories=(Decision.APPROVE, Decision.REJECT))
    if pairs:
        lines += _table(
            ["reviewer pair", "turns both reviewed", "% agreement (decision)", "Cohen's κ", "Gwet's AC1"],
            [
                [f"{p.rater_a} / {p.rater_b}", p.n, fmt(p.percent, percent=True), fmt(p.kappa), fmt(p.ac1)]
                for p in pairs
            ],
        )
        lines.append("")
    lines.append(
        f"Krippendorff's α (nominal): decisions {fmt(agreement.krippendorff_alpha_nominal(decisions))}, "
        f"rubric keep/drop {fmt(agreement.krippendorff_alpha_nominal(rubric))}."
    )
    if agreement.low_kappa_high_agreement(pairs):
        labels = Counter(label for by_rater in decisions.values() for label in by_rater.values())
        top, count = labels.most_common(1)[0]
        share = 100 * count / sum(labels.values())
        lines += [
            "",
            f"κ and α are low although the reviewers agree on almost every turn because {share:.1f}% "
            f"of all decisions are “{top}”: both measure agreement beyond what such skewed label frequencies "
            "produce by chance, so a handful of disagreements dominates them; Gwet's AC1, which does not "
            "penalise prevalence, is the better summary of how often the reviewers agree.",
        ]
    return lines


def render(*, snapshot: Snapshot, stats: dict[str, Any]) -> str:
    filters = snapshot.filters or {}
    provenance = filters.get("ehr_provenance", "undeclared")
    who = snapshot.created_by.get_username() if snapshot.created_by else "unknown"
    lines = [
        front_matter(snapshot=snapshot, stats=stats).rstrip("\n"),
        "",
        f"# PhysReview curated set {snapshot.label}",
        "",
        f"Made by {who} on {snapshot.created:%Y-%m-%d %H:%M} UTC. "
        f"Filters: scenarios {', '.join(filters.get('scenarios') or []) or 'all'}; "
        f"tiers {', '.join(map(str, filters.get('tiers') or [])) or 'all'}; "
        f"languages {', '.join(filters.get('languages') or [])}.",
        "",
        f"{stats['sessions']} sessions, {stats['turns']} turns; every turn finally approved in physician review.",
        "",
        "## Sessions per scenario × tier",
        "",
    ]
    grid = stats["grid"]
    rows = []
    for scenario in Scenario.values:
        cells = [grid.get(f"{scenario}|{t}", 0) for t in (1, 2, 3)]
        rows.append([scenario, *cells, sum(cells)])
    rows.append(["total", *[sum(r[t] for r in rows) for t in (1, 2, 3)], stats["sessions"]])
    lines += _table(["scenario", "L1", "L2", "L3", "total"], rows)
    labels = dict(TaskType.choices)
    lines += ["", "## Turns", ""]
    lines += _table(
        ["task type", "turns"],
        [[f"{label} ({code})", stats["task_types"].get(label, 0)] for code, label in labels.items()],
    )
    lines.append("")
    lines += _table(["implicit subtype", "turns"], [[k, v] for k, v in stats["subtypes"].items()])
    lines.append("")
    lines += _table(["tool source", "turns"], [[k, v] for k, v in stats["tool_sources"].items()])
    lines += [
        "",
        "## Languages",
        "",
        "PhysAssistBench files carry English and Chinese (the format requires both). Flat rows (turns.jsonl, "
        f"turns.parquet): one per turn and language, for {', '.join(filters.get('languages') or [])}.",
        "",
        "## Review",
        "",
        *_agreement_lines(stats["turn_pks"]),
        "",
        f"Review state at freeze time: {json.dumps(snapshot.review_state, sort_keys=True)}.",
        "",
        "## Generation",
        "",
    ]
    lines += _table(["backend", "models", "sessions"], [[*k.split("\t", 1), v] for k, v in stats["generation"].items()])
    lines += ["", "## Data use", ""]
    lines += _table(
        ["session source", "sessions", "terms"],
        [[s, n, data_use(source=s, ehr_provenance=provenance)] for s, n in stats["sources"].items()],
    )
    lines += [
        "",
        "MIMIC-derived content is bound by the PhysioNet credentialed data-use agreement; synthetic content is not.",
        "",
        "## Files",
        "",
    ]
    lines += _table(
        ["file", "format", "rows", "bytes", "sha256"],
        [[f["name"], f["format"], f["rows"], f["bytes"], f["sha256"]] for f in snapshot.manifest.get("files", [])],
    )
    return "\n".join(lines) + "\n"
