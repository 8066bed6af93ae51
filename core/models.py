"""Ground-floor models: the LLM response cache (used by every app that calls a model) and the cache generations."""

from django.db import models


class LLMCacheEntry(models.Model):
    """One successful chat-completion response, keyed by the sha256 of the full canonical request.

    The request is kept (without any credential) so an entry can be inspected; the usage of the
    original call is kept so re-runs can report what the cache saved.
    """

    request_hash = models.CharField(max_length=64, unique=True)
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200, db_index=True)
    request = models.JSONField()
    response = models.JSONField()
    prompt_tokens = models.PositiveIntegerField(null=True)
    completion_tokens = models.PositiveIntegerField(null=True)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "physreview_llmcacheentry"  # created by physreview 0001; moved here with no schema change
        verbose_name = "LLM cache entry"
        verbose_name_plural = "LLM cache entries"

    def __str__(self) -> str:
        return f"{self.model} {self.request_hash[:12]}"


class CacheGeneration(models.Model):
    """A named counter that cached things put in their keys (:mod:`core.cache_generations`): kept in the
    database, so a bump in any process (a server worker, a management command) reaches every process."""

    name = models.CharField(max_length=64, primary_key=True)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name} = {self.value}"
