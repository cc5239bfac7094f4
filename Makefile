# Build/install plumbing for naivegraph.
#
# Everything runs inside a project-local virtualenv (.venv) populated by pip
# alone. `make lab` installs what a learner needs (the `notebook` extra);
# `make test` adds the test and export tools to the same venv. Each stamp depends
# on pyproject.toml, so a re-run is a no-op until the dependencies change.
# Neither touches a tracked file: the tour draws into the ignored work/ folder,
# and the committed figures change only with `make figures`.

PYTHON ?= python3

VENV  := .venv
BIN   := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
SITE_STAMP := $(VENV)/.installed-site

# torch is only a test oracle. Pin it exactly: a looser spec would let pip
# pick a newer torch from the registry, which drags in GBs of CUDA packages.
TORCH_SPEC  := torch==2.13.0
TORCH_STAMP := $(VENV)/.torch

PYTEST_ARGS ?=

# The readable path alone: the dynamic and static suites and the differential fuzzers
# again with every speed trick of naivegraph/fast/ switched off (results must not change).
READABLE_TESTS := tests/dynamic tests/static tests/fuzz/test_against_torch.py \
	tests/fuzz/test_aliasing_hooks_special_values.py tests/fuzz/test_static_vs_dynamic.py

.PHONY: lab test test-readable lint figures notebooks onnx-docs site bench clean

lab: $(STAMP)
	$(BIN)/naivegraph tour
	@echo "lessons: $(BIN)/naivegraph lessons   (JupyterLab on your copy in work/; or activate: . $(BIN)/activate)"

test: $(TEST_STAMP) $(TORCH_STAMP) lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)
ifeq ($(PYTEST_ARGS),)
	$(MAKE) --no-print-directory test-readable
endif

# Lint and format (ruff) and a type check of the op table, static mode and its export (mypy).
lint: $(TEST_STAMP)
	$(BIN)/python -m ruff check naivegraph tests benchmarks
	$(BIN)/python -m ruff format --check naivegraph tests benchmarks
	$(BIN)/python -m mypy

test-readable: $(TEST_STAMP) $(TORCH_STAMP)
	NAIVEGRAPH_FAST=0 $(BIN)/python -m pytest -q -p no:cacheprovider $(READABLE_TESTS)

# docs/onnx_ops.md, the ONNX map as a table (tests/export checks that it is up to date).
onnx-docs: $(STAMP)
	$(BIN)/python -m naivegraph.export > docs/onnx_ops.md

# The figures README shows; the animations the lessons show go into the course.
figures: $(STAMP)
	$(BIN)/naivegraph figures --out figures --course-out naivegraph/course/figures

# The lesson notebooks, from their sources in naivegraph/course/src (jupytext).
notebooks: $(TEST_STAMP)
	$(BIN)/python -m naivegraph.course.build

# The course website in build/site/ (index.html first): README, executed lessons, API.
site: $(SITE_STAMP)
	$(BIN)/python docs/site/build_site.py build/site

bench: $(TEST_STAMP) $(TORCH_STAMP)
	$(BIN)/python benchmarks/run_all.py

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -e '.[notebook]'
	# the lessons' kernel ("python3") is this venv's Python, also for a JupyterLab elsewhere
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (naivegraph)"
	touch $@

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install -e '.[notebook,dev,export,site,teacher]'
	touch $@

$(SITE_STAMP): $(STAMP)
	$(BIN)/python -m pip install -e '.[notebook,site]'
	touch $@

# The attempt is recorded whether or not it succeeds, so an offline machine
# does not wait on the registry on every run; the stamp says which outcome
# happened. Remove $(TORCH_STAMP) (or `make clean`) to try again.
$(TORCH_STAMP): $(TEST_STAMP)
	@if $(BIN)/python -m pip install --only-binary=torch '$(TORCH_SPEC)'; then \
		echo installed > $@; \
	else \
		echo unavailable > $@; \
	fi
	@if grep -qx unavailable $@; then \
		echo "notice: $(TORCH_SPEC) could not be installed; tests that compare against torch will skip"; \
	fi

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
