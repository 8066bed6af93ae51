"""physreview.warmup: a server process compiles its templates and freezes its startup objects."""

from __future__ import annotations

import gc

from django.template import engines

from physreview.warmup import _project_templates, prepare_process


def test_prepare_process_compiles_every_project_template_and_freezes_the_startup_objects():
    loader = engines["django"].engine.template_loaders[0]
    while not hasattr(loader, "get_template_cache"):  # template_partials wraps Django's cached loader
        loader = loader.loaders[0]
    loader.reset()
    names = _project_templates()
    assert "annotations/review.html" in names and "base.html" in names
    try:
        prepare_process()
        compiled = {key.split("-")[0] for key in loader.get_template_cache}
        assert set(names) <= compiled
        assert gc.get_freeze_count() > 10_000  # modules, classes, compiled templates
    finally:
        gc.unfreeze()
