from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EhrConfig(AppConfig):
    name = "ehr"
    verbose_name = _("EHR (MIMIC-IV layout)")
    default_auto_field = "django.db.models.BigAutoField"
