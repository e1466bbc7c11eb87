# FluxBus — every command a user or CI needs. `make test` is what CI runs (.ci/run).
SWIFT ?= swift
VENV  := .venv
PYTHON ?= python3
# pyzmq's wheels bundle their own libzmq; pinned so that every machine runs the same.
PYZMQ := 27.3.0

.PHONY: deps deps-system deps-python test verify-deploy example docs demo build release release-smoke bench fuzz simulate clean

# Install what a fresh Debian machine with Swift lacks: libzmq and SQLite (and pkg-config to find them), and a virtual
# environment .venv with pyzmq for the end-to-end tests' foreign worker.
deps: deps-system deps-python

deps-system:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libzmq || ! pkg-config --exists sqlite3 || ! command -v sqlite3 >/dev/null 2>&1 || ! command -v strace >/dev/null 2>&1 || ! command -v tmux >/dev/null 2>&1; then \
		echo "==> installing libzmq3-dev, libsqlite3-dev, sqlite3 (for log backups), strace (SyncTests traces the coordinator's fsyncs), tmux (TopTests drive fluxbus top in a real terminal) and pkg-config with apt"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libzmq3-dev libsqlite3-dev sqlite3 strace tmux pkg-config; \
	fi
	@pkg-config --modversion libzmq | sed 's/^/==> libzmq /'
	@pkg-config --modversion sqlite3 | sed 's/^/==> sqlite3 /'

deps-python:
	@if ! $(VENV)/bin/python -c 'import zmq' >/dev/null 2>&1; then \
		echo "==> creating $(VENV) with pyzmq $(PYZMQ) (for the Python worker in Tests/ForeignWorker)"; \
		rm -rf $(VENV) && $(PYTHON) -m venv $(VENV) && \
		$(VENV)/bin/pip install --quiet --disable-pip-version-check 'pyzmq==$(PYZMQ)'; \
	fi
	@$(VENV)/bin/python -c 'import zmq; print("==> pyzmq", zmq.__version__, "in $(VENV)")'

build: deps-system
	$(SWIFT) build

release: deps-system
	$(SWIFT) build -c release

# The whole test suite, one test at a time: CPU-bound tests (the fuzzer) would otherwise starve the two threads
# of the cooperative pool that the networked tests need. The SimulationTests module runs beside the rest in a
# process of its own at the lowest CPU priority, on the CPU the networked tests leave idle (scripts/test-suites.sh).
# Deterministic hashing makes a simulation seed replay exactly in another process too (Dictionary order would
# otherwise change from run to run).
test: deps
	$(SWIFT) build --build-tests
	@$(MAKE) --no-print-directory verify-deploy
	@$(MAKE) --no-print-directory example
	@$(MAKE) --no-print-directory docs
	scripts/test-suites.sh $(SWIFT)
	$(MAKE) fuzz
	@$(MAKE) --no-print-directory release-smoke

# The optimized build is what users run, and the tests run the debug one: an optimizer-only defect (a release build
# once crashed on a runtime exclusivity check at its first dispatch, which every test passed) shows here. Every
# bench scenario, small, with the release binary: it fails on a scenario that fails, never on a figure.
release-smoke:
	$(SWIFT) build -c release --product fluxbus
	.build/release/fluxbus bench --quick

# docs/GUIDE.md part 7's package of your own, Examples/TodoSync, built as a user builds it: a package of its own in
# $(EXAMPLE)/TodoSync, with FluxBus by `.package(path: "../FluxBus")`, a link to this checkout. The build must print
# no warning (the libzmq flags SwiftPM refuses would print one), and its client must not link GRDB, ServiceLifecycle or
# the coordinator (their symbols, by nm); then run.sh runs its worker and client against this
# checkout's `fluxbus coordinator`. Needs `swift build` first, for .build/debug/fluxbus. On a fresh clone it builds
# FluxBus and its dependencies again, in its own folder: 80 to 93 s on a 2-core machine; 6 s once built.
EXAMPLE := .build-example
example:
	mkdir -p $(EXAMPLE)/TodoSync
	ln -sfn "$(CURDIR)" $(EXAMPLE)/FluxBus
	rm -rf $(EXAMPLE)/TodoSync/Sources
	cp -R Examples/TodoSync/Package.swift Examples/TodoSync/Sources Examples/TodoSync/run.sh $(EXAMPLE)/TodoSync/
	cd $(EXAMPLE)/TodoSync && { $(SWIFT) build > build.log 2>&1; status=$$?; cat build.log; exit $$status; }
	@if grep -q "warning:" $(EXAMPLE)/TodoSync/build.log; then echo "the example's build printed warnings" >&2; exit 1; fi
	@if nm $(EXAMPLE)/TodoSync/.build/debug/todo-client | grep -q -e GRDB -e 16ServiceLifecycle -e 7FluxBus11Coordinator; then \
		echo "todo-client, on FluxBusClient only, links GRDB, ServiceLifecycle or the coordinator" >&2; exit 1; \
	else echo "ok: todo-client links neither GRDB, ServiceLifecycle nor the coordinator"; fi
	$(EXAMPLE)/TodoSync/run.sh .build/debug/fluxbus $(EXAMPLE)/TodoSync/.build/debug

# The API reference: DocC for Flux, FluxStores, FluxBusProtocol, FluxBusClient and FluxBus, from the debug build's
# symbol graphs, into .build-docs/MODULE.doccarchive. Fails on any DocC warning. Needs `swift build` first; 12 to 25 s.
docs:
	scripts/api-docs.sh

# Deterministic simulation beyond the fixed set in `make test`: SEEDS seeds from FIRST (docs/ARCHITECTURE.md,
# "Simulation"). A failure prints its seed; `make simulate SEED=S` replays that one seed exactly.
SEEDS ?= 1000
FIRST ?= 1
simulate:
	$(SWIFT) build --build-tests
	SWIFT_DETERMINISTIC_HASHING=1 FLUXBUS_SIM_SEEDS=$(SEEDS) FLUXBUS_SIM_FIRST_SEED=$(FIRST) $(if $(SEED),FLUXBUS_SIM_SEED=$(SEED)) \
		$(SWIFT) test --skip-build --filter 'SimulationTests.invariantsHold'

# The deployment files: the systemd units with `systemd-analyze verify` (skipped where it is absent), and the
# scripts with shellcheck where it is installed.
verify-deploy:
	@deploy/systemd/verify-units.sh
	@if command -v shellcheck >/dev/null 2>&1; then \
		shellcheck deploy/*.sh deploy/systemd/*.sh && echo "ok: shellcheck deploy/*.sh deploy/systemd/*.sh"; \
	else \
		echo "skipped: shellcheck not found (apt-get install shellcheck)"; \
	fi

demo: deps-system
	$(SWIFT) run -c release fluxbus demo

# libFuzzer on the codec (docs/SECURITY.md): CodecFuzzer built for release with libFuzzer and AddressSanitizer in its
# own scratch path, then a fixed, seeded run that starts from the committed seed corpus. New inputs go to
# .build-fuzz/corpus, crash inputs to .build-fuzz/. `make test` runs it last (about 16 s): see docs/SECURITY.md.
FUZZ_RUNS ?= 200000
FUZZ_SEED ?= 1
fuzz:
	$(SWIFT) build -c release --product CodecFuzzer --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
	mkdir -p .build-fuzz/corpus
	.build-fuzz/release/CodecFuzzer -runs=$(FUZZ_RUNS) -seed=$(FUZZ_SEED) -print_final_stats=1 -artifact_prefix=.build-fuzz/ \
		.build-fuzz/corpus Tests/Fuzz/corpus

# Benchmarks: in process, and on a coordinator and workers started on this machine (see docs/BENCHMARKS.md).
bench: deps-system
	$(SWIFT) run -c release fluxbus bench

clean:
	rm -rf .build .build-fuzz $(VENV)
