"""Review services (writes). One module per concern; the common entry points are re-exported here.

Locking: every write that reads a turn's state first locks the turn row with
``select_for_update(no_key=True)`` (PostgreSQL ``FOR NO KEY UPDATE``; SQLite: the IMMEDIATE
transaction). Two writers of one turn queue on it; inserts that merely reference the turn
(comments, reviews, revisions, leases: a ``FOR KEY SHARE`` foreign-key check) do not wait for it.
"""

from annotations.services.adjudication import adjudicate
from annotations.services.assignment import assign, distribute
from annotations.services.comments import add_comment
from annotations.services.confirmation import confirm_edit, confirmation_queue, revert_edit
from annotations.services.edits import merge, pending_conflicts, save_turn_edit, unapplied
from annotations.services.errors import Conflict, DraftConflict, InvalidState, LeaseHeld, PermissionDenied
from annotations.services.leases import acquire_lease, release, renew
from annotations.services.reviews import save_draft_review, submit_review

__all__ = [
    "Conflict",
    "DraftConflict",
    "InvalidState",
    "LeaseHeld",
    "PermissionDenied",
    "acquire_lease",
    "add_comment",
    "adjudicate",
    "assign",
    "confirm_edit",
    "confirmation_queue",
    "distribute",
    "merge",
    "pending_conflicts",
    "release",
    "renew",
    "revert_edit",
    "save_draft_review",
    "save_turn_edit",
    "submit_review",
    "unapplied",
]
