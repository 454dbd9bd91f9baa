# mcheck developer targets.  Every target that needs the project installs it first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test lint bench demo soundness readme-image clean

$(STAMP): pyproject.toml checker/values/_native.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## install: a local virtualenv (.venv) with mcheck and its dev tools
install: $(STAMP)

## test: the test suite (under 10 minutes on 2 cores), one pytest worker per core
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto

## lint: ruff, mypy, and the rooms of checker/ importing one way (import-linter)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## soundness: generated specs through every engine against a reference search, for
## SOUNDNESS_BUDGET seconds on every core (about 10,000 specs an hour on 2 cores);
## prints how many ran and every disagreement (its seed; source under build/soundness)
SOUNDNESS_BUDGET ?= 3600
soundness: $(STAMP)
	$(BIN)/python -m tests.soundness --budget $(SOUNDNESS_BUDGET)

## readme-image: take the README's picture of HDDS-16932 again (needs chromium);
## tests/test_readme.py fails while it shows another page than mcheck draws today
readme-image: $(STAMP)
	$(BIN)/python -m tests.readme_image

## bench: throughput and memory on the benchmark specs, against a plain-Python baseline
bench: $(STAMP)
	$(BIN)/python -m bench

## demo: install, then the HDDS-16932 story as reported (leadership moves while F
## downloads a checkpoint): the bug's shortest counterexample, the report's SCM patch
## closing that trace but not the mechanism, the Ratis-side fix blocking it, caught as
## shipped by SCM's own checkpoint field, and holding with SCM told of the abandon
DEMO_SPEC = scm_install_snapshot_leader_change
DEMO_TRACE = build/demo/hdds-16932-bug.itf.json
demo: $(STAMP)
	@mkdir -p build/demo
	@echo "== HDDS-16932 as reported: leadership moves while F downloads a checkpoint"
	@$(BIN)/mcheck run $(DEMO_SPEC) --variant bug --const TIMING=report --trace-out $(DEMO_TRACE); code=$$?; \
	  if [ $$code -ne 12 ]; then echo "expected exit 12 (violation), got $$code"; exit 1; fi; \
	  echo "(exit 12: the bug is real; the trace is in $(DEMO_TRACE))"
	@echo; echo "== the report's SCM patch (fix_scm) on the same trace: it closes this one"
	@$(BIN)/mcheck replay $(DEMO_SPEC) $(DEMO_TRACE) --variant fix_scm; code=$$?; \
	  if [ $$code -ne 1 ]; then echo "expected the patch to change the trace, got $$code"; exit 1; fi
	@echo; echo "== ... but not the mechanism: fix_scm when the download may end at any moment"
	@$(BIN)/mcheck run $(DEMO_SPEC) --variant fix_scm --trace-out build/demo/hdds-16932-fix_scm.itf.json; \
	  code=$$?; if [ $$code -ne 12 ]; then echo "expected exit 12 (violation), got $$code"; exit 1; fi
	@echo; echo "== the Ratis-side fix on the report's trace:"
	@$(BIN)/mcheck replay $(DEMO_SPEC) $(DEMO_TRACE) --variant fix; code=$$?; \
	  if [ $$code -ne 1 ]; then echo "expected the fix to block the trace, got $$code"; exit 1; fi
	@echo; echo "== ... but as shipped it abandons the download while SCM's supplier runs on and sets installingDBCheckpoint:"
	@$(BIN)/mcheck run $(DEMO_SPEC) --variant fix; code=$$?; \
	  if [ $$code -ne 12 ]; then echo "expected exit 12 (violation), got $$code"; exit 1; fi
	@echo; echo "== the fix with SCM told of the abandon, over every reachable state, any timing, a restart of F and a lost message included:"
	@$(BIN)/mcheck run $(DEMO_SPEC) --variant fix_and_scm_guard --const MAX_RESTARTS=1 --const MAX_DROPS=1

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
