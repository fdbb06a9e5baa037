# make demo: create .venv if needed, install, run the sincos walkthrough
# make bench: every workload of benchmarks/ side by side as a Markdown table (numpy, minitorch eager
#             and compiled, torch eager and torch.compile when torch is importable: the `bench`
#             extra, never installed here), then the training steps of real models;
#             make bench QUICK=1 for a short run
# make bench-cuda: the GPU benchmark: sincos, softmax, layernorm compiled for "cuda"
#             against a device copy and cupy; without a GPU it says why it skipped and exits 0
# make fuzz N=10000: the differential fuzzer, N random programs compiled vs eager
# make test: install the dev extras, run ruff (lint and format), lint-imports (the direction of
#            imports between the stages; contracts in pyproject.toml) and the whole suite on
#            Python 3.11, then the bytecode-capture tests on 3.12 and 3.13 where those exist

# A working Python 3.11 if this machine has one, else python3.
PYTHON ?= $(or $(shell sh scripts/find_python.sh 3.11),python3)
VENV := .venv
PIP_FLAGS := --quiet --disable-pip-version-check
CAPTURE_TESTS := tests/tracer/dynamo

.PHONY: demo test lint core-test course-test capture-versions bench bench-cuda fuzz clean

$(VENV)/.installed: pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install $(PIP_FLAGS) -e .
	touch $@

# The browser tests (tests/browser) drive the system's Chromium: installed here where missing
# and possible (Debian's package, as root); else they skip and say why.
$(VENV)/.dev-installed: $(VENV)/.installed
	$(VENV)/bin/python -m pip install $(PIP_FLAGS) -e '.[dev]'
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  apt-get install -y -qq chromium >/dev/null 2>&1 || \
	  echo "no chromium and apt-get could not install it: tests/browser will skip"
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/python -m minitorch.compile examples/sincos.py

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache --no-logo

# The whole suite on 3.11 in the foreground; on the other core, at the same time, the core
# alone (MINITORCH_CORE=1: every extra off) through the conformance suite, the examples and the
# models, the course's graders (tests/course), then the capture tests on 3.12 and 3.13. Their
# output follows the suite's.
test: lint
	$(VENV)/bin/python --version
	@$(MAKE) --no-print-directory core-test course-test capture-versions > .test-others.log 2>&1 & others=$$!; \
	  $(VENV)/bin/python -m pytest --ignore=tests/course; suite=$$?; \
	  wait $$others; rest=$$?; cat .test-others.log; rm -f .test-others.log; \
	  test $$suite -eq 0 && test $$rest -eq 0

# The compiler with every extra off ([Note: the core and its extras] in minitorch/config.py)
core-test: $(VENV)/.dev-installed
	@echo "the core alone (MINITORCH_CORE=1): conformance, examples, models"
	MINITORCH_CORE=1 $(VENV)/bin/python -m pytest -p no:cacheprovider tests/conformance \
	  tests/test_examples.py tests/models

# The course's graders, each graded on its reference and on broken variants (docs/assignments.md)
course-test: $(VENV)/.dev-installed
	@echo "the course's graders: references full marks, broken variants failed"
	$(VENV)/bin/python -m pytest -p no:cacheprovider tests/course

# The capture frontend reads CPython bytecode, which changes with every version: run its tests
# on each supported interpreter that this machine has, each in a venv of its own.
capture-versions:
	@for v in 3.12 3.13; do \
	  py=$$(sh scripts/find_python.sh $$v); \
	  if [ -z "$$py" ]; then echo "capture tests on Python $$v: SKIPPED (no python$$v found)"; continue; fi; \
	  venv=.venv-$$v; \
	  test -x $$venv/bin/python || $$py -m venv $$venv || exit 1; \
	  $$venv/bin/python -m pip install $(PIP_FLAGS) -e '.[dev]' || exit 1; \
	  echo "capture tests on Python $$v ($$py):"; \
	  $$venv/bin/python -m pytest $(CAPTURE_TESTS) || exit 1; \
	done

bench: $(VENV)/.installed
	$(VENV)/bin/python benchmarks/bench.py $(if $(QUICK),--quick)
	$(VENV)/bin/python benchmarks/train_step.py $(if $(QUICK),--repeat 2 --min-time 0.05)
	$(VENV)/bin/python benchmarks/partitioners.py $(if $(QUICK),--rounds 3)
	$(VENV)/bin/python benchmarks/model_steps.py $(if $(QUICK),--quick)

bench-cuda: $(VENV)/.installed
	$(VENV)/bin/python benchmarks/bench_cuda.py

# Random programs compiled by every backend and compared with eager (tests/fuzz/README.md):
# make fuzz N=10000 SEED=0
N ?= 1000
SEED ?= 0
fuzz: $(VENV)/.installed
	$(VENV)/bin/python -m tests.fuzz --n $(N) --seed $(SEED)

clean:
	rm -rf $(VENV) .venv-3.12 .venv-3.13 *.egg-info .pytest_cache .ruff_cache
