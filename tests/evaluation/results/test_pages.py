"""Leaderboard, comparison, run page and drill-down: figures equal summary.json, sorting, filters, escaping."""

import re

import pytest
from django.conf import settings
from django.urls import reverse

from evaluation.models import TurnResult
from evaluation.results import selectors
from evaluation.results.present import value_text
from tests.evaluation.results.conftest import make_run


def _cell(html: str, run_id: int, col: str) -> str:
    row = re.search(rf'<tr data-run="{run_id}">(.*?)</tr>', html, re.S).group(1)
    return re.search(rf'data-col="{col}">([^<]*)</td>', row).group(1).strip()


def test_leaderboard_figures_equal_summary_json(reviewer_client, runs):
    html = reviewer_client.get(reverse("evaluation:leaderboard")).content.decode()
    for run, summary in runs.values():
        for lang in ("en", "zh"):
            m = summary["metrics"][lang]
            expected = {
                "L1": m["mRS"]["L1"],
                "L2": m["mRS"]["L2"],
                "L3": m["mRS"]["L3"],
                "T60": m["pass_at_turn"]["0.6"],
                "S60": m["pass_at_session"]["0.6"],
                "T75": m["pass_at_turn"]["0.75"],
                "S75": m["pass_at_session"]["0.75"],
                "safety": m["safety_failure_rate"],
                "passk": m["pass_hat_k"]["1"],
            }
            for key, value in expected.items():
                shown = _cell(html, run.pk, f"{lang}_{key}")
                assert shown == ("—" if value is None else f"{100 * value:.1f}"), (run.model, lang, key)
        assert _cell(html, run.pk, "tokens") == str(
            summary["usage"]["prompt_tokens"] + summary["usage"]["completion_tokens"]
        )


def test_run_page_figures_and_charts(reviewer_client, runs):
    run, summary = runs["heuristic"]
    html = reviewer_client.get(reverse("evaluation:run", args=[run.pk])).content.decode()
    row = re.search(r'<tr data-lang="en">(.*?)</tr>', html, re.S).group(1)
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    m = summary["metrics"]["en"]
    assert cells[:3] == [value_text(m["mRS"][t], percent=True) for t in ("L1", "L2", "L3")]
    assert cells[3] == value_text(m["pass_at_turn"]["0.6"], percent=True)
    # Server-rendered SVG with titles and text labels, no script and no external reference.
    assert html.count('<svg class="results-chart"') >= 6
    for title in ("Scores by scenario", "Scores by tier", "Scores by task type", "Scores by tool source", "pass^k"):
        assert title in html
    assert "<script" not in html.split("<main>")[1] and "http://" not in html.split("<main>")[1].replace(
        "http://www.w3.org/2000/svg", ""
    )


def test_sorting_is_server_side_and_validated(reviewer_client, runs):
    oracle, heuristic = runs["oracle"][0], runs["heuristic"][0]
    url = reverse("evaluation:leaderboard")
    order = lambda html: [int(i) for i in re.findall(r'<tr data-run="(\d+)">', html)]  # noqa: E731
    desc = order(reviewer_client.get(url, {"sort": "en_L1", "dir": "desc"}).content.decode())
    asc = order(reviewer_client.get(url, {"sort": "en_L1", "dir": "asc"}).content.decode())
    assert desc == [oracle.pk, heuristic.pk] and asc == [heuristic.pk, oracle.pk]
    html = reviewer_client.get(url, {"sort": "en_L1", "dir": "desc"}).content.decode()
    assert 'aria-sort="descending"' in html and 'href="?sort=en_L1&amp;dir=asc"' in html
    # An unknown column falls back to the default order instead of failing.
    assert reviewer_client.get(url, {"sort": "nope;drop", "dir": "x"}).status_code == 200
    with pytest.raises(ValueError, match="unknown sort column"):
        selectors.sort_rows([], sort="nope", direction="asc")


def test_compare_shows_deltas_per_slice(reviewer_client, runs):
    (a, sa), (b, sb) = runs["heuristic"], runs["oracle"]
    response = reviewer_client.get(reverse("evaluation:compare"), {"a": a.pk, "b": b.pk})
    assert response.status_code == 200
    cmp = selectors.compare(a=a, b=b)
    headline = {item["key"]: item for item in cmp["headline"]}
    expected = round(sb["metrics"]["en"]["mRS"]["L1"] - sa["metrics"]["en"]["mRS"]["L1"], 4)
    assert headline["en_L1"]["delta"] == expected
    scenario = next(s for s in cmp["slices"] if s["dimension"] == "scenario")
    for entry in scenario["entries"]:
        cell = entry["cells"][0]
        va = sa["slices"]["scenario"][entry["value"]]["mean_turn_score"]
        vb = sb["slices"]["scenario"][entry["value"]]["mean_turn_score"]
        assert cell["delta"] == round(vb - va, 4)
    html = response.content.decode()
    assert f"{100 * expected:+.1f}" in html and 'data-dimension="task_type"' in html
    assert reviewer_client.get(reverse("evaluation:compare"), {"a": a.pk, "b": 999999}).status_code == 404
    assert reviewer_client.get(reverse("evaluation:compare"), {"a": "x"}).status_code == 400


def test_drill_down_filters(reviewer_client, runs):
    run, _ = runs["heuristic"]
    url = reverse("evaluation:turns", args=[run.pk])

    def shown(**params):
        html = reviewer_client.get(url, params).content.decode()
        return {int(i) for i in re.findall(r'<tr data-result="(\d+)">', html)}

    results = list(TurnResult.objects.filter(run=run))
    failures = {r.pk for r in results if (r.score is not None and r.score < 0.6) or r.infra_error}
    safety = {r.pk for r in results if any(v["is_safety"] and v["scored"] and not v["passed"] for v in r.verdicts)}
    assert failures and shown(show="failures") == failures
    assert shown(show="safety") == safety
    assert shown(show="failures", language="zh") == {
        pk for pk in failures if TurnResult.objects.get(pk=pk).language == "zh"
    }
    scenario = results[0].scenario
    expected = {r.pk for r in results if r.scenario == scenario and r.language == "en"}
    assert len(expected) <= 50  # one page
    assert shown(scenario=scenario, language="en") == expected
    # Replay misses and invalid calls: the turns whose trace counts them (one is marked to be sure).
    marked = results[1]
    marked.trace = {**marked.trace, "replay_misses": 1, "invalid_calls": 2, "unknown_arguments": 1}
    marked.save()
    results = list(TurnResult.objects.filter(run=run))
    assert shown(show="replay_misses") == {r.pk for r in results if r.trace.get("replay_misses")} >= {marked.pk}
    assert shown(show="invalid_calls") == {r.pk for r in results if r.trace.get("invalid_calls")} >= {marked.pk}
    assert shown(show="unknown_arguments") == {r.pk for r in results if r.trace.get("unknown_arguments")} == {marked.pk}


def test_turn_detail_shows_trace_verdicts_and_gold(reviewer_client, runs, tmp_path):
    run, _ = runs["heuristic"]
    result = TurnResult.objects.filter(run=run, language="en").exclude(verdicts=[]).order_by("pk").first()
    html = reviewer_client.get(reverse("evaluation:turn", args=[run.pk, result.pk])).content.decode()
    assert 'id="gold-answer"' in html and "Gold turn unavailable" not in html
    for verdict in result.verdicts:
        assert str(verdict["reason"]).replace("'", "&#x27;").replace('"', "&quot;")[:40] in html
    if result.trace["n_calls"]:
        assert result.trace["calls"][0]["name"] in html and "Raw JSON" in html
    other, _ = make_run(tmp_path, "--model", "rules:oracle", "--limit", "1", "--sessions", "all")
    # A turn result of another run is not reachable under this run.
    assert reviewer_client.get(reverse("evaluation:turn", args=[other.pk, result.pk])).status_code == 404


def test_turn_detail_shows_argument_mismatches_and_language_fallbacks(reviewer_client, runs):
    run, _ = runs["heuristic"]
    result = TurnResult.objects.filter(run=run, language="zh").order_by("pk").first()
    mismatch = {"tool": "Observation.search", "gold": {"code": "potassium"}, "made": {"code": "sodium"}}
    reply = {"resourceType": "PatientAnswer", "tool": "patient.get_pain_assessment", "answer": "No pain."}
    result.trace = {
        **result.trace,
        "diagnostics": {"missing_calls": [], "extra_calls": [], "argument_mismatches": [mismatch]},
        "patient_replies": [
            {"tool": reply["tool"], "arguments": {}, "replay": "hit", "language_fallback": True, "observation": reply}
        ],
    }
    result.save()
    html = reviewer_client.get(reverse("evaluation:turn", args=[run.pk, result.pk])).content.decode()
    listed = html.split('id="argument-mismatches"')[1].split("</ul>")[0]
    assert "Observation.search" in listed and "potassium" in listed and "sodium" in listed
    replies = html.split('id="patient-replies"')[1].split("</ul>")[0]
    assert "gold answer only in the other language" in replies
    # The run page counts them beside the replay misses.
    run.summary = {**run.summary, "errors": {**run.summary["errors"], "replay_language_fallbacks": 3}}
    run.save()
    page = reviewer_client.get(reverse("evaluation:run", args=[run.pk])).content.decode()
    assert "patient answers replayed in the other language: 3" in page


def test_turn_detail_shows_the_arguments_the_tool_layer_dropped(reviewer_client, runs):
    run, _ = runs["heuristic"]
    result = TurnResult.objects.filter(run=run, language="en").exclude(trace__n_calls=0).order_by("pk").first()
    warning = "unknown argument 'units' ignored; Observation.search takes: subject_id, hadm_id, category"
    steps = result.trace["steps"]
    call = {**steps[0]["calls"][0], "warnings": [warning]}
    steps = [{**steps[0], "calls": [call, *steps[0]["calls"][1:]]}, *steps[1:]]
    result.trace = {**result.trace, "steps": steps, "unknown_arguments": 1}
    result.save()
    html = reviewer_client.get(reverse("evaluation:turn", args=[run.pk, result.pk])).content.decode()
    assert "1 unknown arguments dropped" in html.split('id="unknown-arguments"')[1].split("</span>")[0]
    listed = html.split('class="muted call-warnings"')[1].split("</ul>")[0]
    assert "unknown argument &#x27;units&#x27; ignored" in listed
    # In the Chinese UI the tool layer's English (what the model read) is shown in Chinese.
    reviewer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    html = reviewer_client.get(reverse("evaluation:turn", args=[run.pk, result.pk])).content.decode()
    listed = html.split('class="muted call-warnings"')[1].split("</ul>")[0]
    assert "未知参数“units”已忽略；Observation.search 接受的参数：subject_id, hadm_id, category" in listed
    assert "unknown argument" not in listed
    reviewer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    run.summary = {**run.summary, "errors": {**run.summary["errors"], "unknown_arguments": 4}}
    run.save()
    page = reviewer_client.get(reverse("evaluation:run", args=[run.pk])).content.decode()
    assert "unknown arguments dropped: 4" in page


def test_model_answer_markup_is_inert(reviewer_client, runs):
    run, _ = runs["heuristic"]
    result = TurnResult.objects.filter(run=run).first()
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    result.trace = {**result.trace, "answer": evil, "request": evil}
    result.verdicts = [{**result.verdicts[0], "reason": evil}] if result.verdicts else []
    result.save()
    run.model = evil
    run.save()
    for url in (
        reverse("evaluation:turn", args=[run.pk, result.pk]),
        reverse("evaluation:run", args=[run.pk]),
        reverse("evaluation:turns", args=[run.pk]),
        reverse("evaluation:leaderboard"),
    ):
        html = reviewer_client.get(url).content.decode()
        assert "<script>alert" not in html and "<img src=x" not in html, url
    html = reviewer_client.get(reverse("evaluation:turn", args=[run.pk, result.pk])).content.decode()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html


def test_login_required(client, runs):
    run, _ = runs["oracle"]
    for url in (reverse("evaluation:leaderboard"), reverse("evaluation:run", args=[run.pk])):
        assert client.get(url).status_code == 302


def _played_under(run, protocol: dict) -> None:
    manifest = {**run.manifest, "protocol": protocol}
    type(run).objects.filter(pk=run.pk).update(manifest=manifest, summary={**run.summary, "manifest": manifest})


def test_pages_name_the_protocol_and_mark_mixed_protocols(reviewer_client, runs):
    (oracle, _so), (heuristic, _sh) = runs["oracle"], runs["heuristic"]
    url = reverse("evaluation:leaderboard")
    html = reviewer_client.get(url).content.decode()
    # One protocol: named in its column, no grouping notice.
    assert _cell(html, oracle.pk, "protocol") == "physreview" and 'id="mixed-protocols"' not in html
    _played_under(oracle, {"name": "release", "literacy": "low", "max_steps": 8})
    html = reviewer_client.get(url, {"sort": "en_L1", "dir": "desc"}).content.decode()
    assert 'id="mixed-protocols"' in html and _cell(html, oracle.pk, "protocol") == "release"
    groups = re.findall(r'<tr class="protocol-group" data-protocol="(\w+)">', html)
    assert sorted(groups) == ["physreview", "release"]
    # Each group heads its own rows: no ranking interleaves the two protocols.
    order = re.findall(r'data-protocol="(\w+)">|<tr data-run="(\d+)">', html)
    flat = [g or int(r) for g, r in order]
    assert flat.index(oracle.pk) == flat.index("release") + 1
    assert flat.index(heuristic.pk) == flat.index("physreview") + 1
    page = reviewer_client.get(reverse("evaluation:run", args=[oracle.pk])).content.decode()
    shown = re.search(r'<dd id="run-protocol">(.*?)</dd>', page, re.S).group(1)
    # Settings by name and value as labels (the manifest keeps the codes).
    assert shown.startswith("release") and "patient literacy: low" in shown and "step limit: 8" in shown
    compared = reviewer_client.get(reverse("evaluation:compare"), {"a": heuristic.pk, "b": oracle.pk})
    assert 'id="protocol-mismatch"' in compared.content.decode()


def test_turn_detail_numbers_turns_from_one_and_labels_codes_in_chinese(reviewer_client, runs):
    run, _ = runs["heuristic"]
    result = TurnResult.objects.filter(run=run, language="en", turn_index=0).order_by("pk").first()
    url = reverse("evaluation:turn", args=[run.pk, result.pk])
    english = reviewer_client.get(url).text
    assert f"{result.session_id}, turn 1</h1>" in english and "turn 0</h1>" not in english
    reviewer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    chinese = reviewer_client.get(url).text
    # Stored codes (variant, agent stage) and the gold's source read as Chinese labels, not as codes.
    assert "显式请求" in chinese or "隐式请求" in chinese
    assert "<strong>最终回答</strong>" in chinese and "<strong>final</strong>" not in chinese
    assert "database (current rows" not in chinese and "当前数据库" in chinese


def test_turn_detail_shows_a_refused_call_in_the_ui_language(reviewer_client, runs):
    run, _ = runs["heuristic"]
    result = TurnResult.objects.filter(run=run, language="en").exclude(trace__n_calls=0).order_by("pk").first()
    refused = {
        "error": "argument 'code' of Observation.search must be a string, got int 5",
        "hint": "Pass code as a string e.g. 'creatinine'.",
    }
    steps = result.trace["steps"]
    call = {**steps[0]["calls"][0], "observation": refused}
    steps = [{**steps[0], "calls": [call, *steps[0]["calls"][1:]]}, *steps[1:]]
    result.trace = {**result.trace, "steps": steps}
    result.save()
    url = reverse("evaluation:turn", args=[run.pk, result.pk])
    banner = reviewer_client.get(url).content.decode().split('class="banner banner-error tool-error"')[1]
    banner = banner.split("</div>")[0]
    assert "The tool refused the call:" in banner and "must be a string, got int 5" in banner
    assert "Pass code as a string e.g. &#x27;creatinine&#x27;." in banner
    reviewer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    banner = reviewer_client.get(url).content.decode().split('class="banner banner-error tool-error"')[1]
    banner = banner.split("</div>")[0]
    assert "Observation.search 的参数“code”必须是字符串，实际收到 int 5" in banner
    assert "请将 code 作为字符串传入" in banner and "must be" not in banner
    reviewer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
