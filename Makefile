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

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy store hud cli widgets themes simulator agentside
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest tests/store/test_fault_injection.py

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
