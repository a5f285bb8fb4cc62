# Quick start:  make play  (set up and play a full game in the terminal)
#               make test  (set up and run the whole test suite)
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: play test test-fast bench simulate setup clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

play: setup
	$(BIN)/guandan play

test: setup
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

bench: setup
	$(BIN)/guandan bench

simulate: setup
	$(BIN)/guandan simulate --games 50

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist src/*.egg-info
