"""Patient replay in the run's language: bilingual gold answers, language fallbacks, misses."""

import json
import re

from django.core.management import call_command

from evaluation.replay import MISS_REPLY, ReplayBook, replay_key
from scenarios.models import GoldStep

CJK = re.compile(r"[\u4e00-\u9fff]")
TOOL = "patient.get_medication_adherence"
GOLD = {
    "resourceType": "PatientAnswer",
    "tool": TOOL,
    "language": "en",
    "answer": "At home I take furosemide 40 mg once a day, but I skip it when I go out.",
    "answer_zh": "在家我每天吃一次呋塞米 40 mg，但出门的时候就不吃了。",
    "facts": ["medication.home.3fa2", "adherence.skip.77c1"],
    "withheld": True,
    "persona": {"health_literacy": "low", "info_completeness": "critical_withheld"},
}


def _book(gold, arguments=None):
    return ReplayBook(answers={replay_key(TOOL, arguments or {"drug": "furosemide"}): gold})


def test_zh_run_replays_the_chinese_answer_and_nothing_private():
    got = _book(GOLD).reply(tool=TOOL, arguments={"drug": " Furosemide"}, language="zh")
    assert (got.hit, got.language_fallback) == (True, False)
    assert got.observation == {
        "resourceType": "PatientAnswer",
        "tool": TOOL,
        "answer": GOLD["answer_zh"],
        "language": "zh",
    }


def test_en_run_replays_the_english_answer_without_the_chinese_text():
    got = _book(GOLD).reply(tool=TOOL, arguments={"drug": "FUROSEMIDE"}, language="en")
    assert (got.hit, got.language_fallback) == (True, False)
    assert got.observation == {
        "resourceType": "PatientAnswer",
        "tool": TOOL,
        "answer": GOLD["answer"],
        "language": "en",
    }
    assert "answer_zh" not in json.dumps(got.observation) and not CJK.search(json.dumps(got.observation))


def test_aliases_placeholders_and_older_gold_replay_as_the_contract_call():
    """Replay keys are in the contract's terms: the model's alias names and older gold both match."""
    book = _book(GOLD)
    for asked in ({"medication": "Furosemide"}, {"med": " furosemide ", "patient": 1, "session_id": "other"}):
        assert book.reply(tool=TOOL, arguments=asked, language="en").hit
    older = ReplayBook(
        answers={replay_key(TOOL, {"medication": "furosemide", "question": "How do you take it?"}): GOLD}
    )
    assert older.reply(tool=TOOL, arguments={"drug": "FUROSEMIDE"}, language="en").hit
    # A placeholder is no argument: an empty drug asks about all medications, which this gold is not.
    assert not book.reply(tool=TOOL, arguments={"drug": ""}, language="en").hit
    symptoms = ReplayBook(answers={replay_key("patient.get_symptom_history", {"symptom": "chest pain"}): "It hurts."})
    assert symptoms.reply(tool="patient.get_symptom_history", arguments={"query": "Chest pain"}, language="en").hit
    assert replay_key("patient__get_symptom_history", {"query": "x"}) == replay_key(
        "patient.get_symptom_history", {"query": "x"}
    )


def test_the_reply_is_a_copy():
    book = _book(GOLD)
    book.reply(tool=TOOL, arguments={"drug": "furosemide"}, language="zh").observation["answer"] = "changed"
    again = book.reply(tool=TOOL, arguments={"drug": "furosemide"}, language="zh")
    assert again.observation["answer"] == GOLD["answer_zh"]


def test_zh_run_without_chinese_gold_falls_back_to_english_and_says_so():
    older = {k: v for k, v in GOLD.items() if k != "answer_zh"}  # a row generated before bilingual answers
    imported = "I take the blood thinner in the morning, but I sometimes forget the evening one."  # PAB data
    for gold in (older, imported):
        got = _book(gold).reply(tool=TOOL, arguments={"drug": "furosemide"}, language="zh")
        assert (got.hit, got.language_fallback) == (True, True)
        assert got.observation["language"] == "en" and not CJK.search(got.observation["answer"])
        # The same gold in an en run is no fallback.
        assert _book(gold).reply(tool=TOOL, arguments={"drug": "furosemide"}, language="en").language_fallback is False
    got = _book(imported).reply(tool=TOOL, arguments={"drug": "furosemide"}, language="zh")
    assert got.hit and got.observation["answer"] == imported


def test_a_chinese_only_gold_is_no_fallback_in_zh_and_a_fallback_in_en():
    chinese = "我在家按时吃药。"
    assert _book(chinese).reply(tool=TOOL, arguments={"drug": "furosemide"}, language="zh").language_fallback is False
    en = _book(chinese).reply(tool=TOOL, arguments={"drug": "furosemide"}, language="en")
    assert en.language_fallback is True and en.observation["language"] == "zh"


def test_other_answer_shapes_keep_their_keys_but_follow_the_language():
    gold = {"answer": "ok", "answer_zh": "好的", "source": "Social History"}
    zh = _book(gold).reply(tool=TOOL, arguments={"drug": "furosemide"}, language="zh")
    assert zh.observation == {"answer": "好的", "language": "zh", "source": "Social History"}
    en = _book(gold).reply(tool=TOOL, arguments={"drug": "furosemide"}, language="en")
    assert en.observation == {"answer": "ok", "source": "Social History"} and not en.language_fallback


def test_miss_reply_is_in_the_run_language():
    for language in ("zh", "en"):
        got = _book(GOLD).reply(tool=TOOL, arguments={}, language=language)
        assert (got.hit, got.language_fallback) == (False, False)
        assert got.observation == {
            "resourceType": "PatientAnswer",
            "tool": TOOL,
            "answer": MISS_REPLY[language],
            "language": language,
        }
    assert CJK.search(MISS_REPLY["zh"])


def _run(tmp_path, language):
    out = tmp_path / language
    call_command(
        "runeval",
        "--model",
        "rules:oracle",
        "--judge",
        "rules",
        "--language",
        language,
        "--sessions",
        "all",
        "--quiet",
        "--output",
        str(out),
    )
    lines = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    return [reply for line in lines for reply in line["trace"]["patient_replies"]]


def test_runeval_in_zh_replays_the_patient_in_chinese(sessions, tmp_path):
    gold = GoldStep.objects.filter(tool__startswith="patient.", turn__session__in=sessions)
    assert gold.exists(), "the demo-style sessions ask the patient"
    assert all(CJK.search(s.observation["answer_zh"]) for s in gold)

    zh = _run(tmp_path, "zh")
    assert zh and all(r["replay"] == "hit" for r in zh)
    for reply in zh:
        seen = reply["observation"]
        assert set(seen) == {"resourceType", "tool", "answer", "language"}
        assert seen["language"] == "zh" and CJK.search(seen["answer"])
    gold_zh = {s.observation["answer_zh"] for s in gold}
    assert {r["observation"]["answer"] for r in zh} <= gold_zh

    en = _run(tmp_path, "en")
    assert en and all(r["replay"] == "hit" for r in en)
    assert all(r["observation"]["language"] == "en" and not CJK.search(r["observation"]["answer"]) for r in en)
    assert all("answer_zh" not in r["observation"] for r in en)


def test_runeval_in_zh_on_older_gold_replays_english_labelled_en(sessions, tmp_path):
    # Rows generated before answers were bilingual: no answer_zh in the gold observation.
    for step in GoldStep.objects.filter(tool__startswith="patient.", turn__session__in=sessions):
        step.observation = {k: v for k, v in step.observation.items() if k != "answer_zh"}
        step.save(update_fields=["observation"])
    zh = _run(tmp_path, "zh")
    assert zh and all(r["replay"] == "hit" for r in zh)
    # Not silent: what the model saw says it is English, each reply is flagged, and the run counts them.
    assert all(r["observation"]["language"] == "en" and not CJK.search(r["observation"]["answer"]) for r in zh)
    assert all(r["language_fallback"] is True for r in zh)
    lines = [json.loads(line) for line in (tmp_path / "zh" / "turns.jsonl").read_text().splitlines()]
    per_turn = sum(line["trace"]["replay_language_fallbacks"] for line in lines)
    assert per_turn == len(zh)
    summary = json.loads((tmp_path / "zh" / "summary.json").read_text())
    assert summary["errors"]["replay_language_fallbacks"] == len(zh)
    assert summary["errors"]["replay_misses"] == 0


def test_runeval_with_bilingual_gold_counts_no_language_fallback(sessions, tmp_path):
    zh = _run(tmp_path, "zh")
    assert zh and not any(r["language_fallback"] for r in zh)
    summary = json.loads((tmp_path / "zh" / "summary.json").read_text())
    assert summary["errors"]["replay_language_fallbacks"] == 0
