from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    name = "annotations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save, pre_save

        from annotations.api.tokens import mark_password_change, revoke_tokens_on_password_change
        from annotations.models import Guideline
        from annotations.selectors import forget_guidelines

        # The review screen's cached guidelines (annotations.selectors.guideline_for).
        post_save.connect(forget_guidelines, sender=Guideline, dispatch_uid="forget-guidelines-save")
        post_delete.connect(forget_guidelines, sender=Guideline, dispatch_uid="forget-guidelines-delete")
        # API tokens are revoked when their user's password changes (annotations.api.tokens).
        user_model = get_user_model()
        pre_save.connect(mark_password_change, sender=user_model, dispatch_uid="token-password-mark")
        post_save.connect(revoke_tokens_on_password_change, sender=user_model, dispatch_uid="token-password-revoke")
