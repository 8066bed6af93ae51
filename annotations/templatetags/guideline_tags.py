"""``{{ text|guideline_markdown }}``: review guidelines markdown as cleaned HTML (see annotations.guidelines)."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from annotations.guidelines import render_markdown_cached

register = template.Library()


@register.filter
def guideline_markdown(text: str) -> SafeString:
    return render_markdown_cached(text)
