from django.apps import AppConfig


class PhysreviewConfig(AppConfig):
    """The project package doubles as an app for project-wide commands (``demo``)."""

    name = "physreview"
    verbose_name = "PhysReview"
