# Two commands do all set-up on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 5000
export FLASK_APP := wsgi.py
STAMP := $(VENV)/.installed

.PHONY: run test install system-deps migrate seed serve worker scheduler bench-api bench-screening clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# System packages: Chromium for the browser tests, fonts and Pango for WeasyPrint.
system-deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "installing system packages (chromium, fonts)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null) \
	  || sudo sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core'; \
	fi

migrate: install
	$(BIN)/flask db upgrade

seed: migrate
	@$(BIN)/flask accounts seed-demo | $(BIN)/python -c 'import json,sys; d=json.load(sys.stdin); print("\n  Portal:  http://127.0.0.1:$(PORT)/login\n  Login:   %s / %s\n  API key: %s\n  API docs: http://127.0.0.1:$(PORT)/api/docs\n" % (d["user_email"], d["password"], d["api_key"]))'

# Serves portal + API; with REDIS_URL set also an RQ worker and the scheduler. Ctrl-C stops them all.
run: seed
	@bash scripts/run.sh $(PORT)

worker: install
	$(BIN)/flask jobs worker

scheduler: install
	$(BIN)/flask jobs scheduler

# The whole suite on PostgreSQL and Redis (it creates and drops its own database).
test: install system-deps
	bash scripts/services.sh
	$(BIN)/python -m pytest -q -p no:cacheprovider

bench-api: install
	$(BIN)/python bench/api_latency.py

bench-screening: install
	$(BIN)/python bench/screening.py

clean:
	rm -rf $(VENV) instance .pytest_cache
