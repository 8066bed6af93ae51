"""Review screens: thin views over annotations.services / selectors, object permissions in every view.

A user may open a turn when they are assigned to its session or are an adjudicator/admin; anyone
else gets a 404. HTMX endpoints answer 200 with a banner for errors and conflicts (htmx 2 does not
swap 4xx responses).
"""

from annotations.views.actions import approve, comment, discard_draft, edit, merge, reject
from annotations.views.adjudication import adjudicate
from annotations.views.confirmation import confirm
from annotations.views.dashboard import dashboard
from annotations.views.done import done, undo
from annotations.views.history import history
from annotations.views.leases import lease, release_lease
from annotations.views.review import queue, review_turn, step_raw
from annotations.views.start import home

__all__ = [
    "adjudicate",
    "approve",
    "comment",
    "confirm",
    "dashboard",
    "discard_draft",
    "done",
    "edit",
    "history",
    "home",
    "lease",
    "merge",
    "queue",
    "reject",
    "release_lease",
    "review_turn",
    "step_raw",
    "undo",
]
