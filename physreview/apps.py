from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class PhysreviewConfig(AppConfig):
    """The project package doubles as an app for project-wide commands (``demo``)."""

    name = "physreview"
    verbose_name = "PhysReview"

    def ready(self) -> None:
        from physreview.sqlite import connect_sqlite_tuning

        connect_sqlite_tuning()


class PhysReviewAdminConfig(admin_apps.SimpleAdminConfig):
    """Django's admin with the login throttle of physreview.throttle on its login page.

    The apps' ``admin`` modules are imported with the URLconf (``physreview.urls`` calls
    ``admin.autodiscover()``; servers load it before their first request, physreview.warmup), not at
    every process start: they pull in the snapshot exporters and review services (numpy, pyarrow, the
    rubric compiler), a third of a management command's start-up (issue 37: ``runeval``). The admin's
    system check loads them first, so ``manage.py check`` sees every registration.
    """

    default = False  # the "physreview" entry in INSTALLED_APPS keeps PhysreviewConfig
    default_site = "physreview.throttle.ThrottledAdminSite"

    def ready(self) -> None:
        from django.contrib.admin.checks import check_dependencies
        from django.core import checks

        checks.register(check_dependencies, checks.Tags.admin)
        checks.register(_check_admin_registrations, checks.Tags.admin)


def _check_admin_registrations(app_configs: object = None, **kwargs: object) -> list:
    """``django.contrib.admin.checks.check_admin_app`` after the admin modules are loaded."""
    from django.contrib import admin
    from django.contrib.admin.checks import check_admin_app

    admin.autodiscover()
    return check_admin_app(app_configs, **kwargs)
