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

.PHONY: setup test lint search bench bench-suite bench-crw56 bench-mq2008 bench-consensus bench-reader bench-robustness \
	bench-cost bench-perf bench-ablation bench-passages install screenshots readme-output docs clean

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
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy

test: $(DEV_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/pytest -q

search: $(RUN_STAMP)
	@test -n "$(Q)" || { echo 'usage: make search Q="your query" [ARGS="--replay FILE --json"]' >&2; exit 2; }
	$(BIN)/serpfuse search "$(Q)" $(ARGS)

# Your own recording and judgments: make bench ARGS="--replay REC.json --qrels JUDGED.jsonl [--strategy all]"
bench: $(RUN_STAMP)
	$(BIN)/serpfuse bench $(ARGS)

# The research benchmarks on the recorded corpora in SERPFUSE_DATA (benchmarks/, run from this directory, not
# installed). ARGS passes through to `python -m benchmarks`; BENCHMARKS.md gives the command of every table.
BENCHMARKS := $(BIN)/python -m benchmarks

bench-crw56: $(RUN_STAMP)
	$(BENCHMARKS) --corpus crw56 $(ARGS)

bench-mq2008: $(RUN_STAMP)
	$(BENCHMARKS) --corpus mq2008 $(ARGS)

bench-consensus: $(RUN_STAMP)
	$(BENCHMARKS) --corpus consensus $(ARGS)

# the page reader against the other extractors (the dev extra installs them)
bench-reader: $(DEV_STAMP)
	$(BENCHMARKS) --corpus article-extraction $(ARGS)

# passage selection under a budget on $(SERPFUSE_DATA)/passages beside first-N and BM25 (the dev extra has bm25s)
bench-passages: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.passages $(ARGS)

# one ranker-robustness experiment: ARGS="--misspelled", "--garbage-engine bing", "--generic-rows bing",
# "--corpus mq2008 --garbage-engine r9" or "--corpus mq2008 --random-subsets 14 --strategy all"
bench-robustness: $(RUN_STAMP)
	@test -n "$(ARGS)" || { echo 'usage: make bench-robustness ARGS="--misspelled | --garbage-engine NAME | --generic-rows NAME | --corpus mq2008 --random-subsets N"' >&2; exit 2; }
	$(BENCHMARKS) $(ARGS)

# what the content signals add to the ranking step, A/B in one process (seconds)
bench-cost: $(RUN_STAMP)
	$(BENCHMARKS) --signal-cost $(ARGS)

# every strategy against the best plain method on every corpus and setup, the default chosen cross-validated
bench-suite: $(RUN_STAMP)
	$(BIN)/python -m benchmarks.suite $(ARGS)

# every rule and knob of the default switched off alone, on every corpus and robustness setup (minutes)
bench-ablation: $(RUN_STAMP)
	$(BIN)/python -m benchmarks.ablation $(ARGS)

# The "real output" blocks of README.md and docs/*.md, each made again by running the command it names on the
# recording in SERPFUSE_DATA (tests/test_readme.py fails when one is stale)
readme-output: $(RUN_STAMP)
	$(BIN)/python tests/readme_output.py --write

# the performance table, measured now (minutes); ARGS="--baseline ../other/src --markdown" adds before/after
bench-perf: $(RUN_STAMP)
	$(BENCHMARKS) --perf $(ARGS)

install: $(RUN_STAMP)
	mkdir -p "$(PREFIX)/bin"
	ln -sf "$(abspath $(BIN)/serpfuse)" "$(PREFIX)/bin/serpfuse"
	@echo "serpfuse -> $(PREFIX)/bin/serpfuse$$(case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo " (not on your PATH: add $(PREFIX)/bin to it)";; esac)"

# The docs' pictures of the web page and the judging page: the browser tests, saving their screenshots under docs/.
screenshots: $(DEV_STAMP)
	SERPFUSE_SCREENSHOTS=docs $(BIN)/pytest -q tests/test_page_browser.py tests/test_judge_browser.py

# The documentation site from docs/ into site/ (strict: a broken link fails; tests/test_docs.py builds it too)
docs: $(DEV_STAMP)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build dist *.egg-info src/*.egg-info .pytest_cache .ruff_cache site
