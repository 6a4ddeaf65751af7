# evalbayes: `make demo` sets everything up and runs the main job; `make test` runs the tests.
VENV ?= .venv
PY := $(VENV)/bin/python
# the runtime dependencies (what `make demo` needs), and the test and lint tools on top
RUNTIME := $(VENV)/.installed-runtime
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-fast lint bench clean

# scripts/install: uv where it can be had (much faster), else pip; the editable package's own
# sources compiled too (where PYTHONDONTWRITEBYTECODE is set every command recompiled them:
# ~0.1 CPU-s each, benchmarks/speed/default_fit.md)
$(RUNTIME): pyproject.toml constraints.txt
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	scripts/install $(VENV) -c constraints.txt -e .
	@$(PY) -m compileall -q src
	@touch $(RUNTIME)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	scripts/install $(VENV) -c constraints.txt -e ".[dev]"
	@$(PY) -m compileall -q src
	@touch $(RUNTIME) $(STAMP)

setup: $(STAMP)

demo: $(RUNTIME)
	$(VENV)/bin/evalbayes demo

test: $(STAMP)
	$(VENV)/bin/pytest -n 2 --dist loadgroup -q

test-fast: $(STAMP)
	$(VENV)/bin/pytest -n 2 --dist loadgroup -q -m "not slow"

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
