"""The ground floor: what every app uses and nothing of the domain (the LLM client, text templates, text cleaning,
cache helpers, the code version, admin mixins). It imports no app of the project; settings are read through
``django.conf.settings``. The layer contract in pyproject.toml (``[tool.importlinter]``) enforces it."""
