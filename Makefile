# Thin wrapper over scripts/setup, CMake and CTest: the commands the README names.
BUILD_DIR := build
JOBS      := 2
BENCH     := $(BUILD_DIR)/bench/tether_bench
STREAM    := $(BUILD_DIR)/bench/tether_stream_bench
API       := $(BUILD_DIR)/bench/tether_api_bench
ENVB      := $(BUILD_DIR)/bench/tether_env_bench

.PHONY: all setup build build-fuzz build-sanitize sanitize stress test fuzz bench demo demo-cluster e2e package install format tidy clean

all: build

setup:
	@scripts/setup

build: setup
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The libFuzzer targets (fuzz/), built with clang in their own directory.
FUZZ_DIR     := build-fuzz
FUZZ_SECONDS := 60
FUZZ_TARGETS := sse_parser events provider_streams mock_requests config suite answers api_requests
build-fuzz: setup
	cmake --build $(FUZZ_DIR) -j$(JOBS)

# The sanitizer builds (cmake/sanitize.cmake): g++'s AddressSanitizer and
# UndefinedBehaviorSanitizer over the unit and component suites of every
# layer, ThreadSanitizer over those whose code runs threads. A finding fails
# its test. Suppressions (third-party code only, each with its reason) are in
# tests/sanitize/.
ASAN_DIR := build-asan
TSAN_DIR := build-tsan
SANITIZER_ENV := \
  ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_string_checks=1:detect_stack_use_after_return=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitize/lsan.supp \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/sanitize/tsan.supp
build-sanitize: setup
	cmake --build $(ASAN_DIR) -j$(JOBS)
	cmake --build $(TSAN_DIR) -j$(JOBS)

define run_sanitized
	$(SANITIZER_ENV) ctest --test-dir $(ASAN_DIR) --output-on-failure -j$(JOBS)
	$(SANITIZER_ENV) ctest --test-dir $(TSAN_DIR) --output-on-failure -j$(JOBS)
endef
sanitize: build-sanitize
	$(run_sanitized)

# Builds everything and runs every test through CTest (prints the summary
# lines): the g++ build's tests, then each fuzz target's corpus and
# regressions replayed and a few seconds of fuzzing (fuzz.<target>), then
# the sanitizer builds' suites (as make sanitize).
test: build build-fuzz build-sanitize
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)
	ctest --test-dir $(FUZZ_DIR) --output-on-failure -j$(JOBS)
	$(run_sanitized)

# The tests that drive real processes, time or a browser (CTest label
# stress), STRESS_RUNS times beside two CPU hogs (stress-ng): a table of
# test, runs, failures (scripts/stress; logs under stress-results/).
STRESS_RUNS := 10
stress: build
	STRESS_RUNS=$(STRESS_RUNS) JOBS=$(JOBS) scripts/stress $(BUILD_DIR) stress-results

# Runs each fuzz target for FUZZ_SECONDS (two at a time, at nice 19) from
# the corpus in fuzz/corpus/; new inputs stay in build-fuzz/corpus/, crashes
# go to build-fuzz/artifacts/. E.g. make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS=sse_parser
fuzz: build-fuzz
	fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The benchmarks (durable appends and admission, on SQLite and on a throwaway
# PostgreSQL cluster; the native runtime's stream
# relay and step overhead; `tether serve` over HTTP against mock-llm; leases
# and workspace sync against a local sshd and the Daytona test server); JSON
# goes under bench-results/.
bench: setup
	cmake --build $(BUILD_DIR) -j$(JOBS) --target tether_bench tether_stream_bench tether_api_bench tether_env_bench
	@mkdir -p bench-results
	pgdir=$$(mktemp -d /tmp/tether-bench-pg-XXXXXX) && pg=$$(scripts/pg-cluster start $$pgdir) && \
	  { $(BENCH) --out bench-results/append.json --postgres "$$pg"; rc=$$?; \
	    scripts/pg-cluster stop $$pgdir; rm -rf $$pgdir; exit $$rc; }
	$(STREAM) --out bench-results/stream.json
	$(API) --out bench-results/api.json
	$(ENVB) --out bench-results/env.json

# The demo: `tether serve` with the embedded defaults and the built-in
# scripted model (no API key is configured), one session through the HTTP API
# with the CLI: a tool writes a file, the agent answers, the transcript and
# the data directory are printed (scripts/demo).
DEMO_DATA := tether-data
demo: setup
	cmake --build $(BUILD_DIR) -j$(JOBS) --target tether
	scripts/demo $(BUILD_DIR)/src/tether $(DEMO_DATA)

# Two nodes on one PostgreSQL database (a throwaway cluster): the node running
# a turn is killed, the other finishes it (scripts/demo-cluster).
demo-cluster: setup
	cmake --build $(BUILD_DIR) -j$(JOBS) --target tether
	scripts/demo-cluster $(BUILD_DIR)/src/tether

# The API durability test at full length (random SIGKILLs under load;
# E2E_CRASH_ROUNDS rounds), the chaos run of three nodes on one PostgreSQL
# database (tests/cluster/chaos.py, CHAOS_MINUTES, report in
# e2e-results/chaos.json), then the qualification matrix (suites/*.toml):
# every selected cell, then the dashboard and its screenshot under
# e2e-results/. Without --profile it runs every profile the suites list: the
# three native-* ones and the nine agent programs' (per turn: codex-exec,
# claude-print, opencode-run; warm: codex-app-server, claude-stream,
# opencode-serve, acp-codex, acp-claude, acp-opencode), which need their CLIs
# (scripts/install-agents). Narrow the matrix with E2E_ARGS, e.g.
# make e2e E2E_ARGS="--suite persistent-chat --jobs 4" or
# make e2e E2E_ARGS="--profile codex-app-server,acp-claude".
E2E_ARGS :=
E2E_CRASH_ROUNDS := 100
CHAOS_MINUTES := 10
e2e: setup
	cmake --build $(BUILD_DIR) -j$(JOBS) --target tether server_tests
	TETHER_API_CRASH_ROUNDS=$(E2E_CRASH_ROUNDS) $(BUILD_DIR)/tests/server_tests --gtest_filter='ApiDurability.*'
	@mkdir -p e2e-results
	python3 tests/cluster/chaos.py $(BUILD_DIR)/src/tether --minutes $(CHAOS_MINUTES) --out e2e-results/chaos.json
	$(BUILD_DIR)/src/tether e2e run --suites suites --out e2e-results --screenshot $(E2E_ARGS)

# The Debian package (CPack, cmake/package.cmake): build/tether_VERSION_ARCH.deb
# with the stripped binary, man page, completions and systemd unit.
package: build
	cd $(BUILD_DIR) && cpack -G DEB

# Installs the stripped binary, man page, completions and unit under PREFIX.
PREFIX := /usr/local
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX) --strip

format:
	find src tests bench \( -name '*.h' -o -name '*.cpp' \) -print0 | xargs -0 clang-format -i

# Static checks (.clang-tidy); slow: every translation unit is parsed again.
tidy: build
	scripts/tidy

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR) $(ASAN_DIR) $(TSAN_DIR) bench-results stress-results e2e-results $(DEMO_DATA)
