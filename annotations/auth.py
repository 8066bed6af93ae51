"""The authentication backend: Django's ``ModelBackend``, with the user's roles read in the same query.

Every request loads the signed-in user, and the access table (physreview.access) then asks for their
groups: one query each. Here the user row comes with one ``EXISTS`` per role group, which
:func:`annotations.roles.roles_of` reads instead of querying ``user.groups``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

from annotations.roles import ROLE_FLAGS


class RoleLoadingModelBackend(ModelBackend):
    def get_user(self, user_id):
        users = get_user_model()._default_manager.annotate(
            **{flag: Exists(Group.objects.filter(name=name, user=OuterRef("pk"))) for name, flag in ROLE_FLAGS.items()}
        )
        try:
            user = users.get(pk=user_id)
        except users.model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
