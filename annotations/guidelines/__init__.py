"""Review guidelines: markdown rendered safely, and the shipped defaults (``default_en.md``, ``default_zh.md``).

Guideline text is written by admins, but it is still rendered as untrusted HTML: markdown passes raw
HTML through, so its output is cleaned with nh3 (an allow-list: no scripts, no event handlers, no
``javascript:`` links) before it is marked safe.
"""

from __future__ import annotations

from pathlib import Path

import markdown
import nh3
from django.db import transaction
from django.utils.safestring import SafeString, mark_safe

DEFAULTS_DIR = Path(__file__).resolve().parent
# Guideline.language (a UI language code) → the shipped default text.
DEFAULT_FILES = {"en": DEFAULTS_DIR / "default_en.md", "zh-hans": DEFAULTS_DIR / "default_zh.md"}


def render_markdown(text: str) -> SafeString:
    """``text`` as HTML safe to put in a page: markdown (tables, lists, code) then an nh3 allow-list clean."""
    html = markdown.markdown(text or "", extensions=["extra", "sane_lists"], output_format="html")
    return mark_safe(nh3.clean(html))  # noqa: S308 - cleaned by nh3 just above


def split_title(text: str) -> tuple[str, str]:
    """A default file's first ``# heading`` as the title, the rest as the body."""
    first, _, rest = text.lstrip().partition("\n")
    if first.startswith("# "):
        return first[2:].strip(), rest.strip() + "\n"
    return "Review guidelines", text.strip() + "\n"


@transaction.atomic
def load_guidelines() -> dict[str, str]:
    """Create the default guideline of each language, or refresh one no admin has edited.

    Rows saved in the admin (``updated_by`` set) are never overwritten. Idempotent: a row already
    holding the shipped text is not saved again. Returns ``{language: "created" | "updated" | "kept"}``.
    """
    from annotations.models import Guideline

    outcome = {}
    for language, path in DEFAULT_FILES.items():
        title, body = split_title(path.read_text(encoding="utf-8"))
        row = Guideline.objects.select_for_update().filter(language=language).first()
        if row is None:
            Guideline.objects.create(language=language, title=title, body_markdown=body)
            outcome[language] = "created"
        elif row.updated_by_id is None and (row.title, row.body_markdown) != (title, body):
            row.title, row.body_markdown = title, body
            row.save(update_fields=["title", "body_markdown", "updated"])
            outcome[language] = "updated"
        else:
            outcome[language] = "kept"
    return outcome
