from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    name = "annotations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from annotations.models import Guideline
        from annotations.selectors import forget_guidelines

        # The review screen's cached guidelines (annotations.selectors.guideline_for).
        post_save.connect(forget_guidelines, sender=Guideline, dispatch_uid="forget-guidelines-save")
        post_delete.connect(forget_guidelines, sender=Guideline, dispatch_uid="forget-guidelines-delete")
