"""Dashboard: permissions per role, figures equal the selectors' and ``review_agreement``'s, chart, query count."""

from __future__ import annotations

import html
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotations import selectors, services
from annotations.content import snapshot
from annotations.models import RejectReason, TurnState
from scenarios.models import Scenario
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db

URL = "/review/dashboard/"
SCENARIOS = ("med_safety", "diagnostic_workup", "treatment_response", "discharge_planning")
REASONS = ("unsafe", "false_premise", "translation_error")
STATUS_ORDER = (
    TurnState.DRAFT,
    TurnState.IN_REVIEW,
    TurnState.NEEDS_ADJUDICATION,
    TurnState.APPROVED,
    TurnState.REJECTED,
    TurnState.NEEDS_CONFIRMATION,  # an approved turn edited since (issue 32)
)


def _generate(n_sessions: int, reviewers, adjudicator, admin):
    """Sessions over scenarios and tiers, each assigned to a pair of reviewers and reviewed through the services.

    Per session, by turn index: 0 both approve; 1 both reject (same reason); 2 they disagree (then the
    adjudicator rejects it in every other session); 3 the second reviewer drops a rubric item. With more
    than one session the last stays unassigned (draft), with more than two the one before is unreviewed."""
    for i in range(n_sessions):
        session = complete_session(scenario=SCENARIOS[i % len(SCENARIOS)], tier=1 + i % 3)
        if i == n_sessions - 1 and n_sessions > 1:
            continue
        first, second = reviewers[i % len(reviewers)], reviewers[(i + 1) % len(reviewers)]
        for reviewer in (first, second):
            services.assign(session=session, reviewer=reviewer, by=admin)
        if i == n_sessions - 2 and n_sessions > 2:
            continue  # assigned, nobody has reviewed yet: in review
        reason = REASONS[i % len(REASONS)]
        for turn in session.turns.order_by("index"):
            rubric = snapshot(turn=turn)["rubric"]
            turn.refresh_from_db()
            if turn.index == 1:
                for reviewer in (first, second):
                    services.submit_review(
                        turn=turn, reviewer=reviewer, decision="reject", reject_reason=reason, base_version=1
                    )
                continue
            services.submit_review(turn=turn, reviewer=first, decision="approve", base_version=turn.version)
            if turn.index == 2:
                services.submit_review(
                    turn=turn, reviewer=second, decision="reject", reject_reason="unsafe", base_version=turn.version
                )
                if i % 2 == 0:
                    turn.refresh_from_db()
                    services.adjudicate(
                        turn=turn,
                        adjudicator=adjudicator,
                        chosen="b",
                        decision="reject",
                        reject_reason="not_grounded",
                        base_version=turn.version,
                    )
            elif turn.index == 3:
                services.submit_review(
                    turn=turn, reviewer=second, decision="approve", proposed={"rubric": rubric[:1]}, base_version=1
                )
            else:
                services.submit_review(turn=turn, reviewer=second, decision="approve", base_version=turn.version)


@pytest.fixture
def people(db):
    reviewers = [make_user(f"rev{i}", "reviewer") for i in (1, 2, 3)]
    adjudicator = make_user("adj", "adjudicator")
    admin = make_user("boss", "admin")
    return {"reviewers": reviewers, "adjudicator": adjudicator, "admin": admin}


def _table(text: str, table_id: str) -> list[list[str]]:
    """Cell texts of the body rows of the table with ``table_id``."""
    match = re.search(rf'<table[^>]*id="{table_id}".*?<tbody>(.*?)</tbody>', text, re.S)
    assert match, f"no table {table_id}"
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", match.group(1), re.S)
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
        for r in rows
    ]


def _expected_rows(counts, label=str):
    return sorted(
        [label(group), *(str(by_status.get(s, 0)) for s in STATUS_ORDER), str(sum(by_status.values()))]
        for group, by_status in counts.items()
        if group is not None
    )


def test_login_required(client):
    response = client.get(URL)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert reverse("annotations:dashboard") == URL


def test_nav_link_on_every_page(client, people):
    client.force_login(people["reviewers"][0])
    response = client.get(reverse("annotations:queue"))
    assert f'href="{URL}">Dashboard</a>' in response.text


@pytest.mark.parametrize("role", ["adjudicator", "admin"])
def test_adjudicators_and_admins_see_everyone(client, people, role):
    _generate(5, people["reviewers"], people["adjudicator"], people["admin"])
    client.force_login(people[role])
    text = client.get(URL).text
    assert [row[0] for row in _table(text, "by-reviewer")] == ["rev1", "rev2", "rev3"]
    for table_id in ("by-scenario", "by-tier", "rejected-by-reason", "agreement-decisions", "agreement-rubric"):
        assert f'id="{table_id}"' in text
    assert 'id="alpha-decisions"' in text and 'id="status-chart"' in text
    assert 'id="adjudication-count"' in text


def test_reviewer_sees_only_own_figures(client, people):
    _generate(5, people["reviewers"], people["adjudicator"], people["admin"])
    rev1 = people["reviewers"][0]
    client.force_login(rev1)
    response = client.get(URL)
    assert response.status_code == 200
    text = response.text
    assert [row[0] for row in _table(text, "by-reviewer")] == ["rev1"]
    assert _table(text, "by-reviewer") == _expected_rows(
        {"rev1": selectors.status_counts(by="session__assignments__reviewer__username")["rev1"]}
    )
    for pair in _table(text, "agreement-decisions") + _table(text, "agreement-rubric"):
        assert "rev1" in pair[:2]
    for hidden in ("by-scenario", "by-tier", "rejected-by-reason", "status-chart", "alpha-decisions"):
        assert f'id="{hidden}"' not in text
    my_queue = re.search(r'id="my-queue"><strong>(\d+)</strong>', text)
    assert my_queue and int(my_queue.group(1)) == selectors.review_queue(user=rev1).count()


def test_reviewer_with_nothing_yet(client, people):
    client.force_login(people["reviewers"][0])
    text = client.get(URL).text
    assert _table(text, "by-reviewer") == [["rev1", "0", "0", "0", "0", "0", "0", "0"]]
    assert "No reviewer pair yet." in text


def test_figures_equal_selectors(client, people):
    _generate(7, people["reviewers"], people["adjudicator"], people["admin"])
    # The generated data covers every status, so the comparison means something.
    everywhere = {s for counts in selectors.status_counts(by="session__tier").values() for s in counts}
    assert everywhere == set(STATUS_ORDER) - {TurnState.NEEDS_CONFIRMATION}  # no approved turn edited here
    client.force_login(people["adjudicator"])
    text = client.get(URL).text

    by_reviewer = selectors.status_counts(by="session__assignments__reviewer__username")
    assert sorted(_table(text, "by-reviewer")) == _expected_rows(by_reviewer)
    labels = dict(Scenario.choices)
    scenario_rows = _table(text, "by-scenario")
    assert len(scenario_rows) == len(SCENARIOS)
    assert sorted(scenario_rows) == _expected_rows(selectors.status_counts(by="session__scenario"), labels.get)
    assert sorted(_table(text, "by-tier")) == _expected_rows(
        selectors.status_counts(by="session__tier"), lambda tier: f"L{tier}"
    )

    rejected = {row[0]: int(row[1]) for row in _table(text, "rejected-by-reason")}
    expected = selectors.rejected_by_reason()
    assert rejected == {dict(RejectReason.choices)[reason]: n for reason, n in expected.items()}
    assert "not grounded in the record" in rejected

    my_queue = re.search(r'id="my-queue"><strong>(\d+)</strong>', text)
    assert my_queue and int(my_queue.group(1)) == 0
    adjudication = re.search(r'id="adjudication-count"><strong>(\d+)</strong>', text)
    assert adjudication and int(adjudication.group(1)) == selectors.adjudication_queue().count() > 0


def _command_output(capsys) -> dict[str, dict]:
    """``review_agreement``'s output parsed: per section, units, pair rows and alpha."""
    call_command("review_agreement")
    out = capsys.readouterr().out
    sections: dict[str, dict] = {}
    current = None
    for line in out.splitlines():
        if match := re.match(r"^(decisions|rubric) .*: (\d+) units$", line):
            current = sections.setdefault(match.group(1), {"units": match.group(2), "pairs": []})
        elif match := re.match(r"^\s+Krippendorff's alpha \(nominal\): (\S+)$", line):
            current["alpha"] = match.group(1)
        elif line.strip() and not line.strip().startswith("reviewer A"):
            current["pairs"].append(line.split())
    return sections


def test_agreement_equals_review_agreement_command(client, people, capsys):
    _generate(7, people["reviewers"], people["adjudicator"], people["admin"])
    expected = _command_output(capsys)
    assert len(expected["decisions"]["pairs"]) == 3 and expected["decisions"]["alpha"] != "—"
    client.force_login(people["admin"])
    text = client.get(URL).text
    for key, section in expected.items():
        assert _table(text, f"agreement-{key}") == section["pairs"]
        assert f"{section['units']} units" in text
        alpha = re.search(rf'id="alpha-{key}">.*?<strong>(.*?)</strong>', text)
        assert alpha and alpha.group(1) == section["alpha"]


def test_chart_is_inline_svg_of_status_per_scenario(client, people):
    _generate(5, people["reviewers"], people["adjudicator"], people["admin"])
    client.force_login(people["adjudicator"])
    text = client.get(URL).text
    svg = re.search(r'<svg class="status-chart" id="status-chart".*?</svg>', text, re.S)
    assert svg, "no inline SVG chart"
    assert "<script" not in text.split("</header>", 1)[1]
    assert "cdn" not in text.lower()
    bars = re.findall(r'<g class="bar">(.*?)</g>', svg.group(0), re.S)
    counts = selectors.status_counts(by="session__scenario")
    assert len(bars) == len(counts)
    drawn = {
        (status, int(n))
        for bar in bars
        for status, n in re.findall(r'data-status="(\w+)"><title>[^<]*: (\d+)</title>', bar)
    }
    assert drawn == {(status, n) for by_status in counts.values() for status, n in by_status.items()}


# session + user + groups, then the page's selectors (adjudicators also get scenario, tier, rejections, queue),
# and the gold audit's totals line (one aggregate).
@pytest.mark.parametrize(("role", "queries"), [("reviewer", 7), ("adjudicator", 12)])
def test_query_count_is_constant(client, people, django_assert_max_num_queries, role, queries):
    user = people["reviewers"][0] if role == "reviewer" else people[role]
    client.force_login(user)
    _generate(1, people["reviewers"], people["adjudicator"], people["admin"])
    with django_assert_max_num_queries(queries):
        assert client.get(URL).status_code == 200
    _generate(8, people["reviewers"], people["adjudicator"], people["admin"])
    with django_assert_max_num_queries(queries):
        assert client.get(URL).status_code == 200
