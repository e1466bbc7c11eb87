# FluxBus — every command a user or CI needs. `make test` is what CI runs (.ci/run).
SWIFT ?= swift
VENV  := .venv

.PHONY: deps test verify-deploy demo build release bench clean

# Install what a fresh Debian machine with Swift lacks: libzmq (and pkg-config to find it).
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libzmq; then \
		echo "==> installing libzmq3-dev and pkg-config with apt"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libzmq3-dev pkg-config; \
	fi
	@pkg-config --modversion libzmq | sed 's/^/==> libzmq /'

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# The whole test suite, one test at a time: CPU-bound tests (the fuzzer) would otherwise starve the two threads
# of the cooperative pool that the networked tests need.
test: deps
	$(SWIFT) build --build-tests
	@$(MAKE) --no-print-directory verify-deploy
	$(SWIFT) test --skip-build --no-parallel

# The deployment files: the systemd units with `systemd-analyze verify` (skipped where it is absent), and the
# scripts with shellcheck where it is installed.
verify-deploy:
	@deploy/systemd/verify-units.sh
	@if command -v shellcheck >/dev/null 2>&1; then \
		shellcheck deploy/*.sh deploy/systemd/*.sh && echo "ok: shellcheck deploy/*.sh deploy/systemd/*.sh"; \
	else \
		echo "skipped: shellcheck not found (apt-get install shellcheck)"; \
	fi

demo: deps
	$(SWIFT) run -c release fluxbus demo

# In-process benchmarks (see docs/BENCHMARKS.md).
bench: deps
	$(SWIFT) run -c release fluxbus bench

clean:
	rm -rf .build $(VENV)
