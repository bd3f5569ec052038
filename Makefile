# Switchboard — developer entry points. `make run` sets up and starts everything on SQLite;
# `make test` runs every test (Rust on SQLite, plus PostgreSQL/MariaDB when TEST_PG_DSN /
# TEST_MYSQL_DSN are set; the console's unit tests; the browser journey).

SHELL := /bin/bash
CARGO ?= cargo
NPM ?= npm
PORT ?= 3000

.PHONY: help run build release deps deps-test frontend frontend-deps test test-rust test-frontend test-e2e test-compose test-audit test-sdk test-agents agents-deps test-soak soak fuzz fmt lint clean bench bench-logs bench-insn bench-rss link-order

help:
	@echo "make run        install what is missing, build the console and the server, start on :$(PORT) (SQLite)"
	@echo "make test       run every test"
	@echo "make build      debug build of the server"
	@echo "make release    release build of the server and the console"
	@echo "make fmt lint   format / lint Rust and TypeScript"
	@echo "make fuzz       the parser and translator property suites with FUZZ_CASES cases each"
	@echo "make soak       an hour of mixed load on the server, failing on growth or unbalanced books"

## System packages the build links against (OpenSSL, libmariadb) and the Node toolchain.
deps:
	@bash scripts/deps.sh

deps-test:
	@bash scripts/deps.sh test

frontend-deps:
	@if [ ! -d frontend/node_modules ] || [ frontend/package-lock.json -nt frontend/node_modules/.package-lock.json ]; then \
		cd frontend && $(NPM) ci --no-audit --no-fund; \
	fi

frontend: frontend-deps
	cd frontend && $(NPM) run build

build: deps
	$(CARGO) build -p switchboard

release: deps frontend
	$(CARGO) build --release -p switchboard

run: release
	FRONTEND_DIR=frontend/dist PORT=$(PORT) ./target/release/switchboard

test: deps-test test-audit test-rust test-frontend test-e2e test-sdk test-agents test-soak test-compose

# The debug binaries the script tests (test-e2e, test-sdk, test-soak) start. Alone, each builds
# the default server; within `make test` they take the binaries test-rust's `cargo test` built
# (the same command finds them built: the whole workspace once, not a second time with other
# features). That build has the `otel` feature in, inert without OTEL_EXPORTER_OTLP_ENDPOINT.
BIN_BUILD = $(CARGO) build -p switchboard -p switchboard-mock-upstream
test: BIN_BUILD = $(CARGO) build --workspace --all-targets --features switchboard/otel

# The server's `otel` feature (trace export) is compiled into the test build, so that its tests
# run and clippy reads it; it is inert without OTEL_EXPORTER_OTLP_ENDPOINT. Its binaries are
# what test-e2e, test-sdk and test-soak start within `make test` (BIN_BUILD above).
test-rust:
	$(CARGO) test --workspace --all-targets --features switchboard/otel
	$(CARGO) clippy --workspace --all-targets --features switchboard/otel -- -D warnings
	$(CARGO) fmt --all -- --check

test-frontend: frontend-deps
	cd frontend && $(NPM) run lint && $(NPM) test

test-e2e: frontend
	$(BIN_BUILD)
	bash scripts/e2e.sh

test-sdk: ; $(BIN_BUILD) && bash scripts/sdk-e2e.sh

# Real coding agents (Claude Code, Codex, Gemini CLI; tests/e2e_agents/package-lock.json) through
# Anthropic, OpenAI and Gemini channels (docs/providers.md, "Clients"). agents-deps installs
# them with npm ci when the lock changed (about 900 MB of native binaries).
agents-deps:
	@if [ ! -d tests/e2e_agents/node_modules ] || [ tests/e2e_agents/package-lock.json -nt tests/e2e_agents/node_modules/.package-lock.json ]; then \
		cd tests/e2e_agents && $(NPM) ci --no-audit --no-fund; \
	fi

test-agents: agents-deps ; $(BIN_BUILD) && bash scripts/agents-e2e.sh

# The soak test (scripts/soak.py): the debug server and mock upstream under a modest mixed load
# (chat, streams, embeddings, a failing channel, key edits), failing when RSS, threads, open
# files or sockets grow after the warm-up, a request fails unexpectedly or the used quota differs
# from the consume logs. `make test` runs two and a half minutes, a sample every 3 s (40 samples
# after the warm-up; it keeps CI inside its 30 minutes); `make soak` an hour (SOAK_SECONDS to
# change, SOAK_RELEASE=1 for the release build).
test-soak: ; $(BIN_BUILD) && SOAK_SECONDS=150 SOAK_SAMPLE_SECONDS=3 python3 scripts/soak.py

soak:
	$(CARGO) build $(if $(filter-out 0,$(SOAK_RELEASE)),--release) -p switchboard -p switchboard-mock-upstream
	SOAK_RATE=$${SOAK_RATE:-half} python3 scripts/soak.py

# The property-based fuzzing suites (docs/security.md, "Fuzzing") for longer than the bounded
# run of `make test`: FUZZ_CASES cases per property.
FUZZ_CASES ?= 5000
fuzz:
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test -p switchboard-domain --lib -- token:: price::
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test -p switchboard-relay --test fuzz

# The deployment files: docker-compose.yml (docker-compose config) and the Kubernetes manifest
# (checked against the server's configuration, probes and Dockerfile).
test-compose:
	bash scripts/check-compose.sh
	python3 scripts/check-kubernetes.py

## Locked crates against the RustSec advisories kept in deploy/ (offline), and npm audit where
## the registry answers it.
test-audit: frontend-deps
	python3 scripts/audit.py
	bash scripts/npm-audit.sh

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	cd frontend && $(NPM) run lint

clean:
	$(CARGO) clean
	rm -rf frontend/dist frontend/node_modules tests/e2e_agents/node_modules

## Relay benchmark: mock upstream vs nginx vs Switchboard (bench/README.md); writes bench/results/latest.json.
bench:
	bash bench/run.sh

## Instructions per relayed request under callgrind (repeatable on a busy machine; the A/B
## tool for relay-path changes): non-streamed, then streamed. Needs valgrind.
bench-insn:
	@command -v valgrind >/dev/null || (echo "bench-insn: valgrind is missing (apt-get install valgrind)" >&2; exit 1)
	CARGO_PROFILE_RELEASE_DEBUG=line-tables-only $(CARGO) build --release -p switchboard -p switchboard-mock-upstream
	python3 bench/instructions.py
	BENCH_PROFILE_STREAM=1 python3 bench/instructions.py

## Memory across load rounds, by mapping (bench/rss_rounds.py): what "RSS not growing across
## rounds" in `make bench` is made of.
bench-rss:
	$(CARGO) build --release -p switchboard
	$(CARGO) build --release -p switchboard-mock-upstream
	python3 bench/rss_rounds.py

## Rewrites crates/server/relay-path.ld, the code layout of release builds (bench/README.md,
## "Code layout"): after a dependency or toolchain update, or a large change of the relay path.
link-order:
	@command -v valgrind >/dev/null || (echo "link-order: valgrind is missing (apt-get install valgrind)" >&2; exit 1)
	$(CARGO) build --release -p switchboard
	$(CARGO) build --release -p switchboard-mock-upstream
	python3 bench/link_order.py

## Only the log-query benchmark (10 million rows; BENCH_LOG_ROWS to change).
bench-logs:
	$(CARGO) build --release -p switchboard
	python3 bench/logs_bench.py
