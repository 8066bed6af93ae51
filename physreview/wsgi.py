import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "physreview.settings")
application = get_wsgi_application()

from physreview.warmup import prepare_process  # noqa: E402 (needs the apps loaded above)

prepare_process()
