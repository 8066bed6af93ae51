"""Shared fixtures of the EHR tests."""

import pytest

from tests.ehr.factories import build_record


@pytest.fixture
def rec(db):
    """The hand-built record of :func:`tests.ehr.factories.build_record`."""
    return build_record()
