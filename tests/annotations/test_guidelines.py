"""Review guidelines: safe markdown rendering, per-language lookup, shipped defaults, admin editing, the partial."""

import pytest
from django.core.management import call_command
from django.template.loader import render_to_string
from django.urls import reverse

from annotations.guidelines import DEFAULT_FILES, load_guidelines, render_markdown, split_title
from annotations.models import Guideline
from annotations.selectors import guideline_for
from tests.annotations.conftest import make_user

XSS = """# Title

<script>alert('x')</script>
<img src="x" onerror="alert('img')">
[click](javascript:alert('link'))
<a href="#" onclick="alert('a')">a</a>
<iframe src="https://example.com"></iframe>
<div style="background:url(javascript:alert(1))">styled</div>
"""


def test_render_markdown_formats_and_keeps_it_safe():
    html = render_markdown("## Check\n\n- **grounding**\n- `dose`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "<h2>Check</h2>" in html and "<strong>grounding</strong>" in html and "<code>dose</code>" in html
    assert "<table>" in html and "<td>1</td>" in html


def test_render_markdown_makes_an_xss_payload_inert():
    html = str(render_markdown(XSS)).lower()
    for bad in ("<script", "alert('x')", "onerror", "onclick", "javascript:", "<iframe", "style="):
        assert bad not in html, bad
    assert "<h1>title</h1>" in html and "styled" in html


def test_guideline_for_falls_back_to_english(db):
    assert guideline_for(language="en") is None
    en = Guideline.objects.create(language="en", title="Guide", body_markdown="x")
    assert guideline_for(language="zh-hans") == en
    zh = Guideline.objects.create(language="zh-hans", title="指南", body_markdown="x")
    assert guideline_for(language="zh-hans") == zh
    assert guideline_for(language="zh-Hans") == zh and guideline_for(language="zh") == zh
    assert guideline_for(language="en-us") == en and guideline_for(language="fr") == en


def test_load_guidelines_creates_then_keeps_admin_edits(db):
    assert load_guidelines() == {"en": "created", "zh-hans": "created"}
    assert load_guidelines() == {"en": "kept", "zh-hans": "kept"}
    en = Guideline.objects.get(language="en")
    title, body = split_title(DEFAULT_FILES["en"].read_text(encoding="utf-8"))
    assert (en.title, en.body_markdown) == (title, body) and "false premise" in body.lower()
    assert Guideline.objects.get(language="zh-hans").title == "审核指南"
    # An untouched row follows the shipped text; one an admin saved is never overwritten.
    Guideline.objects.filter(language="zh-hans").update(body_markdown="old default")
    en.body_markdown, en.updated_by = "Our own rules", make_user("editor", "admin")
    en.save()
    assert load_guidelines() == {"en": "kept", "zh-hans": "updated"}
    assert Guideline.objects.get(language="en").body_markdown == "Our own rules"


@pytest.mark.parametrize("path", sorted(DEFAULT_FILES.values()))
def test_default_guidelines_cover_what_reviewers_check(path):
    text = path.read_text(encoding="utf-8")
    title, body = split_title(text)
    assert title and body.count("\n## ") >= 6
    html = str(render_markdown(body))
    assert "<table>" in html and "<li>" in html
    keywords = ("current date", "false premise", "safety", "tool", "translation", "unnatural wording")
    if "zh" in path.name:
        keywords = ("当前日期", "错误前提", "安全", "工具", "翻译", "措辞不自然")
    for word in keywords:
        assert word in body.lower(), word


def test_partial_renders_guideline_with_edit_link_for_staff(db, rf):
    Guideline.objects.create(language="zh-hans", title="审核指南", body_markdown="**核对**<script>x()</script>")
    guideline = guideline_for(language="zh-hans")  # the cached row, with its cleaned html
    reviewer = make_user("rev", "reviewer")
    html = render_to_string("annotations/_guidelines.html", {"guideline": guideline, "user": reviewer})
    assert "审核指南" in html and "<strong>核对</strong>" in html and "<script" not in html
    assert 'lang="zh-hans"' in html  # as <html lang> for the UI language
    edit_url = reverse("admin:annotations_guideline_change", args=[guideline.pk])
    assert edit_url not in html
    staff = make_user("boss", "admin")
    staff.is_staff = True
    html = render_to_string("annotations/_guidelines.html", {"guideline": guideline, "user": staff})
    assert edit_url in html
    empty = render_to_string("annotations/_guidelines.html", {"guideline": None, "user": reviewer})
    assert "No guidelines" in empty


def test_admin_edits_guideline_and_records_who(client, db):
    load_guidelines()
    admin = make_user("root", "admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    guideline = Guideline.objects.get(language="en")
    url = reverse("admin:annotations_guideline_change", args=[guideline.pk])
    page = client.get(url)
    assert page.status_code == 200 and b"<h2>" in page.content  # the rendered preview
    response = client.post(url, {"language": "en", "title": "Guide v2", "body_markdown": "Check **doses**."})
    assert response.status_code == 302, response.content[:2000]
    guideline.refresh_from_db()
    assert (guideline.title, guideline.body_markdown, guideline.updated_by) == ("Guide v2", "Check **doses**.", admin)


def test_load_guidelines_command(db, capsys):
    call_command("load_guidelines")
    call_command("load_guidelines")
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in out] == [
        ["en", "created"],
        ["zh-hans", "created"],
        ["en", "kept"],
        ["zh-hans", "kept"],
    ]
