from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The ground floor as a Django app for its models (the LLM response cache, the cache generations)."""

    name = "core"
    verbose_name = "PhysReview core"

    def ready(self) -> None:
        from core.cache_generations import connect_signals

        connect_signals()
