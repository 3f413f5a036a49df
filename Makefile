# Two commands do all set-up on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 5000
export FLASK_APP := wsgi.py
STAMP := $(VENV)/.installed

.PHONY: run test install system-deps system-pdf migrate seed serve worker scheduler bench-api bench-screening bench-fairshare load clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# System packages: Chromium for the browser tests, Pango and fonts for WeasyPrint, poppler-utils (pdftotext,
# pdftoppm, pdffonts) to read PDFs back in the tests. The fonts: DejaVu, and Debian's Noto for the scripts DejaVu
# lacks (CJK, Thai, Devanagari, ...), so that a name in any script prints in a PDF report (static/pdf/report.css).
PDF_PACKAGES := libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core fonts-noto-core fonts-noto-cjk
# Vision (app/vision): tesseract for the MRZ, the public-domain OCR-B font for the MRZ reader's glyphs and the
# synthetic documents of the tests.
VISION_PACKAGES := tesseract-ocr tesseract-ocr-eng fonts-ocr-b
VISION_READY := command -v tesseract >/dev/null 2>&1 && test -f /usr/share/fonts/opentype/ocr-b/OCRB.otf
SYSTEM_PACKAGES := chromium poppler-utils $(PDF_PACKAGES) $(VISION_PACKAGES)
# true when Pango and every font family of the report's stack are installed
PDF_READY := ldconfig -p | grep -q libpangoft2-1.0 && fc-list : family | grep -q '^DejaVu Sans' \
	&& fc-list : family | grep -q 'Noto Sans CJK SC' && fc-list : family | grep -q '^Noto Sans Devanagari'
APT_INSTALL := apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v pdftotext >/dev/null 2>&1 || ! ($(PDF_READY)) \
	  || ! ($(VISION_READY)); then \
	  echo "installing system packages ($(SYSTEM_PACKAGES))"; \
	  ($(APT_INSTALL) $(SYSTEM_PACKAGES) >/dev/null) || sudo sh -c '$(APT_INSTALL) $(SYSTEM_PACKAGES)'; \
	fi

# `make run` needs only Pango and fonts (PDF reports), not the browser.
system-pdf:
	@if ! ($(PDF_READY)); then \
	  echo "installing Pango and fonts for PDF reports ($(PDF_PACKAGES))"; \
	  ($(APT_INSTALL) $(PDF_PACKAGES) >/dev/null) || sudo sh -c '$(APT_INSTALL) $(PDF_PACKAGES)' \
	  || echo "warning: install $(PDF_PACKAGES) for PDF reports"; \
	fi

migrate: install
	$(BIN)/flask db upgrade

seed: migrate
	@$(BIN)/flask accounts seed-demo | $(BIN)/python -c 'import json,sys; d=json.load(sys.stdin); print("\n  Portal:  http://127.0.0.1:$(PORT)/login\n  Login:   %s / %s\n  API key: %s\n  API docs: http://127.0.0.1:$(PORT)/api/docs\n" % (d["user_email"], d["password"], d["api_key"]))'

# Serves portal + API; with REDIS_URL set also RQ workers (RQ_WORKERS, default 2) and the scheduler.
# Ctrl-C stops them all.
run: seed system-pdf
	@bash scripts/run.sh $(PORT)

worker: install
	$(BIN)/flask jobs worker

scheduler: install
	$(BIN)/flask jobs scheduler

# The import contracts (pyproject.toml [tool.importlinter]: no cycles, doors over domains over core, the screening
# engine without Flask), then the whole suite on PostgreSQL and Redis (it creates and drops its own database).
test: install system-deps
	$(BIN)/lint-imports --no-cache
	bash scripts/services.sh
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=25

bench-api: install
	$(BIN)/python bench/api_latency.py

bench-screening: install
	$(BIN)/python bench/screening.py

# Issue 24: account A's API latency while account B floods heavy work (docs/performance.md, "Heavy work").
bench-fairshare: install system-pdf
	$(BIN)/python bench/fairshare.py

# The load test of the whole loop (bench/load/README.md): locust is an optional group (`.[load]`), installed here
# only. Results (locust CSVs, HTML report, summary.json, server logs) go to /tmp/load-results/<time>.
USERS ?= 14
RATE ?= 7
DURATION ?= 2m
MONITOR_ENTITIES ?= 0
BACKGROUND_WORKERS ?= 2
MONITOR_PACE ?= 0
LOAD_STAMP := $(VENV)/.installed-load
$(LOAD_STAMP): pyproject.toml $(STAMP)
	$(BIN)/pip install --quiet -e '.[load]'
	touch $(LOAD_STAMP)

load: $(LOAD_STAMP) system-pdf
	$(BIN)/python bench/load/run.py --users $(USERS) --rate $(RATE) --duration $(DURATION) \
	  --monitor-entities $(MONITOR_ENTITIES) --background-workers $(BACKGROUND_WORKERS) \
	  --monitor-pace $(MONITOR_PACE)

clean:
	rm -rf $(VENV) instance .pytest_cache
