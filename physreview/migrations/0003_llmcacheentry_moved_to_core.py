# The LLM response cache now belongs to core (core 0001 takes over the same table): state only.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("physreview", "0002_cache_table"),
        ("core", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="LLMCacheEntry")],
            database_operations=[],
        ),
    ]
