PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: the runtime alone (make run: what serving needs, about 60 packages) and the
# developers' tools on top of it (make install, test, lint, ...: pytest, Playwright,
# schemathesis, moto, mypy, cosmic-ray, matplotlib). Installing the tools marks the
# runtime installed too.
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime

.PHONY: install chromium run quickstart test lint types pytest fuzz mutate bench sdk clean

$(RUNTIME_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $(RUNTIME_STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUNTIME_STAMP)

install: $(STAMP)

run: $(RUNTIME_STAMP)
	$(BIN)/officehub serve $(if $(PORT),--port $(PORT))

# The README walkthrough against a running server:
#   make quickstart OFFICEHUB_URL=http://127.0.0.1:8000 OFFICEHUB_API_KEY=ohk_...
quickstart:
	OFFICEHUB_URL=$(OFFICEHUB_URL) OFFICEHUB_API_KEY=$(OFFICEHUB_API_KEY) examples/quickstart.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports

types: $(STAMP)
	$(BIN)/mypy

# Browser tests drive Debian's Chromium (no downloaded browser); installed where missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		{ $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -q && \
		  DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -q chromium; }

pytest: $(STAMP) chromium
	$(BIN)/pytest

test: lint types pytest

# Schemathesis with 100 examples per operation and every phase (make test runs 3), and the
# hostile-input suite with 25 Hypothesis examples (make test runs 1).
fuzz: $(STAMP)
	OFFICEHUB_FUZZ_EXAMPLES=100 OFFICEHUB_HOSTILE_EXAMPLES=25 $(BIN)/pytest -p no:cacheprovider -s \
		tests/test_schemathesis.py tests/test_hostile_input.py

# Mutation testing (cosmic-ray) of the rule modules against their own tests, in a scratch
# copy under .mutate/; prints killed / survived per target and each survivor's diff. A
# session resumes where its budget ran out; after a change to the tests only the survivors
# run again. Two targets at a time (MUTATE_JOBS), one per core of a 2-core machine; the
# targets marked postgresql need the test PostgreSQL (OFFICEHUB_MUTATE_DATABASE_URL).
# docs/testing.md holds the last report.
#   make mutate MUTATE=ssrf MUTATE_BUDGET=480   (targets: scripts/mutate.py TARGETS)
MUTATE ?=
MUTATE_BUDGET ?= 600
MUTATE_JOBS ?= 2
mutate: $(STAMP)
	$(BIN)/python scripts/mutate.py --budget $(MUTATE_BUDGET) --jobs $(MUTATE_JOBS) $(MUTATE)

# Every script under bench/ with quick settings; rewrites the generated section of
# docs/performance.md and its plots under docs/img/ (PostgreSQL at 127.0.0.1:5432).
bench: $(STAMP)
	$(BIN)/python -m bench.report

# Clients generated from the OpenAPI document into build/sdk/: Python (openapi-python-client)
# and TypeScript types (openapi-typescript, fetched by npx from the npm registry).
SDK := build/sdk
sdk: $(STAMP)
	mkdir -p $(SDK)
	$(BIN)/officehub openapi --output $(SDK)/openapi.json
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/openapi-python-client generate --path $(SDK)/openapi.json \
		--output-path $(SDK)/python --overwrite --config scripts/openapi-python-client.yaml
	npx --yes openapi-typescript@7 $(SDK)/openapi.json -o $(SDK)/typescript/officehub.d.ts

clean:
	rm -rf $(VENV) data build .mutate .pytest_cache .mypy_cache .ruff_cache
