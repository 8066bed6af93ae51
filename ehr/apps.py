from django.apps import AppConfig


class EhrConfig(AppConfig):
    name = "ehr"
    verbose_name = "EHR (MIMIC-IV layout)"
    default_auto_field = "django.db.models.BigAutoField"
