# mcheck developer targets.  Every target that needs the project installs it first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test lint bench demo clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## install: a local virtualenv (.venv) with mcheck and its dev tools
install: $(STAMP)

## test: the test suite (under 10 minutes on 2 cores)
test: $(STAMP)
	$(BIN)/python -m pytest -q

## lint: ruff and mypy
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## bench: throughput and memory on the benchmark specs, against a plain-Python baseline
bench: $(STAMP)
	$(BIN)/python -m bench

## demo: install, then check the die_hard spec and show its counterexample
demo: $(STAMP)
	@$(BIN)/mcheck run die_hard; code=$$?; \
	  if [ $$code -ne 12 ]; then echo "expected exit 12 (violation), got $$code"; exit 1; fi; \
	  echo "(exit 12: invariant violated, as expected for this puzzle)"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
