# Quick start:  make serve (set up and start the web server: http://127.0.0.1:8000, SQLite ./guandan.db)
#               make test  (set up and run the whole test suite)
#               make play  (set up and play a full game in the terminal)
PYTHON ?= python3
VENV   ?= .venv
PORT   ?= 8000
BIN     = $(VENV)/bin

.PHONY: serve play test test-fast bench simulate setup setup-train clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# training extra (guandan train): the CPU build of PyTorch first (a plain `torch` may fetch a CUDA build)
setup-train: setup
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[train,test]'

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
