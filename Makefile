# Forge: every set-up step lives here so that `make run` and `make test` work on
# a fresh machine. Python runs from a project-local virtualenv (.venv).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
GEN_PY := clients/python/forge/v1
PROTOS := $(wildcard proto/forge/v1/*.proto)

HOST ?= 127.0.0.1
PORT ?= 50051
RUN_ARGS ?=

.PHONY: install proto proto-check lint format test test-python run clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Regenerate every language's stubs from proto/. Outputs are committed.
proto: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/gen_proto.sh

# Fails when the committed stubs differ from what proto/ generates.
proto-check: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/gen_proto.sh --check

lint: $(STAMP)
	cd proto && ../$(BIN)/buf lint
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test-python: $(STAMP)
	$(BIN)/pytest -ra

test: proto-check lint test-python

run: $(STAMP)
	$(BIN)/forge-server --host $(HOST) --port $(PORT) $(RUN_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
