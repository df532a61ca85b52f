# Two commands on a fresh machine (see README.md):
#   make demo    -> installs into .venv if needed, then runs the CPU experiment (`verl-focal demo`)
#   make test    -> installs into .venv if needed, then runs the test suite (what CI runs)
#   make test-fast -> the suite without the e2e and `slow` tests (minutes of real main_ppo on CPU), for local work
#   make lint    -> ruff (rules in pyproject.toml [tool.ruff]); CI runs it before the tests
# The install step is shared and re-runs only when pyproject.toml changes.
PYTHON     ?= python3
VENV       ?= .venv
# A CPU wheel on these machines; set TORCH_SPEC to your CUDA build elsewhere (or "" to keep yours).
TORCH_SPEC ?= torch==2.13.0
STAMP      := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
PYTEST_ARGS ?=
ARGS       ?=

.PHONY: install demo test test-fast lint bench

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	if [ -n "$(TORCH_SPEC)" ]; then $(VENV)/bin/python -m pip install -q "$(TORCH_SPEC)"; fi
	$(VENV)/bin/python -m pip install -q -e ".[test]"
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(VENV)/bin/verl-focal demo $(ARGS)

test: $(STAMP)
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -m "not e2e and not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check verl_focal tests bench conftest.py

bench: $(STAMP)
	$(VENV)/bin/python bench/focal_bench.py
