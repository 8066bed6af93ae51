"""UI language: the Chinese catalogue is complete and compiled, the header switch changes the UI, not the content.

The .po file is parsed here (polib is not a dependency): every entry translated, none fuzzy, the same
placeholders on both sides; the committed .mo holds exactly the .po's translations.
"""

from __future__ import annotations

import ast
import gettext
import html
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from annotations import services
from annotations.models import RejectReason
from ehr.models import Admission
from physreview.throttle import refusal_message
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

LC_MESSAGES = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES"
PO, MO = LC_MESSAGES / "django.po", LC_MESSAGES / "django.mo"
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|%%")


@dataclass
class Entry:
    msgid: str = ""
    msgctxt: str | None = None
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    line: int = 0


def parse_po(text: str) -> list[Entry]:
    """Entries of a .po file (header included, obsolete ``#~`` entries left out)."""
    entries: list[Entry] = []
    entry, key = None, None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            entry, key = None, None
            continue
        if line.startswith("#"):
            if line.startswith("#,"):
                entry = entry or Entry(line=number)
                entry.flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            continue
        match = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr)(?:\[(\d+)\])? (".*")$', line)
        if match:
            if entry is None or (match.group(1) in ("msgid", "msgctxt") and entry.msgstr):
                entry = Entry(line=number)
            if not entries or entries[-1] is not entry:
                entries.append(entry)
            key = (match.group(1), int(match.group(2) or 0))
            line = match.group(3)
        elif not line.startswith('"') or key is None:
            raise AssertionError(f"{PO.name}:{number}: cannot parse {raw!r}")
        value = ast.literal_eval(line)
        name, index = key
        if name == "msgstr":
            entry.msgstr[index] = entry.msgstr.get(index, "") + value
        else:
            setattr(entry, name, (getattr(entry, name) or "") + value)
    return entries


@pytest.fixture(scope="module")
def entries() -> list[Entry]:
    return parse_po(PO.read_text(encoding="utf-8"))


def test_catalogue_is_complete_and_not_fuzzy(entries):
    header, messages = entries[0], entries[1:]
    assert header.msgid == "" and "Language: zh_Hans" in header.msgstr[0]
    assert "nplurals=1; plural=0;" in header.msgstr[0]
    assert len(messages) > 100, "the catalogue looks truncated"
    untranslated = [e.msgid for e in messages if not all(e.msgstr.values()) or not e.msgstr]
    fuzzy = [e.msgid for e in entries if "fuzzy" in e.flags]
    assert not untranslated, f"untranslated: {untranslated}"
    assert not fuzzy, f"fuzzy: {fuzzy}"


def test_translations_keep_placeholders_and_are_chinese(entries):
    for e in entries[1:]:
        sources = [e.msgid] + ([e.msgid_plural] if e.msgid_plural else [])
        wanted = set(PLACEHOLDER.findall(e.msgid)) | set(PLACEHOLDER.findall(e.msgid_plural or ""))
        for text in e.msgstr.values():
            assert set(PLACEHOLDER.findall(text)) == wanted, f"line {e.line}: placeholders differ in {text!r}"
            assert "<code>" not in "".join(sources) or text.count("<code>") == sources[0].count("<code>")
            # Every translation is Chinese except names (Cohen, Krippendorff) and codes, which have CJK around them,
            # and punctuation (a list separator), which has no words to translate.
            assert not re.search(r"[A-Za-z]", e.msgid) or re.search(r"[\u4e00-\u9fff]", text), (
                f"line {e.line}: {text!r} has no Chinese"
            )


def _expected(entries) -> dict:
    """What gettext keys a compiled catalogue by: msgid, ``ctx\\x04msgid``, ``(msgid, n)`` for plurals."""
    catalog = {}
    for e in entries[1:]:
        msgid = f"{e.msgctxt}\x04{e.msgid}" if e.msgctxt is not None else e.msgid
        if e.msgid_plural is not None:
            catalog.update({(msgid, i): s for i, s in e.msgstr.items()})
        else:
            catalog[msgid] = e.msgstr[0]
    return catalog


def _catalog(path: Path) -> dict:
    with path.open("rb") as fh:
        catalog = dict(gettext.GNUTranslations(fh)._catalog)
    catalog.pop("", None)  # the header
    return catalog


def test_committed_mo_holds_the_po_translations(entries):
    assert _catalog(MO) == _expected(entries), "django.mo is stale: run manage.py compilemessages"


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")
def test_committed_mo_equals_msgfmt_output(tmp_path):
    fresh = tmp_path / "django.mo"
    # --check also validates python-format strings and the header.
    subprocess.run(["msgfmt", "--check", "-o", str(fresh), str(PO)], check=True, capture_output=True)
    assert _catalog(MO) == _catalog(fresh)


def test_throttle_message_in_both_languages():
    assert refusal_message(seconds=61) == "Too many failed login attempts. Please try again in 2 minutes."
    with translation.override("zh-hans"):
        assert refusal_message(seconds=90) == "登录失败次数过多，请在 2 分钟后重试。"
        assert refusal_message(seconds=30) == "登录失败次数过多，请在 30 秒后重试。"
    assert refusal_message(seconds=1) == "Too many failed login attempts. Please try again in 1 second."


def test_choice_labels_follow_the_ui_language_values_do_not():
    with translation.override("zh-hans"):
        assert str(RejectReason.FALSE_PREMISE.label) == "错误前提"
    assert str(RejectReason.FALSE_PREMISE.label) == "false premise"
    assert RejectReason.FALSE_PREMISE.value == "false_premise"


# Words that are the same in every UI language (names, codes, units shown as such).
UNTRANSLATED_OK = {"PhysReview", "ICD", "JSON", "EN", "ZH", "subject_id", "hadm_id", "n", "L", "v"}
UNTRANSLATED_OK |= {"A", "B", "CSV", "LaTeX", "summary", "json"}  # runs A/B, file formats, summary.json


def _unmarked_words(source: str) -> list[str]:
    """Words of a template's visible text (and placeholder/title/aria-label/alt) outside translate tags."""
    text = re.sub(r"{%\s*blocktranslate.*?{%\s*endblocktranslate\s*%}", " ", source, flags=re.S)
    text = re.sub(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}|{#.*?#}|{%.*?%}|{{.*?}}", " ", text, flags=re.S)
    text = re.sub(r"<(script|style|code|kbd|pre)\b.*?</\1>", " ", text, flags=re.S)
    attributes = re.findall(r'\b(?:placeholder|title|aria-label|alt)="([^"]*)"', text)
    text = re.sub(r"<[^>]*>", " ", text)
    words = re.findall(r"[A-Za-z][A-Za-z_']*", " ".join([text, *attributes]))
    return [w for w in words if w not in UNTRANSLATED_OK]


def test_unmarked_words_finds_plain_text():
    source = '<p title="Hi there">Hello {{ x }} {% translate "Yes" %} <code>abc</code></p>'
    assert _unmarked_words(source) == ["Hello", "Hi", "there"]


# The screens physicians use; Django admin pages (templates/admin/, staff tooling) are not covered.
APP_TEMPLATES = sorted(
    p.relative_to(settings.BASE_DIR).as_posix()
    for p in (settings.BASE_DIR / "templates").rglob("*.html")
    if p.relative_to(settings.BASE_DIR / "templates").parts[0] != "admin"
)


@pytest.mark.parametrize("template", APP_TEMPLATES)
def test_template_text_is_marked_for_translation(template):
    assert not _unmarked_words((settings.BASE_DIR / template).read_text(encoding="utf-8"))


# --- the header switch ---------------------------------------------------------------------------


def _html_lang(text: str) -> str:
    match = re.search(r'<html lang="([^"]+)">', text)
    assert match, "no <html lang=...>"
    return match.group(1)


def _switch(client, language: str, next_url: str):
    response = client.post(reverse("set_language"), {"language": language, "next": next_url})
    assert response.status_code == 302 and response["Location"] == next_url
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == language
    return client.get(next_url)


@pytest.mark.django_db
def test_switch_changes_ui_labels_not_turn_content(client):
    reviewer = make_user("dr_zh", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    client.force_login(reviewer)

    english = client.get(reverse("annotations:queue")).text
    assert _html_lang(english) == "en" and "<h1>My queue</h1>" in english
    # The switch is a POST form with the CSRF token that comes back to the page it was used on.
    form = re.search(r'<form method="post" action="/i18n/setlang/".*?</form>', english, re.S).group(0)
    assert 'name="csrfmiddlewaretoken"' in form and 'name="next" value="/review/"' in form
    assert 'value="zh-hans" lang="zh-hans"' in form and ">简体中文</button>" in form

    queue = _switch(client, "zh-hans", reverse("annotations:queue")).text
    assert _html_lang(queue) == "zh-hans"
    for label in ("<h1>我的队列</h1>", ">患者</a>", ">审核</a>", ">仪表板</a>", "退出登录", "审核中"):
        assert label in queue, label
    assert "My queue" not in queue and ">Patients</a>" not in queue
    assert 'aria-pressed="true" class="current">简体中文' in queue
    assert 'lang="en" aria-pressed="false">English</button>' in queue  # each language named in itself

    page = client.get(reverse("annotations:turn", args=[turn.pk])).text
    assert _html_lang(page) == "zh-hans"
    # Content stays in its own language: the English request as written, the Chinese one marked lang="zh".
    assert html.escape(turn.request_explicit_en) in page
    assert re.search(rf'lang="zh"[^>]*>{re.escape(html.escape(turn.request_implicit_zh))}<', page)

    back = _switch(client, "en", reverse("annotations:queue")).text
    assert _html_lang(back) == "en" and "<h1>My queue</h1>" in back


@pytest.mark.django_db
def test_dashboard_and_record_pages_in_chinese(client, demo_cohort):
    adjudicator = make_user("adj_zh", "adjudicator")
    reviewers = [make_user(f"rev_zh{i}", "reviewer") for i in (1, 2)]
    session = complete_session()
    for reviewer in reviewers:
        services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    for reviewer in reviewers:
        turn.refresh_from_db()
        services.submit_review(
            turn=turn, reviewer=reviewer, decision="reject", reject_reason="false_premise", base_version=turn.version
        )
    client.force_login(adjudicator)
    dashboard = _switch(client, "zh-hans", reverse("annotations:dashboard")).text
    for label in ("<h1>仪表板</h1>", "待裁定", "已通过", "已驳回", "合计", "评分细则条目（保留/删除）", "一致率 %"):
        assert label in dashboard, label
    rejected = re.search(r'<tr data-reason="false_premise"><td>([^<]+)</td>', dashboard)
    assert rejected and rejected.group(1) == "错误前提"

    patients = client.get(reverse("ehr:patient_list")).text
    assert _html_lang(patients) == "zh-hans" and "<h1>患者</h1>" in patients
    assert '<tbody lang="en">' in patients  # the record is English whatever the UI language
    hadm_id = Admission.objects.order_by("hadm_id").first().hadm_id
    admission = client.get(reverse("ehr:admission_detail", args=[hadm_id])).text
    assert f"<h1>住院记录 {hadm_id}</h1>" in admission and "病历文书" in admission
    assert '<tbody lang="en">' in admission


@pytest.mark.django_db
def test_browser_language_is_the_default_and_anonymous_pages_switch(client):
    login = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5").text
    assert _html_lang(login) == "zh-hans" and "<h1>登录</h1>" in login
    assert _html_lang(client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="de-DE").text) == "en"
    # The switch is in the header of the login page too, and the choice wins over the browser's.
    client.post(reverse("set_language"), {"language": "en", "next": reverse("login")})
    again = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN").text
    assert _html_lang(again) == "en" and "<h1>Log in</h1>" in again


@pytest.mark.django_db
def test_unknown_language_or_foreign_next_changes_nothing(client):
    response = client.post(reverse("set_language"), {"language": "xx", "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies


def test_catalogue_holds_every_string_marked_for_translation(tmp_path, entries):
    """A string marked in code or templates but never extracted shows in English in the Chinese UI, and the checks
    above cannot see it (they read the catalogue). Extract afresh from a copy of the tree and compare the msgids."""
    base = Path(settings.BASE_DIR)
    ignore = shutil.ignore_patterns(".venv", "var", "__pycache__", ".git", "node_modules", "*.pyc", "tests")
    for name in ("core", "ehr", "scenarios", "annotations", "evaluation", "physreview", "templates", "locale"):
        shutil.copytree(base / name, tmp_path / name, ignore=ignore)
    shutil.copy(base / "manage.py", tmp_path / "manage.py")
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "--no-wrap", "--no-obsolete"],
        cwd=tmp_path,
        env={**os.environ, "PHYSREVIEW_VAR_DIR": str(tmp_path / "var")},
        check=True,
        capture_output=True,
    )
    fresh = parse_po((tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8"))
    committed = {(e.msgctxt, e.msgid) for e in entries}
    missing = sorted(e.msgid for e in fresh if e.msgid and (e.msgctxt, e.msgid) not in committed)
    assert not missing, f"marked but not in the catalogue (run makemessages, then translate): {missing}"
