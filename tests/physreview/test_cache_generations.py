"""core.cache_generations (issue 36, F10): database counters that cached things put in their keys, so that an
invalidation made in any process (a server worker, a management command) reaches every process. The
cross-process behaviour of the review screen is in tests/annotations/test_review_caches_processes.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from core.cache_generations import bump, generation
from ehr.importer import import_mimic_directory
from ehr.selectors import record_generation
from tests.annotations.conftest import make_user
from tests.ehr import mimic_files as mf
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def test_a_generation_starts_at_zero_and_moves_with_each_bump():
    assert generation("t-gen") == 0
    bump("t-gen")
    bump("t-gen")
    assert generation("t-gen") == 2 and generation("t-other") == 0


def test_a_rolled_back_bump_does_not_move_it():
    bump("t-gen")
    with pytest.raises(RuntimeError), transaction.atomic():
        bump("t-gen")
        assert generation("t-gen") == 2  # the writing transaction sees its own bump
        raise RuntimeError
    assert generation("t-gen") == 1


def test_one_query_per_request_and_a_fresh_read_outside_requests(client):
    """In a request the generations are read once (the review screen reads four); outside a request
    (commands, tasks: long-running processes) every read asks the database, so none keeps an old value."""
    turn = complete_session().turns.get(index=0)
    client.force_login(make_user("gen_adj", "adjudicator"))
    with CaptureQueriesContext(connection) as inside:
        assert client.get(reverse("annotations:turn", args=[turn.pk])).status_code == 200
    assert len([q for q in inside if "core_cachegeneration" in q["sql"]]) == 1
    with CaptureQueriesContext(connection) as outside:
        generation("a"), generation("a")
    assert len(outside) == 2


def test_an_ehr_import_moves_the_record_generation(tmp_path: Path):
    """The review screens' evidence and admission header are cached per record generation."""
    before = record_generation()
    root = tmp_path / "mimic"
    mf.write_table(root, "d_labitems", [{"itemid": 95050, "label": "Zanamivir Level", "fluid": "Blood"}])
    report = import_mimic_directory(root=root, tables=["d_labitems"], rejects_dir=tmp_path / "rejects")
    assert report.ok, report.outcome_line()
    assert record_generation() == before + 1
