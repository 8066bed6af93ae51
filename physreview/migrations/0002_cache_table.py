"""The database cache's table (login throttle counters), when CACHES uses the database (the default)."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    # A no-op when CACHE_URL points at Redis; `manage.py createcachetable` makes it after a switch back.
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("physreview", "0001_initial")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
