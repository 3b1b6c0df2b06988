# Two commands: `make demo` (the main job) and `make test` (the whole check).
# Both create .venv on first use and install what they need into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
RSTAMP := $(VENV)/.installed-run
# A second environment with the 2026-07-21 baseline SDKs for the conformance tests.
BASE   := .venv-baseline
BSTAMP := $(BASE)/.installed-baseline

.PHONY: test lint typecheck demo clean test-baseline fuzz crash-matrix

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "callgate needs Python >= 3.11 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The demo needs only the server and HTTP extras.
$(RSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[server,http]'
	touch $(RSTAMP)

$(BSTAMP): pyproject.toml
	$(PYTHON) -m venv $(BASE)
	$(BASE)/bin/python -m pip install --quiet --upgrade pip
	$(BASE)/bin/python -m pip install --quiet -e '.[server,http,test,sdk-baseline]'
	touch $(BSTAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# The suite runs twice: normally, and with asserts stripped and warnings as errors,
# which proves no check relies on `assert`. pytest exits 5 when it collects no test,
# and make stops on that like on any failure.
test: lint typecheck
	$(BIN)/python -m pytest
	$(BIN)/python -O -W error -m pytest
	$(MAKE) test-baseline

# The official-SDK conformance tests again, against the 2026-07-21 baseline SDKs.
BASELINE_TESTS = tests/mock/test_mock_sdk_conformance.py tests/mock/test_mock_ggc_sdk_conformance.py \
  tests/mock/test_mock_hosted_openai_sdk.py \
  tests/mock/test_mock_hosted_anthropic_sdk.py
BASELINE_TESTS += tests/mock/test_mock_hosted_interactions_sdk.py tests/gemini_interactions/test_hosted_sdk_fields.py
BASELINE_TESTS += tests/test_cli_serve_urls.py tests/mock/test_mock_sessions.py
BASELINE_TESTS += tests/mock/test_mock_fixtures_sdk.py tests/mock/test_mock_faults_points_sdk.py
BASELINE_TESTS += tests/mock/test_mock_hosted_ggc_sdk.py
BASELINE_TESTS += tests/mock/test_mock_aux_sdk.py tests/mock/test_mock_ggc_signatures.py
BASELINE_TESTS += tests/mock/test_mock_request_sdk_property.py tests/mock/test_mock_request_spec_drift.py
test-baseline: $(BSTAMP)
	$(BASE)/bin/python -m pytest $(BASELINE_TESTS)
	$(BASE)/bin/python -O -W error -m pytest $(BASELINE_TESTS)

# The mutation fuzzer of tests/fuzz for minutes with a fresh seed (it runs for a few
# seconds with a fixed seed inside `make test`). Override CALLGATE_FUZZ_SECONDS/_SEED.
CALLGATE_FUZZ_SECONDS ?= 300
CALLGATE_FUZZ_SEED ?= $(shell date +%s)
fuzz: $(STAMP)
	CALLGATE_FUZZ_SECONDS=$(CALLGATE_FUZZ_SECONDS) CALLGATE_FUZZ_SEED=$(CALLGATE_FUZZ_SEED) \
	  $(BIN)/python -m pytest tests/fuzz -q -s -p no:cacheprovider

# The ledger's crash matrix in full: every fault point x effect class x store, and on the
# model side every point of the host loop x effect class x store x protocol mode (1,092 cells).
crash-matrix: $(STAMP)
	CALLGATE_CRASH_MATRIX=full $(BIN)/python -m pytest -q \
	  tests/ledger/test_ledger_crash.py tests/ledger/test_ledger_crash_loop.py

demo: $(RSTAMP)
	$(BIN)/callgate demo

clean:
	rm -rf $(VENV) $(BASE) .pytest_cache .mypy_cache .ruff_cache .hypothesis
