"""Admin building blocks shared by the apps."""

from __future__ import annotations


class ViewOnlyMixin:
    """For a ModelAdmin or an inline: rows can be viewed, never added, changed or deleted here (records, or
    content that only its services may change)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
