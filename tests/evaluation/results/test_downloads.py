"""CSV / JSON / LaTeX downloads and the results_table command."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.models import EvalRun, TurnResult


def _body(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def test_leaderboard_csv_and_json_parse_and_equal_summary(reviewer_client, runs):
    text = _body(reviewer_client.get(reverse("evaluation:leaderboard_download", args=["csv"])))
    rows = {int(r["id"]): r for r in csv.DictReader(io.StringIO(text))}
    data = {
        r["id"]: r
        for r in json.loads(_body(reviewer_client.get(reverse("evaluation:leaderboard_download", args=["json"]))))
    }
    for run, summary in runs.values():
        expected = summary["metrics"]["zh"]["pass_at_session"]["0.75"]
        assert float(rows[run.pk]["zh_S75"]) == expected and data[run.pk]["zh_S75"] == expected
        assert data[run.pk]["en_L2"] == summary["metrics"]["en"]["mRS"]["L2"]
    assert reviewer_client.get(reverse("evaluation:leaderboard_download", args=["xls"])).status_code == 404


def test_run_downloads(reviewer_client, runs):
    run, summary = runs["oracle"]
    assert json.loads(_body(reviewer_client.get(reverse("evaluation:run_download", args=[run.pk, "json"])))) == summary
    response = reviewer_client.get(reverse("evaluation:run_download", args=[run.pk, "csv"]))
    assert 'filename="run-' in response["Content-Disposition"]
    lines = list(csv.DictReader(io.StringIO(_body(response))))
    assert len(lines) == TurnResult.objects.filter(run=run).count()
    assert {line["language"] for line in lines} == {"en", "zh"}


def test_run_download_escapes_formula_cells(reviewer_client, runs):
    """Issue 36 F7: an imported session_id ``=cmd|' /C calc'!A0`` reached the CSV as a live formula."""
    run, _summary = runs["oracle"]
    result = TurnResult.objects.filter(run=run).first()
    TurnResult.objects.filter(pk=result.pk).update(session_id="=cmd|' /C calc'!A0")
    response = reviewer_client.get(reverse("evaluation:run_download", args=[run.pk, "csv"]))
    lines = list(csv.DictReader(io.StringIO(_body(response))))
    ids = {line["session_id"] for line in lines}
    assert "'=cmd|' /C calc'!A0" in ids and "=cmd|' /C calc'!A0" not in ids
    assert not any(cell.startswith(("=", "+", "@")) for line in lines for cell in line.values())


def test_latex_table_in_the_papers_layout(runs, capsys):
    (oracle, so), (heuristic, _sh) = runs["oracle"], runs["heuristic"]
    call_command("results_table", "--runs", f"{heuristic.pk},{oracle.pk}")
    out = capsys.readouterr().out.splitlines()
    assert out.pop(0) == "% protocol: physreview"
    assert out[0] == r"\begin{tabular}{l" + "c" * 14 + "}" and out[1] == r"\toprule"
    assert out[2] == r" & \multicolumn{7}{c}{EN} & \multicolumn{7}{c}{ZH} \\"
    assert out[4] == r"Model & " + " & ".join(["L1", "L2", "L3", "@T60", "@S60", "@T75", "@S75"] * 2) + r" \\"
    assert out[5] == r"\midrule" and out[-2:] == [r"\bottomrule", r"\end{tabular}"]
    body = out[6:8]
    assert body[0].startswith(r"rules:heuristic & ") and body[1].startswith(r"rules:oracle & ")
    cells = body[1].removesuffix(r" \\").split(" & ")
    m_en, m_zh = so["metrics"]["en"], so["metrics"]["zh"]
    assert cells[1] == f"{100 * m_en['mRS']['L1']:.1f}" and cells[8] == f"{100 * m_zh['mRS']['L1']:.1f}"
    assert cells[7] == f"{100 * m_en['pass_at_session']['0.75']:.1f}" and len(cells) == 15


def test_markdown_and_csv_formats_and_latest(runs, capsys):
    call_command("results_table", "--latest", "1", "--format", "markdown")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| Model | Protocol | EN L1 |") and len(out) == 3
    assert out[2].split(" | ")[1] == "physreview"
    call_command("results_table", "--format", "csv")
    assert len(list(csv.DictReader(io.StringIO(capsys.readouterr().out)))) == 2


def _as_release(run: EvalRun) -> None:
    manifest = {**run.manifest, "protocol": {"name": "release", "literacy": "high"}}
    summary = {**run.summary, "manifest": {**run.summary.get("manifest", {}), **manifest}}
    EvalRun.objects.filter(pk=run.pk).update(manifest=manifest, summary=summary)


def test_runs_of_different_protocols_are_grouped_and_labelled(runs, capsys):
    (oracle, _so), (heuristic, _sh) = runs["oracle"], runs["heuristic"]
    _as_release(oracle)
    call_command("results_table", "--runs", f"{oracle.pk},{heuristic.pk}")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "% protocol: release, physreview"
    body = out[out.index(r"\midrule") + 1 : -2]
    assert body[0] == r"\multicolumn{15}{l}{\emph{protocol: release}} \\"
    assert body[1].startswith("rules:oracle & ") and body[2] == r"\midrule"
    assert body[3] == r"\multicolumn{15}{l}{\emph{protocol: physreview}} \\"
    assert body[4].startswith("rules:heuristic & ") and len(body) == 5
    call_command("results_table", "--format", "markdown")
    md = capsys.readouterr().out.splitlines()
    assert [line.split(" | ")[1] for line in md[2:4]] == ["physreview", "release"] or [
        line.split(" | ")[1] for line in md[2:4]
    ] == ["release", "physreview"]
    assert md[-1] == "Runs of different protocols are not comparable; they are grouped by protocol."
    call_command("results_table", "--format", "csv")
    protocols = {int(r["id"]): r["protocol"] for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert protocols == {oracle.pk: "release", heuristic.pk: "physreview"}


def test_latex_escapes_model_names(runs, capsys):
    run, _ = runs["oracle"]
    EvalRun.objects.filter(pk=run.pk).update(model="gpt_4o & co 100%")
    run.refresh_from_db()
    run.summary = {**run.summary, "model": "gpt_4o & co 100%"}
    run.save()
    call_command("results_table", "--runs", str(run.pk))
    assert r"gpt\_4o \& co 100\% & " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "999998,999999"], "unknown run ids: 999998, 999999"),
        (["--runs", "1,x"], "expected comma-separated run ids"),
        (["--latest", "0"], "--latest must be at least 1"),
    ],
)
def test_command_errors(db, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("results_table", *args)


def test_command_refuses_unfinished_runs_and_empty_db(db):
    with pytest.raises(CommandError, match="no finished run"):
        call_command("results_table")
    run = EvalRun.objects.create(model="m")
    with pytest.raises(CommandError, match=f"not finished: {run.pk}"):
        call_command("results_table", "--runs", str(run.pk))
