# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench fuzz lint clean

$(BIN)/python:
	@echo "Installing Operator HUD into $(VENV) (first run, about a minute)..."
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# pip shows its progress on a first install in a terminal; a log or a reinstall stays quiet.
$(STAMP): pyproject.toml | $(BIN)/python
	@quiet=--quiet; [ -t 1 ] && [ ! -e $(STAMP) ] && quiet=; \
	$(BIN)/python -m pip install $$quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/hud demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy store hud widgets themes simulator agentside
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest tests/store/test_fault_injection.py

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
