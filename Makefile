# Quick start:  make serve (set up and start the web server: http://127.0.0.1:8000, SQLite ./guandan.db)
#               make serve HOST=0.0.0.0  (friends on the same network can join: http://<this machine's IP>:8000)
#               make serve HOST=0.0.0.0 PUBLIC_URL=http://192.168.1.20:8000  (the address put in invite links)
#               make test  (set up and run the whole test suite)
#               make play  (set up and play a full game in the terminal)
PYTHON ?= python3
VENV   ?= .venv
PORT   ?= 8000
HOST   ?= 127.0.0.1
PUBLIC_URL ?=
BIN     = $(VENV)/bin

.PHONY: serve play test test-soak test-fast bench simulate setup setup-run setup-train setup-full clean

# setup: the package and the test tools (make test); setup-run: the package only (make serve, make play)
setup: $(VENV)/.installed

setup-run: $(VENV)/.installed-run

$(VENV)/.installed: pyproject.toml
	@echo "Setting up $(VENV): pyguandan and its test tools (the first run downloads packages: a minute or two; later runs skip this)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed-run

$(VENV)/.installed-run: pyproject.toml
	@echo "Setting up $(VENV): pyguandan and what it needs to run (the first run downloads packages: about a minute; later runs skip this)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

# training extra (guandan train): the CPU build of PyTorch first (a plain `torch` may fetch a CUDA build)
setup-train: setup
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[train,test]'

# everything CI runs: training (PyTorch, CPU build) and Ray for the scale-out tests on a local Ray instance
setup-full: setup-train
	$(BIN)/pip install --quiet -e '.[train,test,ray]'

serve: setup-run
	$(BIN)/guandan serve --host $(HOST) --port $(PORT) $(if $(PUBLIC_URL),--public-url $(PUBLIC_URL))

play: setup-run
	$(BIN)/guandan play

# the tests run on one pytest-xdist worker per logical CPU (at most 4; TEST_WORKERS=0: one
# process, as collected); each module runs whole on one worker, the long ones first (tests/conftest.py)
TEST_WORKERS ?= logical
PYTEST_PARALLEL = -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile --no-loadscope-reorder

# the suite but the two soak runs (marker soak), which `make test-soak` runs and CI runs after it
test: setup
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "not soak"

test-soak: setup
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m soak

test-fast: setup
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "not slow"

bench: setup
	$(BIN)/guandan bench

simulate: setup
	$(BIN)/guandan simulate --games 50

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist src/*.egg-info test-artifacts
