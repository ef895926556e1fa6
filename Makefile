# Two commands matter: `make test` and `make search Q="..."`. Both set everything up first.
# `make search` installs serpfuse alone; `make test` adds the dev extra (ruff, pytest, the client libraries).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
# `make install` links serpfuse into PREFIX/bin (a directory on your PATH; ~/.local/bin on most systems).
PREFIX ?= $(HOME)/.local
SERPFUSE_DATA ?= ../shared/data
export SERPFUSE_DATA

.PHONY: setup test lint search bench bench-perf install screenshots clean

$(BIN)/pip:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/pip
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(BIN)/pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(RUN_STAMP) $(DEV_STAMP)

setup: $(DEV_STAMP)

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/lint-imports

test: $(DEV_STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/lint-imports
	$(BIN)/pytest -q

search: $(RUN_STAMP)
	@test -n "$(Q)" || { echo 'usage: make search Q="your query" [ARGS="--replay FILE --json"]' >&2; exit 2; }
	$(BIN)/serpfuse search "$(Q)" $(ARGS)

bench: $(RUN_STAMP)
	$(BIN)/serpfuse bench $(ARGS)

# Issue 12's performance table, measured now (minutes); ARGS="--baseline ../other/src --markdown" adds before/after.
bench-perf: $(RUN_STAMP)
	$(BIN)/serpfuse bench --perf $(ARGS)

install: $(RUN_STAMP)
	mkdir -p "$(PREFIX)/bin"
	ln -sf "$(abspath $(BIN)/serpfuse)" "$(PREFIX)/bin/serpfuse"
	@echo "serpfuse -> $(PREFIX)/bin/serpfuse$$(case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo " (not on your PATH: add $(PREFIX)/bin to it)";; esac)"

# The README's pictures of the web page: the browser tests, saving their screenshots under docs/.
screenshots: $(DEV_STAMP)
	SERPFUSE_SCREENSHOTS=docs $(BIN)/pytest -q tests/test_page_browser.py

clean:
	rm -rf $(VENV) build dist *.egg-info src/*.egg-info .pytest_cache .ruff_cache
