"""Signals the review app sends (after commit): later stages (snapshots, evaluation) may listen."""

from django.dispatch import Signal

# kwargs: turn_id: int, status: "approved" | "rejected"
turn_finalised = Signal()
