"""Prepare a server process before its first request: compile, load, then freeze what lives forever.

A server process otherwise pays on its first requests for the URLconf, every template it renders
and each UI language's catalogue (a fresh process's first queue page: 810 ms, 32 ms after this). Worse, the
objects made at startup (modules, compiled templates, resolvers: ~190,000 of them) stay in the
cyclic garbage collector's oldest generation, and every full collection walks them all: pauses of
60-130 ms on random requests (bench/review_load.py's tail). ``gc.freeze()`` moves them to a
permanent generation the collector no longer scans; later full collections take a few ms.

Called from ``physreview.wsgi`` (gunicorn workers, runserver), never from tests or commands.
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path

from django.conf import settings
from django.template import TemplateSyntaxError, engines
from django.urls import get_resolver
from django.utils import translation

logger = logging.getLogger(__name__)


def _project_templates() -> list[str]:
    names = []
    for directory in settings.TEMPLATES[0]["DIRS"]:
        root = Path(directory)
        names += [str(p.relative_to(root)) for p in sorted(root.rglob("*.html"))]
    return names


def prepare_process() -> None:
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 (imports every view module)
    for code, _name in settings.LANGUAGES:  # reverse() tables and catalogues are per language
        with translation.override(code):
            resolver.reverse_dict  # noqa: B018
            translation.gettext("Review")
    engine = engines["django"]
    for name in _project_templates():
        try:
            engine.get_template(name)  # the cached loader keeps it for the process
        except TemplateSyntaxError:
            logger.exception("template %s does not compile; it will fail when rendered", name)
    gc.collect()
    gc.freeze()
