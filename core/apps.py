from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The ground floor as a Django app only for its model (the LLM response cache)."""

    name = "core"
    verbose_name = "PhysReview core"
