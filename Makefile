# Quick start:  make serve (set up and start the web server: http://127.0.0.1:8000, SQLite ./guandan.db)
#               make test  (set up and run the whole test suite)
#               make play  (set up and play a full game in the terminal)
PYTHON ?= python3
VENV   ?= .venv
PORT   ?= 8000
BIN     = $(VENV)/bin

.PHONY: serve play test test-fast bench simulate setup clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# PyTorch for the training example's tests: the CPU build (2.13.0+cpu is the local wheel here);
	# Ray for the scale-out test on a local Ray instance
	$(BIN)/pip install --quiet 'torch==2.13.0'
	$(BIN)/pip install --quiet -e '.[test,train,ray]'
	touch $@

serve: setup
	$(BIN)/guandan serve --port $(PORT)

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
	rm -rf $(VENV) .pytest_cache .hypothesis build dist src/*.egg-info test-artifacts
