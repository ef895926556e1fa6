# Two commands matter: `make test` and `make search Q="..."`. Both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SERPFUSE_DATA ?= ../shared/data
export SERPFUSE_DATA

.PHONY: setup test lint search bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

test: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/pytest -q

search: $(STAMP)
	@test -n "$(Q)" || { echo 'usage: make search Q="your query" [ARGS="--replay FILE --json"]' >&2; exit 2; }
	$(BIN)/serpfuse search "$(Q)" $(ARGS)

bench: $(STAMP)
	$(BIN)/serpfuse bench $(ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info src/*.egg-info .pytest_cache .ruff_cache
