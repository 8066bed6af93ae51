from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class PhysreviewConfig(AppConfig):
    """The project package doubles as an app for project-wide commands (``demo``)."""

    name = "physreview"
    verbose_name = "PhysReview"

    def ready(self) -> None:
        from physreview.sqlite import connect_sqlite_tuning

        connect_sqlite_tuning()


class PhysReviewAdminConfig(admin_apps.AdminConfig):
    """Django's admin with the login throttle of physreview.throttle on its login page."""

    default = False  # the "physreview" entry in INSTALLED_APPS keeps PhysreviewConfig
    default_site = "physreview.throttle.ThrottledAdminSite"
