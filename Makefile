# Two commands on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed

.PHONY: demo test lint format bench clean schema

$(STAMP): requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

demo: $(STAMP)
	$(PY) manage.py demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache  # the layers of docs/architecture.md (pyproject.toml [tool.importlinter])

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The whole suite on whatever DATABASE_URL points at (SQLite file by default, PostgreSQL in CI).
# pytest exits 5 when it collected no test; make treats that as a failure like any non-zero code.
test: lint schema
	@echo "make test: DATABASE_URL=$${DATABASE_URL:-(unset: SQLite test file under $${PHYSREVIEW_VAR_DIR:-var})}" \
		"CELERY_BROKER_URL=$${CELERY_BROKER_URL:-(unset: worker tests skipped)}"
	$(VENV)/bin/pytest

# The API's OpenAPI schema must generate and validate without a single warning (drf-spectacular).
schema: $(STAMP)
	$(PY) manage.py spectacular --validate --fail-on-warn --file $$(mktemp -d)/schema.yml

bench: $(STAMP)
	$(PY) bench/import_vs_copy.py
	$(PY) bench/tool_latency.py
	$(PY) bench/export_throughput.py
	$(PY) bench/review_load.py

clean:
	rm -rf $(VENV) var/physreview.sqlite3
