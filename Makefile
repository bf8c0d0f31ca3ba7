# memorypr — everything runs from .venv, created on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test lint web worker beat migrate bench soak clean-data

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
	# The Django plugin loads the settings: an address it never dials keeps them from starting
	# (and leaving behind) the embedded server that a missing DATABASE_URL means.
	DATABASE_URL=$${DATABASE_URL:-postgresql://typecheck@127.0.0.1:1/none} \
		$(VENV)/bin/mypy memorypr reviewer clients/python/src clients/mcp/src clients/langchain/src examples
	$(VENV)/bin/lint-imports --no-cache
	$(PY) scripts/ensure_browser.py
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

migrate: $(VENV)/.installed
	$(PY) manage.py migrate

# Production shape: stateless web nodes, workers and one beat on a shared broker.
# Each needs DATABASE_URL and REDIS_URL (or CELERY_BROKER_URL) in the environment.
web: $(VENV)/.installed
	BIND=$${BIND:-0.0.0.0:$(PORT)} $(VENV)/bin/gunicorn -c memorypr/gunicorn_conf.py memorypr.wsgi:application

worker: $(VENV)/.installed
	$(VENV)/bin/celery -A memorypr worker --loglevel=INFO --concurrency=$${WORKER_CONCURRENCY:-2} --without-gossip --without-mingle

beat: $(VENV)/.installed
	$(VENV)/bin/celery -A memorypr beat --loglevel=INFO --schedule $${BEAT_SCHEDULE:-.data/celerybeat-schedule}

# The peers that bench/sdhr compares against (mem0), installed for benchmarks only.
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	touch $@

# Benchmarks run on their own embedded server under .data/bench-pg, never on the demo data.
bench: $(VENV)/.bench-installed
	MEMORYPR_PGDATA=$(CURDIR)/.data/bench-pg $(PY) manage.py migrate --verbosity 0
	MEMORYPR_PGDATA=$(CURDIR)/.data/bench-pg MEMORYPR_REDIS_DIR=$(CURDIR)/.data/bench-redis $(PY) manage.py bench $(BENCH_ARGS)

# Load and faults against the processes `make run` starts (SOAK_ARGS="--profile scale-out" for the
# production shape). Loopback only; bounded in time.
soak: $(VENV)/.installed
	$(PY) scripts/soak.py $(SOAK_ARGS)
	MEMORYPR_FUZZ_EXAMPLES=200 MEMORYPR_PROPERTY_EXAMPLES=300 $(VENV)/bin/pytest -q \
		tests/common/test_schema_fuzz.py tests/facts/test_merge_properties.py

clean-data:
	rm -rf .data
