# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# `make demo` installs the runtime only; `make test` adds the test extras (linters, pytest).
# Each install says one line; pip's own output goes to $(LOG), its tail shown on failure.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.installed-runtime
STAMP := $(VENV)/.installed
LOG := $(VENV)/install.log

.PHONY: demo test bench fuzz lint clean

# $(call pip,WHAT,ARGS): pip install ARGS quietly into $(LOG); on failure, its tail.
pip = @echo "Installing $(1) into $(VENV) (about a minute the first time; log: $(LOG))"; \
	$(BIN)/python -m pip install $(2) >>$(LOG) 2>&1 || { \
	tail -n 20 $(LOG); echo "make: installing $(1) failed; the whole log: $(LOG)" >&2; exit 1; }

$(BIN)/python:
	@$(PY) -m venv $(VENV)

$(RUNTIME): pyproject.toml | $(BIN)/python
	$(call pip,Operator HUD,-e .)
	@touch $(RUNTIME)

$(STAMP): pyproject.toml | $(BIN)/python
	$(call pip,Operator HUD with its test extras,-e '.[test]')
	@touch $(STAMP) $(RUNTIME)

demo: $(RUNTIME)
	$(BIN)/hud demo

# The checks of `make lint`; `make test` runs them beside the tests.
LINT = $(BIN)/ruff check . && $(BIN)/ruff format --check . \
	&& $(BIN)/mypy store hud cli widgets themes simulator agentside && $(BIN)/lint-imports

lint: $(STAMP)
	$(LINT)

# The lint (mypy: half a minute in a fresh clone) runs while the tests start and run; its
# output follows theirs, and either failing fails the target. The suite starts many Python
# processes (xdist's workers, the real hud in a pty, the CLI): each compiles the project
# and rewrites the test modules anew unless bytecode may be cached, so it may here even
# where PYTHONDONTWRITEBYTECODE is set (a worker's collection: 15 s of CPU, else 5 s).
test: $(STAMP)
	@($(LINT)) >$(VENV)/lint.log 2>&1 & linting=$$!; \
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest; tested=$$?; \
	wait $$linting; linted=$$?; cat $(VENV)/lint.log; \
	if [ $$linted -ne 0 ]; then echo "make: the lint failed (above)" >&2; exit $$linted; fi; \
	exit $$tested

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest tests/store/test_fault_injection.py

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
