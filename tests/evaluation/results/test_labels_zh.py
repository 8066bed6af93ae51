"""Codes and judge reasons on the results pages read as labels in both UI languages."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from django.conf import settings
from django.urls import reverse
from django.utils import translation

from annotations.templatetags import review_i18n as labels
from ehr.fhir import REGISTRY
from evaluation.models import TurnResult
from evaluation.templatetags import results_i18n as results_labels
from scenarios.rubric_reasons import parse_reason

# English a Chinese results page must not show: the rules judge's reason wording and the raw codes.
ENGLISH_LEFTOVERS = (
    "in the answer",
    "called with",
    "called, but not",
    "mentions “",
    "none of “",
    "recommends “",
    "does not recommend",
    "machine-checkable",
    "compiled (",
    "found ",
    "ended by",
    "step limit",
    "replay miss",
    "Scores by",
    "mean turn score",
)
RAW_CODES = re.compile(
    r"\b(?:ehr|patient|mixed|write|control|running|finished|partial|explicit|implicit|step_limit|prepare_to_answer|"
    r"empty_answer|infra_error|http_\d+|diagnostic_workup|med_safety|treatment_response|discharge_planning|"
    r"task_type|tool_source|subtype|variant|scenario|tier|hit|miss|en|zh|NA|PE|AE|None)\b"
)


# Codes that are not English words too (the English labels "patient question", "control tool" are fine).
IDENTIFIERS = re.compile(r"\b\w+_\w+\b|\((?:ehr|patient|write|control|hit|miss|live)\)|/(?:NA|PE|AE)\b")
ARGUMENTS = {p.name for tool in REGISTRY.values() if tool.kind == "write" for p in tool.params}
VOID = {"br", "img", "input", "meta", "link", "hr", "wbr"}


class _Visible(HTMLParser):
    """A page's visible UI text: not the raw JSON, code, answers, turn content (elements with ``lang``), the
    patient's words (blockquote) or the record's own rows (EHR observation tables: ``class="grid"``, no id)."""

    SKIP = {"details", "pre", "code", "script", "style", "option", "title", "blockquote"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[bool] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        found = dict(attrs)
        record = tag == "table" and found.get("class") == "grid" and "id" not in found
        lang = "lang" in found and tag != "html"
        self.stack.append(tag in self.SKIP or lang or record or bool(self.stack and self.stack[-1]))

    def handle_startendtag(self, tag, attrs):
        pass  # <rect/>, <br/>: no content

    def handle_endtag(self, tag):
        if self.stack and tag not in VOID:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]):
            self.parts.append(data)


def visible_text(html: str) -> str:
    main = html.split("<main", 1)[1].split("</main>", 1)[0]
    parser = _Visible()
    parser.feed("<main" + main + "</main>")
    return " ".join(" ".join(parser.parts).split())


def _marked(result: TurnResult) -> TurnResult:
    """A turn with every marker the page words: a skipped call, a replay miss, an end reason, an infra error."""
    trace = dict(result.trace)
    steps = [dict(s) for s in trace.get("steps") or [{"stage": "step", "calls": []}]]
    steps[0]["calls"] = [*steps[0].get("calls", []), {"id": "x", "name": "Observation.search", "skipped": "step_limit"}]
    reply = {"resourceType": "PatientAnswer", "tool": "patient.get_pain_assessment", "answer": "没有疼痛。"}
    trace.update(
        steps=steps,
        end_reason="step_limit",
        patient_replies=[{"tool": reply["tool"], "arguments": {}, "replay": "miss", "observation": reply}],
    )
    result.trace = trace
    result.infra_error = "http_503"
    result.save()
    return result


def test_code_labels_are_table_driven_with_a_readable_fallback():
    assert labels.code_label("ehr", "tool_source") == "EHR tools"
    assert labels.code_label("PE", "subtype") == "Predicate ellipsis"
    assert labels.code_label("adaptive", "workup_mode") == "Adaptive work-up"
    assert labels.code_label("step_limit", "end_reason") == "the step limit"
    assert labels.code_label("step_limit", "skipped") == "not run: step limit reached"
    assert labels.code_label("miss", "replay") == "replay miss"
    assert labels.code_label("http_503", "infra_error") == "endpoint HTTP error 503"
    assert labels.code_label("partial", "run_status") == "partial"
    assert labels.code_label("en+zh", "language") == "English + Chinese"
    assert labels.code_label("tool_source", "dimension") == "Tool source"
    # Unknown codes read as words, never as identifiers; judge names (a model's) stay as they are.
    assert labels.code_label("brand_new_reason", "end_reason") == "brand new reason"
    assert labels.code_label("some_code", "no_such_table") == "some code"
    assert labels.code_label("gpt_4o_mini", "judge") == "gpt_4o_mini"
    assert labels.code_label("", "tool_source") == labels.code_label(None, "run_status") == "—"
    assert labels.slice_value("None", "subtype") == "No subtype"
    assert (
        labels.slice_value("2", "tier") == "L2" and labels.slice_value("CR", "task_type") == "Clinical reasoning (CR)"
    )
    assert labels.slice_value("non-safety", "item") == "non-safety" and labels.slice_value("x_y", "other") == "x_y"


def test_persona_text_in_both_languages():
    persona = {
        "health_literacy": "low",
        "adherence": "partial",
        "anxiety_level": "high",
        "info_completeness": "critical_withheld",
        "seed": "7:abc",
        "critical_fact_id": "fact-3",
        "critical_triggers": ["warfarin", "bleeding"],
    }
    english = labels.persona_text(persona)
    assert english == (
        "health literacy: low · adherence: partial · anxiety level: high · information given: withholds a critical "
        "fact · reveals the critical fact when asked about: warfarin, bleeding"
    )
    assert "seed" not in english and "fact-3" not in english
    assert labels.persona_text({}) == labels.persona_text(None) == "—"
    assert labels.persona_text({"age_band": "over_65"}) == "age band: over 65"
    with translation.override("zh-hans"):
        chinese = labels.persona_text(persona)
    assert chinese.startswith("健康素养: 低 · 依从性: 部分 · 焦虑程度: 高") and "warfarin, bleeding" in chinese


def test_check_sentence_shows_non_string_parameters_as_text():
    check = {"kind": "write_call", "tool": "Flag.create", "params": {"code": "fall", "urgent": True, "x": None}}
    assert labels.check_sentence(check) == "calls Flag.create with code = fall; urgent = yes; x = —"


def test_english_pages_show_labels_not_codes(reviewer_client, runs):
    run, _ = runs["heuristic"]
    result = _marked(TurnResult.objects.filter(run=run, language="en").exclude(verdicts=[]).order_by("pk").first())
    turn = visible_text(reviewer_client.get(reverse("evaluation:turn", args=[run.pk, result.pk])).text)
    assert labels.code_label(result.tool_source, "tool_source") in turn
    assert "ended by the step limit" in turn and "not run: step limit reached" in turn
    assert "endpoint HTTP error 503" in turn and "(replay miss)" in turn
    session_free = turn.replace(result.session_id, "")
    assert not IDENTIFIERS.search(session_free), IDENTIFIERS.search(session_free)
    page = visible_text(reviewer_client.get(reverse("evaluation:run", args=[run.pk])).text)
    assert "English + Chinese" in page and "en+zh" not in page and "rules judge" in page


def test_chinese_pages_have_no_english_reason_or_code_leftovers(reviewer_client, runs):
    run, _ = runs["heuristic"]
    oracle, _ = runs["oracle"]
    results = list(TurnResult.objects.filter(run=run, language="zh").exclude(verdicts=[]).order_by("pk"))
    # Every reason shape the run stored is checked once, on the first turn that has it.
    by_shape: dict[str, TurnResult] = {}
    for r in results:
        for v in r.verdicts:
            parsed = parse_reason(v["reason"])
            assert parsed is not None, v["reason"]  # the rules judge writes only known shapes
            by_shape.setdefault(parsed[0], r)
    assert len(by_shape) >= 3, by_shape
    marked = _marked(results[0])
    reviewer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    pages = {f"turn {r.pk}": reverse("evaluation:turn", args=[run.pk, r.pk]) for r in {marked, *by_shape.values()}}
    pages |= {
        "turns": reverse("evaluation:turns", args=[run.pk]),
        "run": reverse("evaluation:run", args=[run.pk]),
        "leaderboard": reverse("evaluation:leaderboard"),
        "compare": reverse("evaluation:compare") + f"?a={run.pk}&b={oracle.pk}",
    }
    for name, url in pages.items():
        response = reviewer_client.get(url)
        assert response.status_code == 200 and '<html lang="zh-hans">' in response.text, name
        text = visible_text(response.text)
        assert re.search(r"[\u4e00-\u9fff]", text), name
        left = [w for w in ENGLISH_LEFTOVERS if w in text]
        assert not left, (name, left)
        assert not RAW_CODES.search(text), (name, RAW_CODES.search(text))
        # Session ids and the write tools' argument names (as in the call's JSON) are names, not codes.
        ids = [m for m in IDENTIFIERS.findall(re.sub(r"\b\w+_s\d+_t\d+_\d+\b", "", text)) if m not in ARGUMENTS]
        assert not ids, (name, ids)
    turn = visible_text(reviewer_client.get(pages[f"turn {marked.pk}"]).text)
    with translation.override("zh-hans"):
        for v in marked.verdicts:
            assert results_labels.judge_reason(v["reason"]) in turn
        assert labels.code_label("step_limit", "end_reason") in turn


def test_an_llm_judges_reasons_are_shown_as_written_and_labelled(reviewer_client, runs):
    run, _ = runs["heuristic"]
    result = TurnResult.objects.filter(run=run).exclude(verdicts=[]).order_by("pk").first()
    url = reverse("evaluation:turn", args=[run.pk, result.pk])
    # Read as the rules judge's, the stored None would be shown as "—"; a model's words are left alone.
    looks_like_rules = "Flag.create called, but not with code = None"
    result.verdicts = [{**result.verdicts[0], "reason": looks_like_rules}]
    result.save(update_fields=["verdicts"])
    rules_page = reviewer_client.get(url).text
    assert "Flag.create called, but not with code = —" in rules_page and 'id="reason-source"' not in rules_page
    type(run).objects.filter(pk=run.pk).update(judge="gpt-4o-mini")
    model_page = reviewer_client.get(url).text
    assert looks_like_rules in model_page
    source = model_page.split('id="reason-source">')[1].split("</p>")[0]
    assert "gpt-4o-mini" in source and "as it wrote them" in source
