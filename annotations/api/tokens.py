"""API tokens end with the password they were issued under (issue 36; OWASP ASVS 3.3.3).

``User.set_password`` keeps the new raw password on the instance until the next ``save()``; that is how a
password change is told from any other save (a login's ``last_login``, or Django re-hashing the same password
with a newer hasher, which clears it first). The user's tokens are deleted when such a save is done:
scripts then need ``manage.py api_token`` again.
"""

from __future__ import annotations

from typing import Any

from rest_framework.authtoken.models import Token


def mark_password_change(sender: type, instance: Any, **kwargs: Any) -> None:
    """pre_save: note whether this save stores a password set by ``set_password``."""
    instance._physreview_password_changed = getattr(instance, "_password", None) is not None


def revoke_tokens_on_password_change(sender: type, instance: Any, **kwargs: Any) -> None:
    """post_save: delete the user's API tokens after a password change."""
    if getattr(instance, "_physreview_password_changed", False):
        instance._physreview_password_changed = False
        Token.objects.filter(user=instance).delete()
