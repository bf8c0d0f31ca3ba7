# memorypr — everything runs from .venv, created on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test lint web worker beat migrate bench clean-data

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

run: $(VENV)/.installed
	$(PY) scripts/run.py --port $(PORT)

test: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy memorypr reviewer
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

migrate: $(VENV)/.installed
	$(PY) manage.py migrate

# Production shape: stateless web nodes, workers and one beat on a shared broker.
web: $(VENV)/.installed
	$(VENV)/bin/gunicorn memorypr.wsgi:application --bind 0.0.0.0:$(PORT) --workers $${WEB_CONCURRENCY:-4} --access-logfile -

worker: $(VENV)/.installed
	$(VENV)/bin/celery -A memorypr worker --loglevel=INFO --concurrency=$${WORKER_CONCURRENCY:-2}

beat: $(VENV)/.installed
	$(VENV)/bin/celery -A memorypr beat --loglevel=INFO

# Benchmarks run on their own embedded server under .data/bench-pg, never on the demo data.
bench: $(VENV)/.installed
	MEMORYPR_PGDATA=$(CURDIR)/.data/bench-pg $(PY) manage.py migrate --verbosity 0
	MEMORYPR_PGDATA=$(CURDIR)/.data/bench-pg $(PY) manage.py bench $(BENCH_ARGS)

clean-data:
	rm -rf .data
