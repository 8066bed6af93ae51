"""Errors users can cause when making or exporting snapshots (each message names the problem)."""


class SnapshotError(ValueError):
    """Bad arguments, an empty selection, an unknown snapshot, format or file."""


class EmptySelection(SnapshotError):
    pass


class UnknownSnapshot(SnapshotError):
    pass


class BuildInProgress(SnapshotError):
    """Another live process holds the snapshot's build (its heartbeat is fresh)."""
