"""The draft save's gate check loads the other turns lightly: same warnings as the full session."""

import pytest

from annotations import content as tc
from annotations import services
from annotations.services import gates as turn_gates
from scenarios import services as scenario_services


@pytest.fixture
def generated(demo_cohort, reviewers, admin_user):
    run = scenario_services.create_run(backend="rules", seed=1, scenarios=["med_safety"], tiers=[1], n=1)
    session = scenario_services.generate_slot(run_id=run.pk, index=0)
    services.assign(session=session, reviewer=reviewers[0], by=admin_user)
    return session


def _full_warnings(turn, content):
    """The reference: every turn of the session with its full snapshot, steps and observations."""
    session = turn.session
    drafts = {t.index: turn_gates._turn_draft(t, tc.snapshot(turn=t)) for t in session.turns.exclude(pk=turn.pk)}
    drafts[turn.index] = turn_gates._turn_draft(turn, content)
    draft = turn_gates.session_draft(session=session, turns=[drafts[i] for i in sorted(drafts)])
    return [
        {"gate": f.gate, "message": f.message}
        for gate in turn_gates.TURN_GATES
        for f in gate(draft)
        if f.turn == turn.index
    ]


def _later_number(session, index):
    """A number only a later turn's observations hold (must not ground an earlier answer)."""
    from scenarios.generation.numbers import numbers_in

    earlier = set()
    for t in session.turns.filter(index__lte=index):
        for s in t.steps.all():
            earlier |= numbers_in(s.arguments) | numbers_in(s.observation)
    for t in session.turns.filter(index__gt=index):
        for s in t.steps.all():
            if late := sorted(numbers_in(s.observation) - earlier):
                return late[0]
    return None


def test_light_gate_check_matches_the_full_session(generated):
    checked = with_warnings = 0
    for turn in generated.turns.select_related("session").order_by("index"):
        content = tc.snapshot(turn=turn)
        late = _later_number(generated, turn.index)
        edits = [
            content,
            {**content, "answer_en": content["answer_en"] + " 987.5 mg", "subtype": "PE" if turn.index else "NA"},
            {**content, "request_implicit_en": content["request_explicit_en"], "rubric": content["rubric"][:1]},
        ]
        if late is not None:
            edits.append({**content, "answer_en": f"{content['answer_en']} {late}"})
        for proposed in edits:
            light = turn_gates.turn_warnings(turn=turn, content=proposed)
            assert light == _full_warnings(turn, proposed), (turn.index, proposed)
            checked += 1
            with_warnings += bool(light)
    assert checked >= 12 and with_warnings >= 8
