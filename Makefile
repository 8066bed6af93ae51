# Two commands on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed

.PHONY: demo test test-sqlite lint format bench clean schema

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

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The whole suite on whatever DATABASE_URL points at (SQLite file by default, PostgreSQL in CI).
# pytest exits 5 when it collected no test; make treats that as a failure like any non-zero code.
test: lint schema
	$(VENV)/bin/pytest

# The API's OpenAPI schema must generate and validate without a single warning (drf-spectacular).
schema: $(STAMP)
	$(PY) manage.py spectacular --validate --fail-on-warn --file $$(mktemp -d)/schema.yml

# Fast job proving the SQLite default works: demo preparation, the importer round trip and the
# review screen (the demo's most used page; SQLite refuses some SQL PostgreSQL accepts), draft saves by two
# editors at once and the results drill-down's safety filter (both answered 500 on SQLite once).
test-sqlite: $(STAMP)
	env -u DATABASE_URL -u CELERY_BROKER_URL PHYSREVIEW_VAR_DIR=$$(mktemp -d) $(PY) manage.py demo --no-serve
	env -u DATABASE_URL -u CELERY_BROKER_URL $(VENV)/bin/pytest tests/ehr tests/annotations/test_views_review.py \
		tests/annotations/test_draft_concurrency.py tests/evaluation/results/test_safety_filter.py -q -m "not celery_worker"

bench: $(STAMP)
	$(PY) bench/import_vs_copy.py
	$(PY) bench/tool_latency.py
	$(PY) bench/export_throughput.py
	$(PY) bench/review_load.py

clean:
	rm -rf $(VENV) var/physreview.sqlite3
