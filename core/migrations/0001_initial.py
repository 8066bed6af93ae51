# The LLM response cache moved from the site package (physreview) to core: state only, the table stays.

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("physreview", "0002_cache_table"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
            name='LLMCacheEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('request_hash', models.CharField(max_length=64, unique=True)),
                ('base_url', models.CharField(max_length=500)),
                ('model', models.CharField(db_index=True, max_length=200)),
                ('request', models.JSONField()),
                ('response', models.JSONField()),
                ('prompt_tokens', models.PositiveIntegerField(null=True)),
                ('completion_tokens', models.PositiveIntegerField(null=True)),
                ('cost_usd', models.DecimalField(decimal_places=8, max_digits=14, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'db_table': 'physreview_llmcacheentry',
                'verbose_name': 'LLM cache entry',
                'verbose_name_plural': 'LLM cache entries',
            },
        ),
            ],
            database_operations=[],
        ),
    ]
